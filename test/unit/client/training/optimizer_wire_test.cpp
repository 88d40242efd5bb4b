// What the client sends for optimizers (doc/training.md#optimizers), byte for byte, against a
// scripted server of each generation: a server whose client/config names
// sample_use_retrieve_futures gets optim_params (and Dimuon's optimizer_config); an older one gets
// the 0.25 bodies and no Dimuon at all.
#include "support/test_server.hpp"

#include <tinker/codec.hpp>
#include <tinker/service_client.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/system/system_error.hpp>

#include <gtest/gtest.h>

#include <future>
#include <stdexcept>
#include <string>

namespace tinker::test {
namespace {

namespace asio = boost::asio;

// One session, one model ("session-1:train:0"); every future finishes at once.
class ScriptedTrainingService {
 public:
  explicit ScriptedTrainingService(bool names_new_flags) {
    server.set_handler([names_new_flags](const RecordedRequest& request) {
      if (request.target == "/api/v1/client/config") {
        return ScriptedResponse(200, names_new_flags ? R"({"sample_use_retrieve_futures":false})" : "{}");
      }
      if (request.target == "/api/v1/client/dynamic_config") return ScriptedResponse(404, "{}");
      if (request.target == "/api/v1/create_session") {
        return ScriptedResponse(200, R"({"type":"create_session","session_id":"session-1"})");
      }
      if (request.target == "/api/v1/create_model") return ScriptedResponse(200, R"({"request_id":"create"})");
      if (request.target == "/api/v1/optim_step") return ScriptedResponse(200, R"({"request_id":"step"})");
      if (request.target == "/api/v1/retrieve_future") {
        if (request.body.find("\"create\"") != std::string::npos) {
          return ScriptedResponse(200, R"({"type":"create_model","model_id":"session-1:train:0"})");
        }
        return ScriptedResponse(200, R"({"type":"optim_step","metrics":{}})");
      }
      return ScriptedResponse(200, "{}");
    });
  }

  ServiceClientOptions options() const {
    ClientOptions client(server.base_url(), Secret(std::string("tml-unit-test-key")));
    client.log_level = LogLevel::off;
    client.telemetry_enabled = false;
    return ServiceClientOptions(client);
  }

  std::vector<std::string> bodies_to(std::string_view target) const {
    std::vector<std::string> found;
    for (const RecordedRequest& request : server.requests()) {
      if (request.target == target) found.push_back(request.body);
    }
    return found;
  }

  ScriptedServer server;
};

template <class T>
T wait(asio::io_context& io, std::future<T>& future) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (future.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
    if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("test timed out");
    io.run_one_for(std::chrono::milliseconds(20));
  }
  return future.get();
}

LoraTrainingOptions options_with(OptimizerConfig optimizer) {
  LoraTrainingOptions options("m", 8);
  options.seed = 0;
  options.optimizer = std::move(optimizer);
  return options;
}

// create_model's body for options_with(...), from the session's first model.
std::string create_model_body(const std::string& optimizer_part) {
  return R"({"session_id":"session-1","model_seq_id":0,"base_model":"m",)"
         R"("lora_config":{"rank":8,"seed":0,"train_unembed":true,"train_mlp":true,"train_attn":true},)" +
         optimizer_part + R"("type":"create_model"})";
}

TEST(OptimizerWire, NewerServerGetsOptimParams) {
  ScriptedTrainingService scripted(true);
  asio::io_context io;
  ServiceClient service(io.get_executor(), scripted.options());

  auto creating = service.async_create_lora_training_client(options_with(DimuonOptimizerConfig()), asio::use_future);
  TrainingClient dimuon = wait(io, creating);
  DimuonParams params(0.02);
  params.damping = 0.5;
  auto stepping = dimuon.async_optim_step(params, asio::use_future);
  (void)wait(io, stepping);
  auto adam_creating = service.async_create_lora_training_client(options_with(AdamOptimizerConfig()), asio::use_future);
  TrainingClient adam = wait(io, adam_creating);
  auto adam_stepping = adam.async_optim_step(AdamParams(), asio::use_future);
  (void)wait(io, adam_stepping);

  const std::vector<std::string> creates = scripted.bodies_to("/api/v1/create_model");
  ASSERT_EQ(creates.size(), 2u);
  EXPECT_EQ(creates[0], create_model_body(R"("optimizer_config":{"type":"dimuon","version":1},)"));
  const std::vector<std::string> steps = scripted.bodies_to("/api/v1/optim_step");
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0],
            R"({"optim_params":{"type":"dimuon","learning_rate":0.02,"grad_clip_norm":0,"beta1":0.9,"damping":0.5},)"
            R"("model_id":"session-1:train:0","seq_id":1,"type":"optim_step"})");
  // AdamW is not announced at creation, and its step carries no type.
  EXPECT_EQ(creates[1].find("optimizer_config"), std::string::npos) << creates[1];
  EXPECT_EQ(steps[1], R"({"optim_params":{"learning_rate":1e-04,"beta1":0.9,"beta2":0.95,"eps":1e-12,"weight_decay":0,)"
                      R"("grad_clip_norm":0},"model_id":"session-1:train:0","seq_id":1,"type":"optim_step"})");
}

TEST(OptimizerWire, OlderServerGetsThe025BodiesAndNoDimuon) {
  ScriptedTrainingService scripted(false);
  asio::io_context io;
  ServiceClient service(io.get_executor(), scripted.options());

  auto creating = service.async_create_lora_training_client(options_with(AdamOptimizerConfig()), asio::use_future);
  TrainingClient adam = wait(io, creating);
  auto stepping = adam.async_optim_step(AdamParams(), asio::use_future);
  (void)wait(io, stepping);
  EXPECT_EQ(scripted.bodies_to("/api/v1/create_model").at(0), create_model_body(""));
  EXPECT_EQ(scripted.bodies_to("/api/v1/optim_step").at(0),
            R"({"adam_params":{"learning_rate":1e-04,"beta1":0.9,"beta2":0.95,"eps":1e-12,"weight_decay":0,)"
            R"("grad_clip_norm":0},"model_id":"session-1:train:0","seq_id":1,"type":"optim_step"})");

  // Dimuon: refused before anything is sent.
  diagnostics diag;
  auto dimuon_creating =
      service.async_create_lora_training_client(options_with(DimuonOptimizerConfig()), diag, asio::use_future);
  try {
    (void)wait(io, dimuon_creating);
    FAIL() << "created a Dimuon client on a 0.25-era server";
  } catch (const boost::system::system_error& e) {
    EXPECT_EQ(e.code(), errc::invalid_argument);
    EXPECT_NE(diag.message.find("dimuon"), std::string::npos) << diag.message;
  }
  EXPECT_EQ(scripted.bodies_to("/api/v1/create_model").size(), 1u);
}

}  // namespace
}  // namespace tinker::test
