// TrainingClient against in-process tinker-local: pipelining, ordering, chunking, failures.
#include "integration/support/local_service.hpp"
#include "integration/support/training_data.hpp"

#include <tinker/service_client.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace tinker::test {
namespace {

namespace asio = boost::asio;
using ::testing::HasSubstr;

asio::awaitable<TrainingClient> create_training(ServiceClient& service, std::int64_t rank = 8) {
  LoraTrainingOptions options(std::string(tiny_model), rank);
  options.seed = 11;
  co_return co_await service.async_create_lora_training_client(options, use_awaitable);
}

class PipelinedRun {
 public:
  std::string model_id;
  std::vector<double> losses;
  std::vector<std::string> forward_backward_ids;
  std::vector<std::string> optim_step_ids;
};

// Each step submits forward_backward and optim_step back to back, then awaits both.
asio::awaitable<PipelinedRun> pipelined_loop(ServiceClient& service, int steps, double learning_rate = 1e-3) {
  TrainingClient training = co_await create_training(service);
  const std::vector<Datum> batch = tiny_batch(4, 16);
  PipelinedRun run;
  run.model_id = training.model_id();
  for (int step = 0; step < steps; ++step) {
    const ForwardBackwardInput input(batch, loss_fn::cross_entropy);
    const AdamParams adam(learning_rate);
    Future<ForwardBackwardOutput> gradients = co_await training.async_forward_backward(input, use_awaitable);
    Future<OptimStepResponse> update = co_await training.async_optim_step(adam, use_awaitable);
    run.forward_backward_ids.push_back(gradients.status().request_id);
    run.optim_step_ids.push_back(update.status().request_id);
    const ForwardBackwardOutput output = co_await gradients.async_get(use_awaitable);
    co_await update.async_get(use_awaitable);
    run.losses.push_back(mean_nll(batch, output));
  }
  co_return run;
}

std::int64_t index_of_first_poll(const local::AuditReport& audit, const std::string& request_id) {
  for (const auto& record : requests_to(audit, "/retrieve_future")) {
    if (record.request_id == request_id) return record.index;
  }
  return std::numeric_limits<std::int64_t>::max();
}

std::int64_t index_of_submit(const local::AuditReport& audit, std::string_view endpoint, std::int64_t seq_id) {
  for (const auto& record : requests_to(audit, endpoint)) {
    if (record.seq_id == seq_id && record.status == 200) return record.index;
  }
  return -1;
}

class TrainingClientTest : public LocalService {};

TEST_F(TrainingClientTest, PipelinedStepsAreSubmittedInSeqOrderBeforeTheirResultsArePolled) {
  auto service = make_service_client();
  const PipelinedRun result = run(pipelined_loop(*service, 6));
  ASSERT_EQ(result.losses.size(), 6u);
  EXPECT_LT(result.losses.back(), result.losses.front());

  const local::AuditReport audit = server->audit();
  const local::ModelAudit& model = audit_of(audit, result.model_id);
  EXPECT_TRUE(model.exactly_once_in_order) << ::testing::PrintToString(model.problems);
  ASSERT_EQ(model.applied_seq_ids.size(), 12u);
  for (std::size_t step = 0; step < 6; ++step) {
    const auto fwdbwd_seq = static_cast<std::int64_t>(2 * step + 1);
    const std::int64_t fwdbwd_at = index_of_submit(audit, "/forward_backward", fwdbwd_seq);
    const std::int64_t optim_at = index_of_submit(audit, "/optim_step", fwdbwd_seq + 1);
    ASSERT_GE(fwdbwd_at, 0) << "step " << step;
    ASSERT_GT(optim_at, fwdbwd_at) << "step " << step;
    EXPECT_GT(index_of_first_poll(audit, result.forward_backward_ids[step]), optim_at) << "step " << step;
    EXPECT_GT(index_of_first_poll(audit, result.optim_step_ids[step]), optim_at) << "step " << step;
  }
}

TEST_F(TrainingClientTest, ForwardBackwardUsesTheProtobufWireOf025) {
  auto service = make_service_client();
  run(pipelined_loop(*service, 1));
  const auto submits = requests_to(server->audit(), "/forward_backward");
  ASSERT_FALSE(submits.empty());
  EXPECT_EQ(submits[0].content_type, "application/x-protobuf");
  bool polled_as_protobuf = false;
  for (const auto& poll : requests_to(server->audit(), "/retrieve_future")) {
    polled_as_protobuf = polled_as_protobuf || poll.accept == "application/x-protobuf";
  }
  EXPECT_TRUE(polled_as_protobuf);
}

TEST_F(TrainingClientTest, JsonBulkPathsOptionSendsJson) {
  ServiceClientOptions options(client_options());
  options.json_bulk_paths = true;
  auto service = make_service_client(std::move(options));
  const PipelinedRun result = run(pipelined_loop(*service, 2));
  EXPECT_LT(result.losses.back(), result.losses.front());
  const auto submits = requests_to(server->audit(), "/forward_backward");
  ASSERT_FALSE(submits.empty());
  EXPECT_EQ(submits[0].content_type, "application/json");
}

class ZstdTrainingTest : public LocalService {
 protected:
  local::ServerOptions server_options() const override {
    auto options = fast_server_options();
    options.client_config.proto_compress_fwdbwd = true;
    return options;
  }
};

TEST_F(ZstdTrainingTest, ForwardBackwardIsCompressedWhenTheServerAsks) {
  auto service = make_service_client();
  const PipelinedRun result = run(pipelined_loop(*service, 2));
  EXPECT_LT(result.losses.back(), result.losses.front());
  const auto submits = requests_to(server->audit(), "/forward_backward");
  ASSERT_FALSE(submits.empty());
  EXPECT_EQ(submits[0].content_encoding, "zstd");
}

class ChunkingTest : public LocalService {
 protected:
  local::ServerOptions server_options() const override {
    auto options = fast_server_options();
    options.client_config.fwdbwd_max_chunk_len = 2;
    return options;
  }
};

asio::awaitable<std::pair<std::string, ForwardBackwardOutput>> one_forward_backward(ServiceClient& service,
                                                                                    std::vector<Datum> batch) {
  TrainingClient training = co_await create_training(service);
  const ForwardBackwardInput input(std::move(batch), loss_fn::cross_entropy);
  Future<ForwardBackwardOutput> future = co_await training.async_forward_backward(input, use_awaitable);
  ForwardBackwardOutput output = co_await future.async_get(use_awaitable);
  co_return std::make_pair(training.model_id(), std::move(output));
}

TEST_F(ChunkingTest, ChunksTakeConsecutiveSeqIdsWithTheFirstSubmittedLastAndResultsCombined) {
  auto service = make_service_client();
  const std::vector<Datum> batch = tiny_batch(5, 8);
  const auto [model_id, output] = run(one_forward_backward(*service, batch));

  ASSERT_EQ(output.loss_fn_outputs.size(), 5u);
  const auto audit = server->audit();
  std::vector<local::RequestRecord> submits;
  for (const auto& record : requests_to(audit, "/forward_backward")) {
    if (record.model_id == model_id) submits.push_back(record);
  }
  ASSERT_EQ(submits.size(), 3u);
  EXPECT_EQ(submits.back().seq_id, 1) << "chunk 1 must arrive last";
  std::vector<std::int64_t> seqs;
  for (const auto& s : submits) seqs.push_back(*s.seq_id);
  std::sort(seqs.begin(), seqs.end());
  EXPECT_EQ(seqs, (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_TRUE(audit_of(audit, model_id).exactly_once_in_order);

  // The combined loss:sum is the sum over every datum.
  double expected_sum = 0.0;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    for (float lp : output.loss_fn_outputs[i].at("logprobs").to_dense_floats()) expected_sum -= lp;
  }
  ASSERT_TRUE(output.metrics.contains("loss:sum"));
  EXPECT_NEAR(output.metrics.at("loss:sum"), expected_sum, 1e-3 * std::abs(expected_sum));
}

class SequentialChunkingTest : public LocalService {
 protected:
  local::ServerOptions server_options() const override {
    auto options = fast_server_options();
    options.client_config.fwdbwd_max_chunk_len = 2;
    options.client_config.parallel_fwdbwd_chunks = false;
    return options;
  }
};

TEST_F(SequentialChunkingTest, WithoutParallelChunksTheyArriveInSeqOrder) {
  auto service = make_service_client();
  const auto [model_id, output] = run(one_forward_backward(*service, tiny_batch(5, 8)));
  ASSERT_EQ(output.loss_fn_outputs.size(), 5u);
  std::vector<std::int64_t> arrival;
  for (const auto& record : requests_to(server->audit(), "/forward_backward")) {
    if (record.model_id == model_id) arrival.push_back(*record.seq_id);
  }
  EXPECT_EQ(arrival, (std::vector<std::int64_t>{1, 2, 3}));
}

TEST_F(TrainingClientTest, BadInputIsRefusedBeforeSendingAndUsesNoSeqId) {
  auto service = make_service_client();
  TrainingClient training = run(create_training(*service));

  std::vector<Datum> bad = tiny_batch(1, 4);
  bad[0].loss_fn_inputs["weights"] = TensorData::from_floats(std::vector<float>{1.0f, NAN, 1.0f, 1.0f});
  diagnostics diag;
  auto refused =
      training.async_forward_backward(ForwardBackwardInput(bad, loss_fn::cross_entropy), diag, asio::use_future);
  EXPECT_THROW(run_until_ready(io, refused), boost::system::system_error);
  EXPECT_THAT(diag.message, HasSubstr("data[0].loss_fn_inputs.weights"));

  diagnostics empty_diag;
  auto empty =
      training.async_forward_backward(ForwardBackwardInput({}, loss_fn::cross_entropy), empty_diag, asio::use_future);
  EXPECT_THROW(run_until_ready(io, empty), boost::system::system_error);
  EXPECT_THAT(empty_diag.message, HasSubstr("No data provided"));

  // The next operation gets seq_id 1: no gap was left.
  auto ok =
      training.async_forward_backward(ForwardBackwardInput(tiny_batch(1, 4), loss_fn::cross_entropy), asio::use_future);
  auto future = run_until_ready(io, ok);
  auto done = future.async_get(asio::use_future);
  run_until_ready(io, done);
  const local::ModelAudit model = audit_of(server->audit(), training.model_id());
  EXPECT_EQ(model.applied_seq_ids, (std::vector<std::int64_t>{1}));
}

TEST_F(TrainingClientTest, ARequestTheServerRefusesIsAnErrorWithItsRequestIdAndLeavesNoGap) {
  auto service = make_service_client();
  TrainingClient training = run(create_training(*service));
  // 422 with its {"detail"} body: the server's verdict (a bare 400 without a body would be taken
  // for a proxy's connection fault and retried).
  local::FaultRule refuse("forward_backward", local::FaultKind::status);
  refuse.status = 422;
  refuse.on_calls = {1};
  server->set_faults({refuse});

  diagnostics diag;
  auto refused = training.async_forward_backward(ForwardBackwardInput(tiny_batch(2, 4), loss_fn::cross_entropy), diag,
                                                 asio::use_future);
  try {
    run_until_ready(io, refused);
    FAIL() << "a 422 must be an error";
  } catch (const boost::system::system_error& e) {
    EXPECT_EQ(e.code(), errc::unprocessable_entity);
  }
  EXPECT_EQ(diag.http_status, 422);
  EXPECT_FALSE(diag.request_id.empty());

  auto step = training.async_optim_step(AdamParams(1e-3), asio::use_future);
  auto future = run_until_ready(io, step);
  auto done = future.async_get(asio::use_future);
  run_until_ready(io, done);
  const local::ModelAudit model = audit_of(server->audit(), training.model_id());
  EXPECT_EQ(model.applied_seq_ids, (std::vector<std::int64_t>{1}));
  EXPECT_TRUE(model.exactly_once_in_order);
}

TEST_F(TrainingClientTest, AnOperationCancelledBeforeItsTurnPassesItWithoutASeqId) {
  auto service = make_service_client();
  TrainingClient training = run(create_training(*service));
  local::FaultRule slow("forward_backward", local::FaultKind::delay);
  slow.delay = std::chrono::milliseconds(400);
  slow.on_calls = {1};
  server->set_faults({slow});

  auto first =
      training.async_forward_backward(ForwardBackwardInput(tiny_batch(2, 4), loss_fn::cross_entropy), asio::use_future);
  asio::cancellation_signal cancel;
  auto cancelled =
      training.async_optim_step(AdamParams(1e-3), asio::bind_cancellation_slot(cancel.slot(), asio::use_future));
  io.run_for(std::chrono::milliseconds(100));  // the first holds the turn (its submit is delayed)
  cancel.emit(asio::cancellation_type::terminal);
  auto third =
      training.async_forward_backward(ForwardBackwardInput(tiny_batch(2, 4), loss_fn::cross_entropy), asio::use_future);
  try {
    run_until_ready(io, cancelled);
    FAIL() << "the cancelled operation must fail";
  } catch (const boost::system::system_error& e) {
    EXPECT_EQ(e.code(), errc::cancelled);
  }
  auto first_result = run_until_ready(io, first).async_get(asio::use_future);
  auto third_result = run_until_ready(io, third).async_get(asio::use_future);
  run_until_ready(io, first_result);
  run_until_ready(io, third_result);
  const local::ModelAudit model = audit_of(server->audit(), training.model_id());
  EXPECT_EQ(model.applied_seq_ids, (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(model.operations, (std::vector<std::string>{"forward_backward", "forward_backward"}));
}

TEST_F(TrainingClientTest, ALostSeqIdMakesLaterOperationsFailFastNamingIt) {
  ServiceClientOptions options(client_options());
  options.client.retry.max_retries = 0;
  options.client.retry.call_budget = std::chrono::seconds(1);
  auto service = make_service_client(std::move(options));
  TrainingClient training = run(create_training(*service));
  local::FaultRule drop("forward_backward", local::FaultKind::reset_before);
  drop.max_fires = 10;
  drop.probability = 1.0;
  server->set_faults({drop});

  auto lost =
      training.async_forward_backward(ForwardBackwardInput(tiny_batch(2, 4), loss_fn::cross_entropy), asio::use_future);
  auto after = training.async_optim_step(AdamParams(1e-3), asio::use_future);
  EXPECT_THROW(run_until_ready(io, lost), boost::system::system_error);
  const auto started = std::chrono::steady_clock::now();
  diagnostics diag;
  auto later = training.async_save_state("after-gap", SaveStateOptions(), diag, asio::use_future);
  try {
    run_until_ready(io, after);
    FAIL() << "an operation after a lost seq_id must fail";
  } catch (const boost::system::system_error& e) {
    EXPECT_EQ(e.code(), errc::request_failed);
  }
  EXPECT_THROW(run_until_ready(io, later), boost::system::system_error);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(1));
  EXPECT_THAT(diag.message, HasSubstr("seq_id 1"));
  EXPECT_THAT(diag.message, HasSubstr("checkpoint"));
}

TEST_F(TrainingClientTest, AnExpiredTrainingResultFailsClearlyAndTheStepRanOnce) {
  auto service = make_service_client();
  TrainingClient training = run(create_training(*service));
  local::FaultRule expired("retrieve_future", local::FaultKind::status);
  expired.status = 410;
  expired.on_calls = {1};
  server->set_faults({expired});

  auto submitted =
      training.async_forward_backward(ForwardBackwardInput(tiny_batch(2, 4), loss_fn::cross_entropy), asio::use_future);
  Future<ForwardBackwardOutput> future = run_until_ready(io, submitted);
  diagnostics diag;
  auto result = future.async_get(diag, asio::use_future);
  try {
    run_until_ready(io, result);
    FAIL() << "a 410 on a training result must fail";
  } catch (const boost::system::system_error& e) {
    EXPECT_EQ(e.code(), errc::gone);
  }
  EXPECT_EQ(diag.http_status, 410);
  // The next operation still works, and the server ran the step exactly once.
  auto next = training.async_optim_step(AdamParams(1e-3), asio::use_future);
  auto next_result = run_until_ready(io, next).async_get(asio::use_future);
  run_until_ready(io, next_result);
  const local::ModelAudit model = audit_of(server->audit(), training.model_id());
  EXPECT_EQ(model.applied_seq_ids, (std::vector<std::int64_t>{1, 2}));
  EXPECT_TRUE(model.exactly_once_in_order);
}

TEST_F(TrainingClientTest, PausedQueueStatesReachTheCallbackAndTheStatus) {
  std::vector<std::string> log_lines;
  ServiceClientOptions options(client_options());
  options.client.log_level = LogLevel::warning;
  options.log = [&log_lines](LogLevel, std::string_view line) { log_lines.emplace_back(line); };
  auto service = make_service_client(std::move(options));
  TrainingClient training = run(create_training(*service));
  local::FaultRule pause("forward_backward", local::FaultKind::pause_queue);
  pause.delay = std::chrono::milliseconds(600);
  pause.on_calls = {1};
  server->set_faults({pause});

  auto submitted =
      training.async_forward_backward(ForwardBackwardInput(tiny_batch(2, 4), loss_fn::cross_entropy), asio::use_future);
  Future<ForwardBackwardOutput> future = run_until_ready(io, submitted);
  std::vector<QueueStateChange> changes;
  future.on_queue_state([&changes](const QueueStateChange& change) { changes.push_back(change); });
  auto result = future.async_get(asio::use_future);
  run_until_ready(io, result);
  ASSERT_FALSE(changes.empty());
  EXPECT_EQ(changes.front().state, QueueState::paused_capacity);
  const FutureStatus status = future.status();
  EXPECT_TRUE(status.ready);
  EXPECT_GE(status.waited, std::chrono::milliseconds(500));
  bool warned = false;
  for (const auto& line : log_lines) warned = warned || line.find("is paused") != std::string::npos;
  EXPECT_TRUE(warned) << ::testing::PrintToString(log_lines);
}

TEST_F(TrainingClientTest, AnExpiredSessionGivesAClearError) {
  auto service = make_service_client();
  TrainingClient training = run(create_training(*service));
  server->advance_clock(std::chrono::hours(2));
  diagnostics diag;
  auto submitted = training.async_forward_backward(ForwardBackwardInput(tiny_batch(2, 4), loss_fn::cross_entropy), diag,
                                                   asio::use_future);
  EXPECT_THROW(run_until_ready(io, submitted), boost::system::system_error);
  EXPECT_THAT(diag.message, HasSubstr("expired"));
}

TEST_F(TrainingClientTest, UnknownBaseModelIsAnErrorNamingIt) {
  auto service = make_service_client();
  diagnostics diag;
  auto created =
      service->async_create_lora_training_client(LoraTrainingOptions("no-such/model"), diag, asio::use_future);
  EXPECT_THROW(run_until_ready(io, created), boost::system::system_error);
  EXPECT_THAT(diag.message, HasSubstr("no-such/model"));
}

}  // namespace
}  // namespace tinker::test

namespace tinker::test {
namespace {

class LargeResultTest : public LocalService {
 protected:
  local::ServerOptions server_options() const override {
    auto options = fast_server_options();
    options.inline_payload_limit = 64;  // every forward_backward result is announced first
    return options;
  }
};

TEST_F(LargeResultTest, ResultsAnnouncedByCompleteMetadataArriveWhole) {
  auto service = make_service_client();
  const PipelinedRun result = run(pipelined_loop(*service, 3));
  EXPECT_LT(result.losses.back(), result.losses.front());
  // Each forward_backward result took two polls: the announcement, then the payload.
  const auto polls = requests_to(server->audit(), "/retrieve_future");
  for (const auto& id : result.forward_backward_ids) {
    const auto count = std::count_if(polls.begin(), polls.end(), [&id](const auto& p) { return p.request_id == id; });
    EXPECT_GE(count, 2) << id;
  }
}

}  // namespace
}  // namespace tinker::test
