// The fault soak (doc/reliability.md#the-fault-soak): training with pipelined steps and periodic
// checkpoints, then sampling with a thousand requests in flight, against tinker-local injecting
// every fault kind it has into about 10% of the requests. The server's audit must show every
// training operation applied exactly once and in order, the losses must equal a clean run's with
// the same seed, and every sample must be answered exactly once.
//
// CI runs the small size; test/faults/long_soak.sh runs the long one through the same test:
//   TINKER_SOAK_STEPS (200), TINKER_SOAK_SAMPLES (2000), TINKER_SOAK_IN_FLIGHT (1000),
//   TINKER_SOAK_FAULT_RATE (0.10), TINKER_SOAK_SEED (1).
#include "faults/soak_support.hpp"

#include "integration/support/local_service.hpp"
#include "integration/support/training_data.hpp"

#include <tinker/tinker.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include <gtest/gtest.h>

#include <iostream>

namespace tinker::test {
namespace {

namespace asio = boost::asio;

class TrainingRun {
 public:
  std::string model_id;
  std::vector<double> losses;
  std::size_t operations = 0;  ///< forward_backward, optim_step and save_state calls made
};

asio::awaitable<TrainingClient> create_training(ServiceClient& service, std::uint64_t seed) {
  LoraTrainingOptions options(std::string(tiny_model), 4);
  options.seed = static_cast<std::int64_t>(seed);
  co_return co_await service.async_create_lora_training_client(options, use_awaitable);
}

class PendingStep {
 public:
  std::vector<Datum> batch;
  Future<ForwardBackwardOutput> gradients;
  Future<OptimStepResponse> update;
};

// Two steps in flight: step i is submitted before step i-1's results are awaited.
asio::awaitable<TrainingRun> pipelined_training(ServiceClient& service, SoakSize size) {
  TrainingClient training = co_await create_training(service, size.seed);
  TrainingRun run;
  run.model_id = training.model_id();
  SoakProgress progress("training", static_cast<std::size_t>(size.steps));
  std::optional<PendingStep> previous;
  for (int step = 0; step <= size.steps; ++step) {
    std::optional<PendingStep> current;
    if (step < size.steps) {
      current.emplace();
      current->batch = tiny_batch(4, 12, static_cast<std::uint32_t>(size.seed * 1000 + step));
      current->gradients = co_await training.async_forward_backward(
          ForwardBackwardInput(current->batch, loss_fn::cross_entropy), use_awaitable);
      current->update = co_await training.async_optim_step(AdamParams(1e-3), use_awaitable);
      run.operations += 2;
    }
    if (previous) {
      const ForwardBackwardOutput output = co_await previous->gradients.async_get(use_awaitable);
      co_await previous->update.async_get(use_awaitable);
      run.losses.push_back(mean_nll(previous->batch, output));
      progress.report(run.losses.size());
    }
    if (current && (step + 1) % size.checkpoint_every == 0) {
      auto saved =
          co_await training.async_save_state("soak-" + std::to_string(step + 1), SaveStateOptions(), use_awaitable);
      co_await saved.async_get(use_awaitable);
      ++run.operations;
    }
    previous = std::move(current);
  }
  co_return run;
}

class SampleTally {
 public:
  std::vector<int> answers;          ///< per request: how many times it completed (must be 1)
  std::vector<std::string> errors;   ///< per request: the error, if it failed
  std::vector<std::size_t> lengths;  ///< per request: sequences returned
  std::size_t next = 0;
};

asio::awaitable<void> sampling_worker(SamplingClient sampler, SampleTally& tally) {
  const SamplingParams params(3, 1.0);
  while (tally.next < tally.answers.size()) {
    const std::size_t index = tally.next++;
    std::vector<TokenId> prompt{static_cast<TokenId>(5 + index % 500), 17, 42};
    try {
      Future<SampleResponse> future =
          co_await sampler.async_sample(ModelInput::from_ints(prompt), 2, params, SampleOptions(), use_awaitable);
      const SampleResponse response = co_await future.async_get(use_awaitable);
      tally.lengths[index] = response.sequences.size();
    } catch (const error& e) {
      tally.errors[index] = e.what();
    }
    ++tally.answers[index];
  }
}

asio::awaitable<SampleTally> sampling_storm(ServiceClient& service, SoakSize size) {
  SamplingClient sampler = co_await service.async_create_sampling_client(
      SamplingSource::from_base_model(std::string(tiny_model)), use_awaitable);
  SampleTally tally;
  tally.answers.assign(static_cast<std::size_t>(size.samples), 0);
  tally.errors.resize(tally.answers.size());
  tally.lengths.assign(tally.answers.size(), 0);
  const auto executor = co_await asio::this_coro::executor;
  for (int worker = 0; worker < size.samples_in_flight; ++worker) {
    asio::co_spawn(executor, sampling_worker(sampler, tally), asio::detached);
  }
  asio::steady_timer tick(executor);
  SoakProgress progress("sampling", static_cast<std::size_t>(size.samples));
  for (;;) {
    const auto unanswered = static_cast<std::size_t>(std::count(tally.answers.begin(), tally.answers.end(), 0));
    progress.report(tally.answers.size() - unanswered);
    if (unanswered == 0) break;
    tick.expires_after(std::chrono::milliseconds(20));
    co_await tick.async_wait(use_awaitable);
  }
  co_return tally;
}

class FaultSoak : public LocalService {
 protected:
  local::ServerOptions server_options() const override {
    local::ServerOptions options = fast_server_options();
    options.fault_seed = size.seed;
    return options;
  }
  ClientOptions soak_client_options() const {
    ClientOptions options = client_options();
    options.log_level = LogLevel::error;  // retries are expected here, by the thousand
    return options;
  }

