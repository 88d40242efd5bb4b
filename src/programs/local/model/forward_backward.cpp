// forward_backward / forward_base: validation, the forward pass, the losses and the gradients.
#include "programs/local/model/losses.hpp"
#include "programs/local/model/tiny_lm_internal.hpp"

#include <optional>

namespace tinker::local::model {
namespace {

// Runs every datum through `weights`. With `lora_grads` non-null, the gradients of the summed
// loss with respect to `lora`'s parameters are added to it. Throws UserError before computing
// anything if the input is invalid.
ForwardBackwardOutput run(const BaseModel& base, const LoraState::Impl* lora, const ForwardBackwardInput& input,
                          std::vector<double>* lora_grads) {
  const LossConfig config = parse_loss_config(input);
  const std::vector<DatumInputs> data = validate_data(input, config, base.arch());
  const int vocab = base.arch().vocab_size;
  const bool backprop = lora_grads != nullptr && lora != nullptr;

  const EffectiveWeights weights(base, lora);
  std::optional<WeightGrads> weight_grads;
  if (backprop) weight_grads.emplace(weights, *lora);

  ForwardBackwardOutput output;
  output.loss_fn_output_type = "ArrayRecord";
  double total_loss = 0.0;
  for (const DatumInputs& datum : data) {
    const std::size_t n = datum.sequence.size();
    const std::size_t k = datum.targets_per_position;
    Activations acts(base.arch(), backprop);
    // Backprop needs every position's distribution; a forward pass only the current one.
    std::vector<double> all_logprobs(backprop ? n * static_cast<std::size_t>(vocab) : static_cast<std::size_t>(vocab));
    std::vector<float> logprobs(n * k);
    std::vector<float> losses(n * k);
    std::vector<double> dlogprob(n * k);
    for (std::size_t t = 0; t < n; ++t) {
      double* distribution = all_logprobs.data() + (backprop ? t * static_cast<std::size_t>(vocab) : 0);
      step(weights, datum.sequence, t, acts, distribution);
      for (std::size_t i = t * k; i < (t + 1) * k; ++i) {
        const double p = distribution[datum.targets[i]];
        const TokenLoss loss = token_loss(config, datum, i, p);
        logprobs[i] = static_cast<float>(p);
        losses[i] = static_cast<float>(loss.loss);
        dlogprob[i] = loss.dloss_dlogprob;
        total_loss += loss.loss;
      }
    }
    if (backprop) backward(weights, acts, datum.targets, all_logprobs, dlogprob, *weight_grads);
    // Outputs have the shape of target_tokens: (N,) or (N, K).
    std::vector<std::int64_t> shape{static_cast<std::int64_t>(n)};
    if (datum.two_dimensional) shape.push_back(static_cast<std::int64_t>(k));
    LossFnOutput record;
    record.emplace("logprobs", TensorData(std::move(logprobs), shape));
    record.emplace("elementwise_loss", TensorData(std::move(losses), shape));
    output.loss_fn_outputs.push_back(std::move(record));
  }
  output.metrics["loss:sum"] = total_loss;

  if (backprop) {
    // Accumulate into a scratch vector first, so a failure midway leaves the state untouched.
    std::vector<double> call_grads(lora->params.size(), 0.0);
    accumulate_lora_grads(*lora, *weight_grads, call_grads);
    for (std::size_t i = 0; i < call_grads.size(); ++i) (*lora_grads)[i] += call_grads[i];
  }
  return output;
}

}  // namespace

ForwardBackwardOutput forward_backward(const BaseModel& base, LoraState& lora, const ForwardBackwardInput& input,
                                       bool forward_only) {
  LoraState::Impl& impl = lora.impl();
  check_same_architecture(base, impl);
  return run(base, &impl, input, forward_only ? nullptr : &impl.grads);
}

ForwardBackwardOutput forward_base(const BaseModel& base, const ForwardBackwardInput& input) {
  return run(base, nullptr, input, nullptr);
}

}  // namespace tinker::local::model
