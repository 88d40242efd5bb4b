// Several threads use one sync::TrainingClient and one sync::SamplingClient at once: every call
// is submitted exactly once, in some order, and every result arrives.
#include "integration/sync/sync_support.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

namespace tinker::test {
namespace {

using SyncThreads = SyncService;

TEST_F(SyncThreads, SeveralThreadsShareOneTrainingAndOneSamplingClient) {
  sync::ServiceClient service = make_sync_service();
  const sync::TrainingClient training = service.create_lora_training_client(std::string(tiny_model), 4);
  const sync::SamplingClient sampler =
      service.create_sampling_client(SamplingSource::from_base_model(std::string(tiny_model)));

  constexpr int threads_per_client = 4;
  constexpr int calls_per_thread = 3;
  std::atomic<int> training_results{0};
  std::atomic<int> samples{0};
  std::mutex failures_mutex;
  std::vector<std::string> failures;
  auto record_failure = [&](const std::exception& e) {
    std::lock_guard lock(failures_mutex);
    failures.emplace_back(e.what());
  };

  std::vector<std::thread> threads;
  for (int t = 0; t < threads_per_client; ++t) {
    threads.emplace_back([&] {
      try {
        for (int call = 0; call < calls_per_thread; ++call) {
          ForwardBackwardOutput output = training.forward_backward(tiny_cross_entropy_input()).get();
          if (output.loss_fn_outputs.size() == tiny_batch().size()) ++training_results;
        }
      } catch (const std::exception& e) {
        record_failure(e);
      }
    });
    threads.emplace_back([&, t] {
      try {
        for (int call = 0; call < calls_per_thread; ++call) {
          SamplingParams params;
          params.max_tokens = 3;
          params.seed = static_cast<std::uint64_t>(t * 100 + call);
          SampleResponse response = sampler.sample(ModelInput::from_ints({5, 6, 7}), 1, params).get();
          if (response.sequences.size() == 1) ++samples;
          PromptLogprobs logprobs = sampler.compute_logprobs(ModelInput::from_ints({5, 6, 7})).get();
          if (logprobs.size() != 3) throw error(errc::protocol_error, "compute_logprobs: wrong length");
        }
      } catch (const std::exception& e) {
        record_failure(e);
      }
    });
  }
  for (auto& thread : threads) thread.join();

  EXPECT_TRUE(failures.empty()) << failures.front();
  EXPECT_EQ(training_results.load(), threads_per_client * calls_per_thread);
  EXPECT_EQ(samples.load(), threads_per_client * calls_per_thread);

  // Whatever the interleaving, the server saw seq ids 1..12, each applied once and in order.
  local::AuditReport audit = server->audit();
  EXPECT_TRUE(audit.ok());
  for (const auto& model : audit.models) {
    if (model.model_id != training.model_id()) continue;
    EXPECT_EQ(model.applied_seq_ids.size(), static_cast<std::size_t>(threads_per_client * calls_per_thread));
    EXPECT_TRUE(model.exactly_once_in_order);
  }
}

TEST_F(SyncThreads, CopiesOfAHandleUsedFromManyThreadsShareOneModel) {
  sync::ServiceClient service = make_sync_service();
  sync::TrainingClient training = service.create_lora_training_client(std::string(tiny_model), 4);
  std::vector<std::thread> threads;
  std::atomic<int> done{0};
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([copy = training, &done] {  // each thread owns a copy of the handle
      if (copy.get_info().model_id == copy.model_id()) ++done;
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(done.load(), 3);
}

}  // namespace
}  // namespace tinker::test
