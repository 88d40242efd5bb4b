// sample and logprobs (doc/bench.md#sample, doc/bench.md#logprobs): a storm of `requests` calls with `in_flight`
// of them outstanding, each awaited to its result.
#include "programs/bench/scenarios.hpp"
#include "programs/bench/tokens.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace tinker::bench {
namespace {

namespace asio = boost::asio;

// The shared state of one storm's workers (all on the io thread).
class Storm : public Outcomes {
 public:
  Storm(Bench* bench_, std::int64_t total_) : bench(bench_), total(total_) {}

  /// Claims the next call; false when all are claimed or Ctrl-C was pressed.
  bool take() {
    if (next >= total || bench->interrupted()) return false;
    ++next;
    return true;
  }

  void note_failure(const boost::system::error_code& ec, const diagnostics& diag) {
    fail(ec, diag);
    bench->progress.advance();
  }

  // `called` until the caller held the future, until it held the result.
  void note_done(const FutureStatus& status, Clock::time_point called, Clock::time_point accepted,
                 Clock::time_point resolved) {
    ++completed;
    submit_ms.push_back(
        std::chrono::duration<double, std::milli>(status.submit_time.value_or(accepted - called)).count());
    result_ms.push_back(ms_between(accepted, resolved));
    total_ms.push_back(ms_between(called, resolved));
    encode_us.push_back(std::chrono::duration<double, std::micro>(status.encode_time).count());
    body_bytes += status.body_bytes;
    bench->progress.advance();
  }

  Bench* bench;
  std::int64_t total;
  std::int64_t next = 0;
  std::int64_t sequences = 0;
  std::int64_t generated_tokens = 0;
  std::uint64_t body_bytes = 0;
  std::vector<double> submit_ms, result_ms, total_ms, encode_us;
};

asio::awaitable<void> sample_worker(Storm* storm, SamplingClient sampler, ModelInput prompt, std::int64_t num_samples,
                                    SamplingParams params, SampleOptions options) {
  while (storm->take()) {
    diagnostics diag;
    const Clock::time_point called = Clock::now();
    auto [ec, future] = co_await sampler.async_sample(prompt, num_samples, params, options, diag, as_tuple_awaitable);
    if (ec) {
      storm->note_failure(ec, diag);
      continue;
    }
    const Clock::time_point accepted = Clock::now();
    auto [wait_ec, response] = co_await future.async_get(diag, as_tuple_awaitable);
    if (wait_ec) {
      storm->note_failure(wait_ec, diag);
      continue;
    }
    storm->note_done(future.status(), called, accepted, Clock::now());
    storm->sequences += static_cast<std::int64_t>(response.sequences.size());
    for (const SampledSequence& sequence : response.sequences) {
      storm->generated_tokens += static_cast<std::int64_t>(sequence.tokens.size());
    }
  }
}

asio::awaitable<void> logprobs_worker(Storm* storm, SamplingClient sampler, ModelInput prompt) {
  while (storm->take()) {
    diagnostics diag;
    const Clock::time_point called = Clock::now();
    auto [ec, future] = co_await sampler.async_compute_logprobs(prompt, diag, as_tuple_awaitable);
    if (ec) {
      storm->note_failure(ec, diag);
      continue;
    }
    const Clock::time_point accepted = Clock::now();
    auto [wait_ec, logprobs] = co_await future.async_get(diag, as_tuple_awaitable);
    if (wait_ec) {
      storm->note_failure(wait_ec, diag);
      continue;
    }
    storm->note_done(future.status(), called, accepted, Clock::now());
  }
}

asio::awaitable<SamplingClient> base_model_sampler(Bench* bench) {
  const SamplingSource source = SamplingSource::from_base_model(bench->target.base_model);
  co_return co_await bench->service.async_create_sampling_client(source, asio::use_awaitable);
}

// The figures every storm reports: completions, failures, rates and the latency split.
void write_storm(const Storm& storm, const Meter& meter, Report& report) {
  const double wall = meter.wall_seconds();
  report.set("completed", storm.completed);
  report.set("failed", storm.failed);
  report.set("requests_per_s", per(static_cast<double>(storm.completed), wall));
  report.set_distribution("submit_ms", Percentiles(storm.submit_ms));
  report.set_distribution("result_ms", Percentiles(storm.result_ms));
  report.set_distribution("total_ms", Percentiles(storm.total_ms));
  report.set_distribution("encode_us", Percentiles(storm.encode_us));
  report.set("body_bytes_per_request",
             per(static_cast<double>(storm.body_bytes), static_cast<double>(storm.completed)));
  report.set_text("first_error", storm.first_error);
}

}  // namespace

