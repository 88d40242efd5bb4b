// train (doc/bench.md#train): pipelined steps of forward_backward + optim_step on a batch of `batch` examples of
// `tokens` tokens, with `depth` steps submitted before the oldest is awaited.
#include "programs/bench/scenarios.hpp"
#include "programs/bench/tokens.hpp"
#include "programs/bench/training_data.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <deque>

namespace tinker::bench {
namespace {

namespace asio = boost::asio;

class StepInFlight {
 public:
  Future<ForwardBackwardOutput> gradients;
  Future<OptimStepResponse> update;
  double submit_ms = 0;  ///< the caller's time in the two submits
};

class TrainRecord : public Outcomes {
 public:
  std::vector<double> encode_ms, submit_ms, wait_ms;
  std::uint64_t body_bytes = 0;
  double encode_seconds = 0;
  std::uint64_t gradient_bytes = 0;    ///< forward_backward bodies
  double gradient_submit_seconds = 0;  ///< forward_backward calls until accepted
};

asio::awaitable<void> submit_step(TrainingClient* training, ForwardBackwardInput input, TrainRecord* record,
                                  std::deque<StepInFlight>* pipeline) {
  diagnostics diag;
  const Clock::time_point called = Clock::now();
  auto [gradients_ec, gradients] =
      co_await training->async_forward_backward(std::move(input), diag, as_tuple_awaitable);
  if (gradients_ec) co_return record->fail(gradients_ec, diag);
  const AdamParams adam(1e-4);
  auto [update_ec, update] = co_await training->async_optim_step(adam, diag, as_tuple_awaitable);
  if (update_ec) co_return record->fail(update_ec, diag);
  StepInFlight step;
  step.submit_ms = ms_between(called, Clock::now());
  step.gradients = std::move(gradients);
  step.update = std::move(update);
  pipeline->push_back(std::move(step));
}

void note_costs(const StepInFlight& step, TrainRecord& record) {
  const FutureStatus gradients = step.gradients.status();
  const FutureStatus update = step.update.status();
  const auto encode = gradients.encode_time + update.encode_time;
  record.encode_ms.push_back(std::chrono::duration<double, std::milli>(encode).count());
  record.encode_seconds += std::chrono::duration<double>(encode).count();
  record.body_bytes += gradients.body_bytes + update.body_bytes;
  record.gradient_bytes += gradients.body_bytes;
  if (gradients.submit_time)
    record.gradient_submit_seconds += std::chrono::duration<double>(*gradients.submit_time).count();
}

asio::awaitable<void> finish_step(Bench* bench, std::deque<StepInFlight>* pipeline, TrainRecord* record) {
  StepInFlight step = std::move(pipeline->front());
  pipeline->pop_front();
  diagnostics diag;
  const Clock::time_point waiting = Clock::now();
  auto [gradients_ec, output] = co_await step.gradients.async_get(diag, as_tuple_awaitable);
  if (gradients_ec) co_return record->fail(gradients_ec, diag);
  auto [update_ec, response] = co_await step.update.async_get(diag, as_tuple_awaitable);
  if (update_ec) co_return record->fail(update_ec, diag);
  record->wait_ms.push_back(ms_between(waiting, Clock::now()));
  record->submit_ms.push_back(step.submit_ms);
  note_costs(step, *record);
  ++record->completed;
  bench->progress.advance();
}

void write_train(const TrainSettings& settings, const Bench& bench, const TrainRecord& record, const Meter& meter,
                 Report& report) {
  const double wall = meter.wall_seconds();
  const auto completed = static_cast<double>(record.completed);
  report.set("steps_completed", record.completed);
  report.set("failed", record.failed);
  report.set("steps_per_s", per(completed, wall));
  report.set("tokens_per_s", per(completed * static_cast<double>(settings.batch * settings.tokens), wall));
  report.set_distribution("encode_ms", Percentiles(record.encode_ms));
  report.set_distribution("submit_ms", Percentiles(record.submit_ms));
  report.set_distribution("wait_ms", Percentiles(record.wait_ms));
  // Null model: every result exists when its operation is accepted, so the wait is what the client adds.
  if (bench.target.null_model) {
    report.set_distribution("result_delay_ms", Percentiles(record.wait_ms));
  } else {
    report.set_null("result_delay_ms");
  }
  report.set("body_bytes_per_step", per(static_cast<double>(record.body_bytes), completed));
  report.set("encode_gb_per_s", per(static_cast<double>(record.body_bytes), record.encode_seconds) / 1e9);
  report.set("submit_gb_per_s", record.gradient_submit_seconds > 0
                                    ? static_cast<double>(record.gradient_bytes) / record.gradient_submit_seconds / 1e9
                                    : 0.0);
  report.set("client_cpu_ms_per_step", per(meter.cpu_seconds() * 1e3, completed));
  report.set_text("first_error", record.first_error);
}

}  // namespace

asio::awaitable<void> run_train(Bench* bench, TrainSettings settings, Report* report, Meter* meter) {
  boost::json::object params;
  params["steps"] = settings.steps;
  params["batch"] = settings.batch;
  params["tokens"] = settings.tokens;
  params["depth"] = settings.depth;
  params["loss"] = settings.loss.c_str();
  params["lora_rank"] = bench->target.lora_rank;
  report->set("params", std::move(params));
  TrainingClient training = co_await create_training_client(bench);
  const std::vector<Datum> batch = make_batch(settings.batch, settings.tokens, settings.loss);

  TrainRecord record;
  std::deque<StepInFlight> pipeline;
  bench->progress.begin("train", settings.steps);
  meter->start(*bench);
  for (std::int64_t step = 0; step < settings.steps && record.failed == 0 && !bench->interrupted(); ++step) {
    ForwardBackwardInput input(batch, settings.loss);  // the copy a loop building a fresh batch per step makes
    co_await submit_step(&training, std::move(input), &record, &pipeline);
    while (!pipeline.empty() && static_cast<std::int64_t>(pipeline.size()) >= settings.depth) {
      co_await finish_step(bench, &pipeline, &record);
    }
  }
  while (!pipeline.empty()) co_await finish_step(bench, &pipeline, &record);
  meter->stop(*bench);
  bench->progress.end();
  write_train(settings, *bench, record, *meter, *report);
}

}  // namespace tinker::bench
