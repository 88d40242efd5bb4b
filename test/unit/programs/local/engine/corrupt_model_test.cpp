// Engine::corrupt_model (Server::corrupt_model, the test hook behind tinker::train's recovery
// tests): the run reads as corrupted and its later operations fail as the service's do.
#include "engine_test_support.hpp"

namespace tinker::local::test {
namespace {

using CorruptModelTest = EngineFixture;

TEST_F(CorruptModelTest, LaterOperationsFailAsServerErrorsNamingTheCorruptionAndTheRunReadsCorrupted) {
  start();
  const std::string model = new_model(new_session(alice));
  const UntypedAPIFuture before = forward_backward(model, 1);
  EXPECT_EQ(result(before.request_id).content_type, "application/json");
  EXPECT_FALSE(engine->get_training_run(model, "owned", alice).corrupted);

  engine->corrupt_model(model, "lost its accelerator");

  EXPECT_TRUE(engine->get_training_run(model, "owned", alice).corrupted);
  const UntypedAPIFuture after = optim_step(model, 2);
  auto body = result_json(after.request_id);
  EXPECT_EQ(text(body["category"]), "server");
  EXPECT_EQ(text(body["error"]), "training run " + model + " is corrupted: lost its accelerator");
  // The failed operation still took its seq_id once: the audit stays in order.
  const ModelAudit* audit = audit_of(model);
  ASSERT_NE(audit, nullptr);
  EXPECT_EQ(audit->applied_seq_ids, (std::vector<std::int64_t>{1, 2}));
  EXPECT_TRUE(audit->exactly_once_in_order);
}

TEST_F(CorruptModelTest, AnUnknownModelIsA404AndOtherModelsAreUntouched) {
  start();
  const std::string session = new_session(alice);
  const std::string kept = new_model(session, 0);
  const std::string lost = new_model(session, 1);
  EXPECT_EQ(http_status_of([&] { engine->corrupt_model("nope:train:0", "x"); }), 404);
  engine->corrupt_model(lost, "x");
  const UntypedAPIFuture fine = forward_backward(kept, 1);
  EXPECT_EQ(result_json(fine.request_id).count("category"), 0u);
  EXPECT_FALSE(engine->get_training_run(kept, "owned", alice).corrupted);
}

}  // namespace
}  // namespace tinker::local::test
