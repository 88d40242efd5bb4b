#include "programs/bench/training_data.hpp"

#include <boost/asio/use_awaitable.hpp>

namespace tinker::bench {

bool known_loss(const std::string& loss) {
  return loss == loss_fn::cross_entropy || loss == loss_fn::importance_sampling || loss == loss_fn::ppo ||
         loss == loss_fn::cispo;
}

Datum make_datum(std::int64_t tokens, std::int64_t salt, const std::string& loss) {
  const std::vector<TokenId> ids = token_ids(tokens + 1, salt);
  const std::vector<TokenId> input(ids.begin(), ids.end() - 1);
  const std::vector<TokenId> targets(ids.begin() + 1, ids.end());
  LossFnInputs inputs;
  inputs["target_tokens"] = TensorData::from_tokens(targets);
  const auto count = static_cast<std::size_t>(tokens);
  if (loss == loss_fn::cross_entropy) {
    inputs["weights"] = TensorData(std::vector<float>(count, 1.0f));
  } else {
    std::vector<float> advantages(count);
    for (std::size_t i = 0; i < count; ++i)
      advantages[i] = (i + static_cast<std::size_t>(salt)) % 2 == 0 ? 0.5f : -0.5f;
    inputs["logprobs"] = TensorData(std::vector<float>(count, -2.0f));
    inputs["advantages"] = TensorData(std::move(advantages));
  }
  return Datum(ModelInput::from_ints(input), std::move(inputs));
}

std::vector<Datum> make_batch(std::int64_t batch, std::int64_t tokens, const std::string& loss) {
  std::vector<Datum> data;
  data.reserve(static_cast<std::size_t>(batch));
  for (std::int64_t i = 0; i < batch; ++i) data.push_back(make_datum(tokens, i, loss));
  return data;
}

Datum rl_datum(const std::vector<TokenId>& prompt, const SampledSequence& sequence, float advantage) {
  std::vector<TokenId> all = prompt;
  all.insert(all.end(), sequence.tokens.begin(), sequence.tokens.end());
  const std::size_t predicted = all.size() - 1;
  const std::size_t prompt_predictions = prompt.size() - 1;  // positions whose target is still prompt
  std::vector<float> logprobs(predicted, 0.0f);
  std::vector<float> advantages(predicted, 0.0f);
  for (std::size_t i = 0; i < sequence.tokens.size(); ++i) {
    if (sequence.logprobs && i < sequence.logprobs->size()) logprobs[prompt_predictions + i] = (*sequence.logprobs)[i];
    advantages[prompt_predictions + i] = advantage;
  }
  LossFnInputs inputs;
  inputs["target_tokens"] = TensorData::from_tokens(std::vector<TokenId>(all.begin() + 1, all.end()));
  inputs["logprobs"] = TensorData(std::move(logprobs));
  inputs["advantages"] = TensorData(std::move(advantages));
  return Datum(ModelInput::from_ints(std::vector<TokenId>(all.begin(), all.end() - 1)), std::move(inputs));
}

boost::asio::awaitable<TrainingClient> create_training_client(Bench* bench) {
  const LoraTrainingOptions options(bench->target.base_model, bench->target.lora_rank);
  co_return co_await bench->service.async_create_lora_training_client(options, boost::asio::use_awaitable);
}

}  // namespace tinker::bench
