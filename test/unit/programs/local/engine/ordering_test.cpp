// Models and per-model ordering (doc/local.md#ordering-and-futures): tickets, seq_id rules, held
// gaps, shuffled arrival, single execution of duplicates, unload, get_info, paused queues.
#include "engine_test_support.hpp"

#include <algorithm>
#include <numeric>

namespace tinker::local::test {
namespace {

using OrderingTest = EngineFixture;

TEST_F(OrderingTest, CreateModelUsesTheSpecIdSchemeAndIsIdempotentPerModelSeqId) {
  start();
  std::string session = new_session(alice);
  CreateModelRequest request(session, 3, "Qwen/Qwen3-8B", LoraConfig(8));
  UntypedAPIFuture first = engine->create_model(request, alice);
  EXPECT_EQ(first.model_id, session + ":train:3");
  EXPECT_EQ(first.request_id.rfind("req-", 0), 0u);
  UntypedAPIFuture again = engine->create_model(request, alice);
  EXPECT_EQ(again, first);
  auto body = result_json(first.request_id);
  EXPECT_EQ(text(body["model_id"]), session + ":train:3");
  EXPECT_EQ(text(body["type"]), "create_model");
}

TEST_F(OrderingTest, UnknownBaseModelOrBadLoraFailsTheFutureAsUserError) {
  start();
  std::string session = new_session(alice);
  auto unknown = engine->create_model(CreateModelRequest(session, 0, "no/such-model"), alice);
  auto body = result_json(unknown.request_id);
  EXPECT_EQ(text(body["category"]), "user");
  EXPECT_NE(std::string(body["error"].as_string()).find("no/such-model"), std::string::npos);

  LoraConfig nothing_trained(4);
  nothing_trained.train_attn = nothing_trained.train_mlp = nothing_trained.train_unembed = false;
  auto bad = engine->create_model(CreateModelRequest(session, 1, "tinker-local/tiny-lm", nothing_trained), alice);
  EXPECT_EQ(text(result_json(bad.request_id)["category"]), "user");
  EXPECT_EQ(http_status_of([&] { forward_backward(session + ":train:0", 1); }), 404);
}

TEST_F(OrderingTest, SeqIdMustBePositiveAndModelMustBeKnownAndOwned) {
  start();
  std::string model = new_model(new_session(alice));
  EXPECT_EQ(http_status_of([&] { forward_backward(model, 0); }), 400);
  EXPECT_EQ(http_status_of([&] { optim_step(model, -3); }), 400);
  EXPECT_EQ(http_status_of([&] { forward_backward("nope:train:0", 1); }), 404);
  EXPECT_EQ(http_status_of([&] { engine->optim_step(OptimStepRequest(model, 1, AdamParams()), bob); }), 404);
  SaveWeightsRequest no_seq;
  no_seq.model_id = model;
  no_seq.path = "x";
  EXPECT_EQ(http_status_of([&] { engine->save_weights(no_seq, alice); }), 400);
}

TEST_F(OrderingTest, ShuffledArrivalExecutesEveryOpOnceInSeqOrder) {
  start();
  std::string model = new_model(new_session(alice));
  std::vector<std::int64_t> order(24);
  std::iota(order.begin(), order.end(), 1);
  std::mt19937 rng(42);
  std::shuffle(order.begin(), order.end(), rng);
  std::map<std::int64_t, std::string> tickets;
  for (std::int64_t seq : order) {
    UntypedAPIFuture ticket = seq % 3 == 0 ? optim_step(model, seq) : forward_backward(model, seq);
    EXPECT_EQ(ticket.model_id, model);
    tickets[seq] = ticket.request_id;
    // Resending an earlier seq_id (a client retry) returns its ticket and runs nothing.
    UntypedAPIFuture retry = seq % 3 == 0 ? optim_step(model, seq) : forward_backward(model, seq);
    EXPECT_EQ(retry.request_id, ticket.request_id);
  }
  for (const auto& [seq, id] : tickets) EXPECT_EQ(result(id).content_type, "application/json");
  const ModelAudit* audit = audit_of(model);
  ASSERT_NE(audit, nullptr);
  std::vector<std::int64_t> expected(24);
  std::iota(expected.begin(), expected.end(), 1);
  EXPECT_EQ(audit->applied_seq_ids, expected);
  EXPECT_TRUE(audit->exactly_once_in_order);
  EXPECT_TRUE(audit->problems.empty());
  ASSERT_EQ(audit->operations.size(), 24u);
  EXPECT_EQ(audit->operations[2], "optim_step");
  EXPECT_EQ(audit->operations[0], "forward_backward");
}

TEST_F(OrderingTest, LaterSeqIdIsHeldUntilTheGapIsFilled) {
  start();
  std::string model = new_model(new_session(alice));
  UntypedAPIFuture second = optim_step(model, 2);
  UntypedAPIFuture third = forward_backward(model, 3, true);
  EXPECT_NE(poll(second.request_id).body.find("\"queue_state\":\"active\""), std::string::npos);
  ASSERT_NE(audit_of(model), nullptr);
  EXPECT_TRUE(audit_of(model)->applied_seq_ids.empty());
  forward_backward(model, 1);
  auto optim = result_json(second.request_id);
  EXPECT_EQ(text(optim["type"]), "optim_step");
  EXPECT_TRUE(optim["metrics"].is_object());
  EXPECT_EQ(result(third.request_id).content_type, "application/json");
  EXPECT_EQ(audit_of(model)->applied_seq_ids, (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_EQ(audit_of(model)->operations, (std::vector<std::string>{"forward_backward", "optim_step", "forward"}));
}

TEST_F(OrderingTest, FailedOpsStillTakeTheirTurn) {
  start();
  std::string model = new_model(new_session(alice));
  UntypedAPIFuture bad_save = engine->save_weights(SaveWeightsRequest(model, 1, "bad name!"), alice);
  UntypedAPIFuture next = forward_backward(model, 2);
  EXPECT_EQ(text(result_json(bad_save.request_id)["category"]), "user");
  EXPECT_EQ(result(next.request_id).content_type, "application/json");
  EXPECT_EQ(audit_of(model)->applied_seq_ids, (std::vector<std::int64_t>{1, 2}));
}

TEST_F(OrderingTest, PausedQueueReportsItsStateThenRuns) {
  start();
  engine->set_queue_pause_hook([](std::string_view endpoint) -> std::optional<QueuePause> {
    if (endpoint != "optim_step") return std::nullopt;
    return QueuePause{"paused_rate_limit", std::chrono::milliseconds(150)};
  });
  std::string model = new_model(new_session(alice));
  UntypedAPIFuture ticket = optim_step(model, 1);
  EXPECT_NE(poll(ticket.request_id).body.find("\"queue_state\":\"paused_rate_limit\""), std::string::npos);
  EXPECT_EQ(text(result_json(ticket.request_id)["type"]), "optim_step");
}

TEST_F(OrderingTest, UnloadFailsWaitingOpsAndRefusesLaterOnes) {
  start();
  std::string model = new_model(new_session(alice));
  UntypedAPIFuture held = forward_backward(model, 2);
  UntypedAPIFuture unload = engine->unload_model(UnloadModelRequest(model), alice);
  EXPECT_EQ(engine->unload_model(UnloadModelRequest(model), alice), unload);
  auto body = result_json(unload.request_id);
  EXPECT_EQ(text(body["type"]), "unload_model");
  EXPECT_EQ(text(body["model_id"]), model);
  EXPECT_EQ(text(result_json(held.request_id)["category"]), "user");
  EXPECT_EQ(http_status_of([&] { forward_backward(model, 1); }), 404);
  EXPECT_EQ(http_status_of([&] { engine->get_info(GetInfoRequest(model), alice); }), 404);
}

TEST_F(OrderingTest, GetInfoReportsTheModelAndTokenizer) {
  start();
  std::string session = new_session(alice);
  std::string model = new_model(session, 0, "Qwen/Qwen3-8B");
  GetInfoResponse info = engine->get_info(GetInfoRequest(model), alice);
  EXPECT_EQ(info.model_id, model);
  EXPECT_EQ(info.model_data.model_name, "Qwen/Qwen3-8B");
  EXPECT_EQ(info.model_data.tokenizer_id, std::string(tiny_bpe_tokenizer_id));
  // The catalogue's SentencePiece model reports the other tokenizer.
  std::string sp_model = new_model(session, 1, "tinker-local/tiny-lm-sp");
  EXPECT_EQ(engine->get_info(GetInfoRequest(sp_model), alice).model_data.tokenizer_id,
            std::string(tiny_sp_tokenizer_id));
  EXPECT_TRUE(info.model_data.arch.has_value());
  EXPECT_EQ(info.is_lora, true);
  EXPECT_EQ(info.lora_rank, 4);
  EXPECT_EQ(info.model_name, "Qwen/Qwen3-8B");
  EXPECT_EQ(http_status_of([&] { engine->get_info(GetInfoRequest(model), bob); }), 404);
}

}  // namespace
}  // namespace tinker::local::test
