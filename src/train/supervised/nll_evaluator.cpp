// The held-out NLL: mean negative log-likelihood per trained token, scored with `forward`.
#include <tinker/error.hpp>
#include <tinker/train/supervised.hpp>

#include <limits>

namespace tinker::train {

double mean_nll(const std::vector<Datum>& data, const ForwardBackwardOutput& output) {
  double loss = 0.0;
  double weight = 0.0;
  for (std::size_t i = 0; i < data.size() && i < output.loss_fn_outputs.size(); ++i) {
    const auto weights_input = data[i].loss_fn_inputs.find("weights");
    const auto logprobs_output = output.loss_fn_outputs[i].find("logprobs");
    if (weights_input == data[i].loss_fn_inputs.end() || logprobs_output == output.loss_fn_outputs[i].end()) continue;
    const std::vector<float> weights = weights_input->second.to_dense_floats();
    const std::vector<float> logprobs = logprobs_output->second.to_dense_floats();
    for (std::size_t t = 0; t < weights.size() && t < logprobs.size(); ++t) {
      loss -= static_cast<double>(weights[t]) * logprobs[t];
      weight += weights[t];
    }
  }
  return weight == 0.0 ? std::numeric_limits<double>::quiet_NaN() : loss / weight;
}

NllEvaluator::NllEvaluator(std::vector<Datum> data, std::string name)
    : data_(std::make_shared<const std::vector<Datum>>(std::move(data))), name_(std::move(name)) {
  if (data_->empty()) throw tinker::error(errc::invalid_argument, "NllEvaluator: no data to score");
}

boost::asio::awaitable<StepMetrics> NllEvaluator::evaluate(const TrainingClient& training) {
  // Copies first: the caller's references need not outlive this coroutine's first suspension.
  const TrainingClient client = training;
  const std::shared_ptr<const std::vector<Datum>> data = data_;
  const std::string key = name_ + "/nll";
  // The forward request is the first thing submitted (it takes its turn before this suspends),
  // so the trainer can start this between two steps and know which weights it scores.
  const ForwardBackwardInput input(*data, loss_fn::cross_entropy);
  auto scoring = co_await client.async_forward(input, use_awaitable);
  const ForwardBackwardOutput output = co_await scoring.async_get(use_awaitable);
  StepMetrics metrics;
  metrics.set(key, mean_nll(*data, output));
  co_return metrics;
}

}  // namespace tinker::train