asio::awaitable<void> run_sample(Bench* bench, SampleSettings settings, Report* report, Meter* meter) {
  boost::json::object params;
  params["requests"] = settings.requests;
  params["in_flight"] = settings.in_flight;
  params["prompt_tokens"] = settings.prompt_tokens;
  params["num_samples"] = settings.num_samples;
  params["max_tokens"] = settings.max_tokens;
  params["prompt_logprobs"] = settings.prompt_logprobs;
  report->set("params", std::move(params));
  SamplingClient sampler = co_await base_model_sampler(bench);
  const ModelInput prompt = ModelInput::from_ints(token_ids(settings.prompt_tokens, 1));
  SamplingParams sampling(settings.max_tokens, 1.0);
  sampling.seed = 1;
  const SampleOptions options(settings.prompt_logprobs);

  Storm storm(bench, settings.requests);
  bench->progress.begin("sample", settings.requests);
  meter->start(*bench);
  WorkerGroup workers(bench->io.get_executor());
  for (std::int64_t i = 0; i < std::min(settings.in_flight, settings.requests); ++i) {
    workers.spawn(sample_worker(&storm, sampler, prompt, settings.num_samples, sampling, options));
  }
  co_await workers.wait();
  meter->stop(*bench);
  bench->progress.end();

  const double wall = meter->wall_seconds();
  report->set("samples", storm.sequences);
  report->set("samples_per_s", per(static_cast<double>(storm.sequences), wall));
  report->set("generated_tokens_per_s", per(static_cast<double>(storm.generated_tokens), wall));
  report->set("prompt_tokens_per_s", per(static_cast<double>(storm.completed * settings.prompt_tokens), wall));
  report->set("client_cpu_us_per_sample", per(meter->cpu_seconds() * 1e6, static_cast<double>(storm.sequences)));
  write_storm(storm, *meter, *report);
  if (settings.compare_raw) co_await run_compare_raw(bench, settings, sampler, report);
}

asio::awaitable<void> run_logprobs(Bench* bench, LogprobsSettings settings, Report* report, Meter* meter) {
  boost::json::object params;
  params["requests"] = settings.requests;
  params["in_flight"] = settings.in_flight;
  params["prompt_tokens"] = settings.prompt_tokens;
  report->set("params", std::move(params));
  SamplingClient sampler = co_await base_model_sampler(bench);
  const ModelInput prompt = ModelInput::from_ints(token_ids(settings.prompt_tokens, 2));

  Storm storm(bench, settings.requests);
  bench->progress.begin("logprobs", settings.requests);
  meter->start(*bench);
  WorkerGroup workers(bench->io.get_executor());
  for (std::int64_t i = 0; i < std::min(settings.in_flight, settings.requests); ++i) {
    workers.spawn(logprobs_worker(&storm, sampler, prompt));
  }
  co_await workers.wait();
  meter->stop(*bench);
  bench->progress.end();

  const double wall = meter->wall_seconds();
  report->set("prompt_tokens_per_s", per(static_cast<double>(storm.completed * settings.prompt_tokens), wall));
  report->set("client_cpu_us_per_request", per(meter->cpu_seconds() * 1e6, static_cast<double>(storm.completed)));
  write_storm(storm, *meter, *report);
}

}  // namespace tinker::bench
