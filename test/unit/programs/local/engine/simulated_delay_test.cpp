// Simulated compute time (ServerOptions::training_delay, sampling_delay) and the per-model
// operation timings of the audit (doc/local.md#simulated-compute-time).
#include "model_engine_test_support.hpp"

#include <tinker/error.hpp>
#include <tinker/local/server.hpp>

namespace tinker::local::test {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

class SimulatedDelayTest : public ModelEngineFixture {
 protected:
  std::string base_sampler(const std::string& session, std::int64_t seq = 0) {
    return engine
        ->create_sampling_session(
            CreateSamplingSessionRequest(session, seq, std::string("tinker-local/tiny-lm"), std::nullopt), alice)
        .sampling_session_id;
  }
  static SampleRequest sample_request(const std::string& sampler, std::int64_t seq) {
    SamplingParams params(4, 0.7);
    params.seed = 1;
    return SampleRequest(sampler, seq, ModelInput::from_ints(std::vector<TokenId>{11, 12, 13}), params, 1);
  }
  /// Submits forward_backward, optim_step, forward_backward, ... with seq_ids 1..count at once and
  /// waits for them all.
  void run_ops_submitted_ahead(const std::string& model, std::int64_t count) {
    std::vector<std::string> tickets;
    for (std::int64_t seq = 1; seq <= count; ++seq) {
      tickets.push_back(seq % 2 == 0 ? optim_step(model, seq).request_id : forward_backward(model, seq).request_id);
    }
    for (const std::string& ticket : tickets) EXPECT_EQ(result(ticket).content_type, "application/json");
  }
};

std::chrono::nanoseconds duration_of(const OperationTiming& timing) {
  return timing.finished - timing.started;
}

// The timings must say which op ran when, and one model's ops must never overlap.
void expect_ordered_and_disjoint(const ModelAudit& audit) {
  ASSERT_EQ(audit.timings.size(), audit.applied_seq_ids.size());
  for (std::size_t i = 0; i < audit.timings.size(); ++i) {
    EXPECT_EQ(audit.timings[i].seq_id, audit.applied_seq_ids[i]);
    EXPECT_EQ(audit.timings[i].operation, audit.operations[i]);
    EXPECT_LE(audit.timings[i].started, audit.timings[i].finished) << "op " << i;
    if (i > 0) {
      EXPECT_LE(audit.timings[i - 1].finished, audit.timings[i].started) << "ops " << i - 1 << ", " << i;
    }
  }
}

TEST_F(SimulatedDelayTest, WithoutDelayTimingsAreStillRecordedInOrder) {
  start_model();
  std::string model = new_model(new_session(alice));
  run_ops_submitted_ahead(model, 4);
  const ModelAudit* audit = audit_of(model);
  ASSERT_NE(audit, nullptr);
  ASSERT_EQ(audit->timings.size(), 4u);
  EXPECT_EQ(audit->timings[1].operation, "optim_step");
  expect_ordered_and_disjoint(*audit);
}

TEST_F(SimulatedDelayTest, TrainingDelayKeepsTheModelBusyAndLaterOpsWait) {
  options.training_delay = milliseconds(60);
  start_model();
  std::string model = new_model(new_session(alice));
  const auto before = Clock::now();
  run_ops_submitted_ahead(model, 3);
  const auto elapsed = Clock::now() - before;
  // Serialised: three ops of one model take three delays, not one.
  EXPECT_GE(elapsed, milliseconds(180));
  const ModelAudit* audit = audit_of(model);
  ASSERT_NE(audit, nullptr);
  ASSERT_EQ(audit->timings.size(), 3u);
  for (const OperationTiming& timing : audit->timings) EXPECT_GE(duration_of(timing), milliseconds(60));
  expect_ordered_and_disjoint(*audit);
  // Submitted ahead, the next op starts as the previous one finishes: no idle gap of a delay's size.
  for (std::size_t i = 1; i < audit->timings.size(); ++i) {
    EXPECT_LT(audit->timings[i].started - audit->timings[i - 1].finished, milliseconds(30)) << "gap before op " << i;
  }
}

TEST_F(SimulatedDelayTest, TrainingDelayIsPerModelAndHoldsNoWorker) {
  options.training_delay = milliseconds(150);
  options.worker_threads = 1;
  start_model();
  std::string session = new_session(alice);
  std::string first = new_model(session, 0);
  std::string second = new_model(session, 1);
  std::string a = forward_backward(first, 1).request_id;
  std::string b = forward_backward(second, 1).request_id;
  result(a);
  result(b);
  const ModelAudit* audit_a = audit_of(first);
  ASSERT_NE(audit_a, nullptr);
  const OperationTiming timing_a = audit_a->timings.at(0);
  const ModelAudit* audit_b = audit_of(second);
  ASSERT_NE(audit_b, nullptr);
  const OperationTiming timing_b = audit_b->timings.at(0);
  // With one worker, a delay that held it would run the two models one after the other.
  EXPECT_LT(timing_a.started, timing_b.finished);
  EXPECT_LT(timing_b.started, timing_a.finished);
}

TEST_F(SimulatedDelayTest, SamplingDelayIsAMinimumAndSamplesOverlap) {
  options.sampling_delay = milliseconds(200);
  start_model();
  std::string sampler = base_sampler(new_session(alice));
  const auto before = Clock::now();
  std::vector<std::string> tickets;
  for (std::int64_t seq = 0; seq < 3; ++seq)
    tickets.push_back(engine->sample(sample_request(sampler, seq), alice, false).request_id);
  for (const std::string& ticket : tickets) EXPECT_EQ(result(ticket).content_type, "application/json");
  const auto elapsed = Clock::now() - before;
  EXPECT_GE(elapsed, milliseconds(200));
  // Concurrent, as one accelerator batch: three samples take one delay, not three.
  EXPECT_LT(elapsed, milliseconds(550));
}

TEST_F(SimulatedDelayTest, SamplingDoesNotWaitForATrainingDelay) {
  options.training_delay = milliseconds(400);
  start_model();
  std::string session = new_session(alice);
  std::string model = new_model(session);
  std::string sampler = base_sampler(session, 1);
  std::string training = forward_backward(model, 1).request_id;
  const auto before = Clock::now();
  std::string sampled = engine->sample(sample_request(sampler, 0), alice, false).request_id;
  EXPECT_EQ(result(sampled).content_type, "application/json");
  EXPECT_LT(Clock::now() - before, milliseconds(350));
  result(training);
}

TEST(SimulatedDelayOptionsTest, NegativeDelaysAreRefusedByName) {
  for (const char* field : {"training_delay", "sampling_delay"}) {
    ServerOptions bad;
    bad.null_model = true;
    (std::string_view(field) == "training_delay" ? bad.training_delay : bad.sampling_delay) = milliseconds(-1);
    Server server(std::move(bad));
    try {
      server.start();
      ADD_FAILURE() << field << ": no exception";
    } catch (const tinker::error& e) {
      EXPECT_EQ(e.code(), errc::invalid_configuration);
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace tinker::local::test
