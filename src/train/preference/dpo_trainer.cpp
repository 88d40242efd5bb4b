// train_dpo: the cookbook's DPO loop (preference/train_dpo.py) on a TrainingRun: reference
// logprobs from the run's initial weights, tinker::losses::dpo through forward_backward_custom.
#include <tinker/error.hpp>
#include <tinker/losses.hpp>
#include <tinker/train/preference.hpp>
#include <tinker/train/supervised.hpp>

#include <charconv>
#include <cmath>
#include <string>

namespace tinker::train {
namespace {
namespace dpo_training {

namespace asio = boost::asio;

std::string json_number(double value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

std::string config_json(const PreferenceOptions& options, std::int64_t total_steps, std::size_t pairs) {
  return std::string("{\"trainer\":\"dpo\",\"base_model\":\"") + options.run.base_model +
         "\",\"lora_rank\":" + std::to_string(options.run.lora_rank) +
         ",\"learning_rate\":" + json_number(options.learning_rate) + ",\"lr_schedule\":\"" +
         std::string(to_string(options.lr_schedule.shape)) +
         "\",\"warmup_steps\":" + std::to_string(options.lr_schedule.warmup_steps) +
         ",\"dpo_beta\":" + json_number(options.beta) + ",\"batch_size\":" + std::to_string(options.batch_size) +
         ",\"num_pairs\":" + std::to_string(pairs) + ",\"num_epochs\":" + std::to_string(options.num_epochs) +
         ",\"total_steps\":" + std::to_string(total_steps) + ",\"data_seed\":" + std::to_string(options.data_seed) +
         ",\"shuffle\":" + (options.shuffle ? "true" : "false") +
         ",\"save_every\":" + std::to_string(options.run.save_every) + "}";
}

void check_options(const PreferenceOptions& options, std::size_t datums) {
  const auto refuse = [](const std::string& message) { throw tinker::error(errc::invalid_argument, message); };
  if (datums == 0 || datums % 2 != 0) {
    refuse("train_dpo: pairs must hold chosen/rejected datums in pairs, got " + std::to_string(datums) + " datums");
  }
  if (options.batch_size < 1) refuse("PreferenceOptions::batch_size must be >= 1, got 0");
  if (options.num_epochs < 1) {
    refuse("PreferenceOptions::num_epochs must be >= 1, got " + std::to_string(options.num_epochs));
  }
  if (options.max_steps && *options.max_steps < 1) {
    refuse("PreferenceOptions::max_steps must be >= 1, got " + std::to_string(*options.max_steps));
  }
  if (!(options.beta > 0.0) || !std::isfinite(options.beta)) {
    refuse("PreferenceOptions::beta must be a positive number, got " + json_number(options.beta));
  }
  if (!(options.learning_rate > 0.0) || !std::isfinite(options.learning_rate)) {
    refuse("PreferenceOptions::learning_rate must be a positive number, got " + json_number(options.learning_rate));
  }
}

// The record of the reference weights: the step-0 checkpoint with sampler weights.
std::optional<CheckpointRecord> find_reference(const RunDirectory& directory) {
  for (CheckpointRecord& record : directory.read_checkpoints()) {
    if (record.step == 0 && record.sampler_path) return std::move(record);
  }
  return std::nullopt;
}

// The steps of one attempt, on the run's current training client.
class DpoLoop {
 public:
  DpoLoop(TrainingRun& run, const std::vector<Datum>& pairs, const PreferenceOptions& options, SamplingClient reference,
          std::int64_t total_steps)
      : run_(run),
        pairs_(pairs),
        options_(options),
        reference_(std::move(reference)),
        order_(pairs.size() / 2, options.batch_size, options.data_seed, options.shuffle),
        total_steps_(total_steps) {}

  std::optional<double> first_margin;
  std::optional<double> last_margin;

  asio::awaitable<void> train_from(std::int64_t first_step) {
    for (std::int64_t step = first_step; step < total_steps_; ++step) {
      co_await train_step(step);
      const std::int64_t steps_done = step + 1;
      if (steps_done < total_steps_ && run_.checkpoint_due(steps_done)) co_await run_.save_checkpoint(steps_done);
    }
  }

 private:
  asio::awaitable<void> train_step(std::int64_t step) {
    StepMetrics metrics(step);
    const double learning_rate = options_.lr_schedule.learning_rate(options_.learning_rate, step, total_steps_);
    metrics.set("epoch", static_cast<double>(order_.epoch_of(step)));
    metrics.set("progress", static_cast<double>(step) / static_cast<double>(total_steps_));
    metrics.set("learning_rate", learning_rate);
    std::vector<Datum> batch;
    double tokens = 0.0;
    for (std::size_t pair : order_.batch(step)) {
      batch.push_back(pairs_[2 * pair]);
      batch.push_back(pairs_[2 * pair + 1]);
      tokens += static_cast<double>(batch[batch.size() - 2].model_input.length() + batch.back().model_input.length());
    }
    // The reference scores each batch afresh (as the cookbook does): a pure function of the batch,
    // so a resumed run needs nothing but the reference checkpoint.
    losses::ReferenceLogprobs reference = co_await losses::async_reference_logprobs(reference_, batch, use_awaitable);
    const CustomLossFunction loss = losses::dpo(std::move(reference), options_.beta);
    AdamParams adam = options_.adam;
    adam.learning_rate = learning_rate;
    const TrainingClient training = run_.training();
    auto gradients = co_await training.async_forward_backward_custom(batch, loss, use_awaitable);
    auto update = co_await training.async_optim_step(adam, use_awaitable);
    const ForwardBackwardOutput output = co_await gradients.async_get(use_awaitable);
    const OptimStepResponse applied = co_await update.async_get(use_awaitable);
    for (const auto& [key, value] : output.metrics) metrics.set(key, value);
    metrics.set("num_tokens", tokens);
    if (applied.metrics) {
      for (const auto& [key, value] : *applied.metrics) metrics.set(key, value);
    }
    if (const auto margin = metrics.get("margin")) {
      if (!first_margin) first_margin = *margin;
      last_margin = *margin;
    }
    run_.log_step(std::move(metrics));
  }

  TrainingRun& run_;
  const std::vector<Datum>& pairs_;
  const PreferenceOptions& options_;
  SamplingClient reference_;
  BatchOrder order_;
  std::int64_t total_steps_;
};

}  // namespace dpo_training
}  // namespace

boost::asio::awaitable<PreferenceSummary> train_dpo(ServiceClient& service, std::vector<Datum> pairs,
                                                    PreferenceOptions options) {
  dpo_training::check_options(options, pairs.size());
  const BatchOrder order(pairs.size() / 2, options.batch_size, options.data_seed, options.shuffle);
  const std::int64_t total_steps = options.max_steps.value_or(options.num_epochs * order.batches_per_epoch());
  options.run.total_steps = total_steps;
  if (options.run.config_json == "{}") {
    options.run.config_json = dpo_training::config_json(options, total_steps, pairs.size() / 2);
  }

  TrainingRun run = co_await TrainingRun::open(service, options.run);
  PreferenceSummary summary;
  summary.start_step = run.start_step();
  summary.total_steps = total_steps;
  summary.reference = dpo_training::find_reference(run.directory());
  if (!summary.reference) {
    if (run.start_step() != 0) {
      throw tinker::error(errc::invalid_argument, "train_dpo: " + options.run.log_path.string() + " resumes at step " +
                                                      std::to_string(run.start_step()) +
                                                      " but has no step-0 checkpoint with sampler weights to "
                                                      "serve as the DPO reference");
    }
    // The initial weights, kept: the reference of this run and of every resumption of it.
    summary.reference = co_await run.save_checkpoint(0, true);
  }
  if (run.start_step() >= total_steps) {
    summary.final_checkpoint = get_last_checkpoint(options.run.log_path);
    co_return summary;
  }
  SamplingSource reference_source = SamplingSource::from_model_path(*summary.reference->sampler_path);
  SamplingClient reference = co_await service.async_create_sampling_client(std::move(reference_source), use_awaitable);

  dpo_training::DpoLoop loop(run, pairs, options, std::move(reference), total_steps);
  co_await run.train_with_recovery([&loop](std::int64_t first_step) { return loop.train_from(first_step); });
  summary.recoveries = run.recoveries();
  summary.first_margin = loop.first_margin;
  summary.last_margin = loop.last_margin;
  summary.final_checkpoint = co_await run.finish();
  co_return summary;
}

boost::asio::awaitable<StepMetrics> evaluate_dpo(SamplingClient policy, SamplingClient reference,
                                                 std::vector<Datum> pairs, double beta) {
  const losses::ReferenceLogprobs policy_logprobs =
      co_await losses::async_reference_logprobs(policy, pairs, use_awaitable);
  const losses::ReferenceLogprobs reference_logprobs =
      co_await losses::async_reference_logprobs(reference, pairs, use_awaitable);
  const CustomLossOutput scored = losses::dpo_loss(pairs, policy_logprobs, reference_logprobs, beta);
  StepMetrics metrics;
  for (const auto& [key, value] : scored.metrics) metrics.set(key, value);
  co_return metrics;
}

}  // namespace tinker::train
