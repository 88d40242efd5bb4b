// rl (doc/bench.md#rl): the RL loop's shape. Each iteration samples `group_size` continuations of each of `prompts`
// prompts (all at once), trains one importance-sampling step on them, and makes a fresh sampler from the new weights.
#include "programs/bench/scenarios.hpp"
#include "programs/bench/tokens.hpp"
#include "programs/bench/training_data.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace tinker::bench {
namespace {

namespace asio = boost::asio;

class Group {
 public:
  std::vector<TokenId> prompt;
  SampleResponse response;
};

class RlRecord : public Outcomes {
 public:
  std::int64_t samples = 0;
  std::int64_t trained_tokens = 0;
  double sampling_seconds = 0;
  std::vector<double> iteration_ms, sample_phase_ms, train_phase_ms, sampler_refresh_ms;
};

asio::awaitable<void> sample_group(SamplingClient sampler, RlSettings settings, Group* group, RlRecord* record) {
  SamplingParams params(settings.max_tokens, 1.0);
  const SampleOptions options;
  diagnostics diag;
  const ModelInput prompt = ModelInput::from_ints(group->prompt);
  auto [ec, future] =
      co_await sampler.async_sample(prompt, settings.group_size, params, options, diag, as_tuple_awaitable);
  if (ec) co_return record->fail(ec, diag);
  auto [wait_ec, response] = co_await future.async_get(diag, as_tuple_awaitable);
  if (wait_ec) co_return record->fail(wait_ec, diag);
  record->samples += static_cast<std::int64_t>(response.sequences.size());
  group->response = std::move(response);
}

// The sampling phase: every prompt's group in flight at once.
asio::awaitable<std::vector<Group>> sample_phase(Bench* bench, SamplingClient sampler, RlSettings settings,
                                                 std::int64_t iteration, RlRecord* record) {
  std::vector<Group> groups(static_cast<std::size_t>(settings.prompts));
  WorkerGroup workers(bench->io.get_executor());
  for (std::size_t i = 0; i < groups.size(); ++i) {
    groups[i].prompt = token_ids(settings.prompt_tokens, iteration * settings.prompts + static_cast<std::int64_t>(i));
    workers.spawn(sample_group(sampler, settings, &groups[i], record));
  }
  co_await workers.wait();
  co_return groups;
}

// Advantages centred per group, as the cookbook's do: here simply +1/-1 by halves.
std::vector<Datum> rl_batch(const std::vector<Group>& groups, RlRecord& record) {
  std::vector<Datum> data;
  for (const Group& group : groups) {
    const std::size_t n = group.response.sequences.size();
    for (std::size_t i = 0; i < n; ++i) {
      const float advantage = i < n / 2 ? 1.0f : -1.0f;
      data.push_back(rl_datum(group.prompt, group.response.sequences[i], advantage));
      record.trained_tokens += static_cast<std::int64_t>(data.back().model_input.to_ints().size());
    }
  }
  return data;
}

asio::awaitable<void> train_phase(TrainingClient* training, std::vector<Datum> data, RlRecord* record) {
  diagnostics diag;
  ForwardBackwardInput input(std::move(data), loss_fn::importance_sampling);
  auto [gradients_ec, gradients] =
      co_await training->async_forward_backward(std::move(input), diag, as_tuple_awaitable);
  if (gradients_ec) co_return record->fail(gradients_ec, diag);
  const AdamParams adam(4e-5);
  auto [update_ec, update] = co_await training->async_optim_step(adam, diag, as_tuple_awaitable);
  if (update_ec) co_return record->fail(update_ec, diag);
  auto [wait_ec, output] = co_await gradients.async_get(diag, as_tuple_awaitable);
  if (wait_ec) co_return record->fail(wait_ec, diag);
  auto [update_wait_ec, response] = co_await update.async_get(diag, as_tuple_awaitable);
  if (update_wait_ec) co_return record->fail(update_wait_ec, diag);
}

asio::awaitable<SamplingClient> fresh_sampler(TrainingClient* training, RlRecord* record) {
  diagnostics diag;
  auto [ec, sampler] = co_await training->async_save_weights_and_get_sampling_client(diag, as_tuple_awaitable);
  if (ec) record->fail(ec, diag);
  co_return sampler;
}

asio::awaitable<void> iterate(Bench* bench, TrainingClient* training, SamplingClient* sampler, RlSettings settings,
                              std::int64_t iteration, RlRecord* record) {
  const Clock::time_point started = Clock::now();
  std::vector<Group> groups = co_await sample_phase(bench, *sampler, settings, iteration, record);
  const Clock::time_point sampled = Clock::now();
  record->sampling_seconds += seconds_between(started, sampled);
  if (record->failed > 0) co_return;
  co_await train_phase(training, rl_batch(groups, *record), record);
  const Clock::time_point trained = Clock::now();
  if (record->failed > 0) co_return;
  *sampler = co_await fresh_sampler(training, record);
  const Clock::time_point refreshed = Clock::now();
  if (record->failed > 0) co_return;
  record->sample_phase_ms.push_back(ms_between(started, sampled));
  record->train_phase_ms.push_back(ms_between(sampled, trained));
  record->sampler_refresh_ms.push_back(ms_between(trained, refreshed));
  record->iteration_ms.push_back(ms_between(started, refreshed));
  ++record->completed;
  bench->progress.advance();
}

void write_rl(const RlRecord& record, const Meter& meter, Report& report) {
  const double wall = meter.wall_seconds();
  const auto completed = static_cast<double>(record.completed);
  report.set("iterations_completed", record.completed);
  report.set("failed", record.failed);
  report.set_distribution("iteration_ms", Percentiles(record.iteration_ms));
  report.set_distribution("sample_phase_ms", Percentiles(record.sample_phase_ms));
  report.set_distribution("train_phase_ms", Percentiles(record.train_phase_ms));
  report.set_distribution("sampler_refresh_ms", Percentiles(record.sampler_refresh_ms));
  report.set("samples_per_s_sampling", per(static_cast<double>(record.samples), record.sampling_seconds));
  report.set("trained_tokens_per_s", per(static_cast<double>(record.trained_tokens), wall));
  report.set("client_cpu_ms_per_iteration", per(meter.cpu_seconds() * 1e3, completed));
  report.set_text("first_error", record.first_error);
}

}  // namespace

asio::awaitable<void> run_rl(Bench* bench, RlSettings settings, Report* report, Meter* meter) {
  boost::json::object params;
  params["iterations"] = settings.iterations;
  params["prompts"] = settings.prompts;
  params["group_size"] = settings.group_size;
  params["prompt_tokens"] = settings.prompt_tokens;
  params["max_tokens"] = settings.max_tokens;
  params["loss"] = loss_fn::importance_sampling;
  params["lora_rank"] = bench->target.lora_rank;
  report->set("params", std::move(params));
  TrainingClient training = co_await create_training_client(bench);
  RlRecord record;
  SamplingClient sampler = co_await fresh_sampler(&training, &record);

  bench->progress.begin("rl", settings.iterations);
  meter->start(*bench);
  for (std::int64_t i = 0; i < settings.iterations && record.failed == 0 && !bench->interrupted(); ++i) {
    co_await iterate(bench, &training, &sampler, settings, i, &record);
  }
  meter->stop(*bench);
  bench->progress.end();
  write_rl(record, *meter, *report);
}

}  // namespace tinker::bench