  // Generous limits that scale with the size, so that a hang fails instead of blocking the run.
  std::chrono::milliseconds training_time_limit() const {
    return std::chrono::minutes(10) + size.steps * std::chrono::milliseconds(500);
  }
  // Sampling is paced by the 429 back-offs (each pauses the whole sampler): about 18 ms a sample at
  // the CI size, whatever the build; three times that is the hang guard.
  std::chrono::milliseconds sampling_time_limit() const {
    return std::chrono::minutes(10) + size.samples * std::chrono::milliseconds(60);
  }

  SoakSize size = soak_size_from_environment();
};

TEST_F(FaultSoak, TrainingUnderFaultsAppliesEveryStepOnceAndMatchesACleanRun) {
  const ResourceUse start = resource_use();
  auto clean_service = make_service_client(ServiceClientOptions(soak_client_options()));
  const TrainingRun clean = run(pipelined_training(*clean_service, size), training_time_limit());
  clean_service.reset();

  server->set_faults(fault_mix(size.fault_rate, Phase::training));
  auto service = make_service_client(ServiceClientOptions(soak_client_options()));
  const TrainingRun faulty = run(pipelined_training(*service, size), training_time_limit());
  const local::AuditReport audit = server->audit();
  server->set_faults({});
  service.reset();

  const local::ModelAudit& model = audit_of(audit, faulty.model_id);
  EXPECT_TRUE(model.exactly_once_in_order) << ::testing::PrintToString(model.problems);
  EXPECT_EQ(model.applied_seq_ids.size(), faulty.operations);
  EXPECT_EQ(faulty.losses, clean.losses) << "the faults changed the training trajectory";
  ASSERT_EQ(faulty.losses.size(), static_cast<std::size_t>(size.steps));

  const FaultCounts faults = count_faults(audit);
  print_report(std::cout, "training", size, faults, audit.requests.size(), start, resource_use());
  std::cout << "  operations applied exactly once, in order: " << model.applied_seq_ids.size() << " of "
            << faulty.operations << "; losses equal to the clean run's: " << (faulty.losses == clean.losses) << "\n";
  EXPECT_GT(faults.total, 0u);
}

TEST_F(FaultSoak, SamplingUnderFaultsAnswersEveryRequestOnce) {
  const ResourceUse start = resource_use();
  server->set_faults(fault_mix(size.fault_rate, Phase::sampling));
  auto service = make_service_client(ServiceClientOptions(soak_client_options()));
  const SampleTally tally = run(sampling_storm(*service, size), sampling_time_limit());
  const local::AuditReport audit = server->audit();
  server->set_faults({});
  service.reset();

  std::size_t answered_once = 0;
  std::size_t failed = 0;
  std::size_t short_answers = 0;
  for (std::size_t i = 0; i < tally.answers.size(); ++i) {
    answered_once += tally.answers[i] == 1 ? 1 : 0;
    if (!tally.errors[i].empty()) {
      // The first few say enough.
      if (++failed <= 5) ADD_FAILURE() << "request " << i << " failed: " << tally.errors[i];
    } else if (tally.lengths[i] != 2) {
      ++short_answers;
    }
  }
  EXPECT_EQ(answered_once, tally.answers.size());
  EXPECT_EQ(failed, 0u);
  EXPECT_EQ(short_answers, 0u);
  const FaultCounts faults = count_faults(audit);
  print_report(std::cout, "sampling", size, faults, audit.requests.size(), start, resource_use());
  std::cout << "  requests answered exactly once: " << answered_once << " of " << tally.answers.size()
            << "; failed: " << failed << "\n";
  EXPECT_GT(faults.total, 0u);
}

}  // namespace
}  // namespace tinker::test
