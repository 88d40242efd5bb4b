// Drives a tinker::local::Engine directly on an io_context run by the test thread.
#pragma once

#include "programs/local/engine/engine.hpp"
#include "programs/local/engine/ids.hpp"
#include "programs/local/tokenizer/tokenizer_store.hpp"
#include "unit/programs/local/support/temp_dir.hpp"

#include <tinker/codec.hpp>

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json.hpp>

#include <chrono>
#include <filesystem>
#include <future>
#include <memory>
#include <string>

namespace tinker::local::test {

inline Principal principal_for_key(const std::string& key) {
  Principal p;
  p.user_id = engine_detail::user_id_for_key(key);
  p.email = p.user_id.substr(p.user_id.rfind(':') + 1) + "@tinker-local.invalid";
  p.organization_id = "org-local";
  return p;
}

/// A JSON value as text: a string's contents, anything else serialized (for EXPECT_EQ).
inline std::string text(const boost::json::value& value) {
  return value.is_string() ? std::string(value.get_string()) : boost::json::serialize(value);
}

/// Status of the HttpError `fn` throws, or 0 if it throws none.
template <class F>
int http_status_of(F&& fn) {
  try {
    fn();
  } catch (const HttpError& e) {
    return e.status();
  }
  return 0;
}

class EngineFixture : public ::testing::Test {
 protected:
  EngineFixture() {
    options.null_model = true;
    options.data_dir = dir.path();
    options.long_poll_hold = std::chrono::milliseconds(20);
  }
  ~EngineFixture() override {
    if (engine) engine->shutdown();
    engine.reset();
    io.poll();
  }

  void start(const LocalTokenizers& tokenizers = {}) {
    if (engine) engine->shutdown();
    engine = std::make_unique<Engine>(io.get_executor(), options, tokenizers);
  }

  /// Runs the io_context until `future` is ready (bounded: fails the test after 30 s).
  template <class T>
  T await(std::future<T> future) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (future.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
      if (std::chrono::steady_clock::now() > deadline) {
        ADD_FAILURE() << "timed out waiting for the engine";
        break;
      }
      if (io.stopped()) io.restart();
      io.run_one_for(std::chrono::milliseconds(5));
    }
    return future.get();
  }

  RetrieveOutcome poll(const std::string& request_id, bool allow_metadata_only = false, bool accept_protobuf = false,
                       const Principal* who = nullptr) {
    Principal caller = who != nullptr ? *who : alice;
    return await(boost::asio::co_spawn(io, engine->retrieve(request_id, allow_metadata_only, accept_protobuf, caller),
                                       boost::asio::use_future));
  }

  /// Polls until the future is no longer pending; returns the final answer.
  RetrieveOutcome result(const std::string& request_id, bool accept_protobuf = false, const Principal* who = nullptr) {
    for (int i = 0; i < 2000; ++i) {
      RetrieveOutcome outcome = poll(request_id, false, accept_protobuf, who);
      if (outcome.content_type != "application/json" || outcome.body.find("\"try_again\"") == std::string::npos) {
        return outcome;
      }
    }
    ADD_FAILURE() << "future " << request_id << " never completed";
    return {};
  }

  boost::json::object result_json(const std::string& request_id, const Principal* who = nullptr) {
    RetrieveOutcome outcome = result(request_id, false, who);
    EXPECT_EQ(outcome.content_type, "application/json");
    return boost::json::parse(outcome.body).as_object();
  }

  std::string new_session(const Principal& who) {
    return engine->create_session(CreateSessionRequest(), who).session_id;
  }

  /// Creates a model and waits for it; returns its id.
  std::string new_model(const std::string& session_id, std::int64_t model_seq_id = 0,
                        const std::string& base = "tinker-local/tiny-lm", const Principal* who = nullptr) {
    Principal caller = who != nullptr ? *who : alice;
    CreateModelRequest request(session_id, model_seq_id, base, LoraConfig(4, 7));
    UntypedAPIFuture ticket = engine->create_model(request, caller);
    auto body = result_json(ticket.request_id, &caller);
    EXPECT_EQ(text(body["type"]), "create_model") << body;
    return std::string(body.at("model_id").as_string());
  }

  static ForwardBackwardInput cross_entropy_batch(int datums = 2, int length = 5) {
    std::vector<Datum> data;
    for (int d = 0; d < datums; ++d) {
      std::vector<TokenId> tokens;
      std::vector<std::int64_t> targets;
      std::vector<float> weights;
      for (int i = 0; i < length; ++i) {
        tokens.push_back(static_cast<TokenId>(3 + (d * 7 + i * 5) % 40));
        targets.push_back(3 + (d * 7 + (i + 1) * 5) % 40);
        weights.push_back(i == 0 ? 0.0f : 1.0f);
      }
      LossFnInputs inputs;
      inputs.emplace("target_tokens", TensorData(targets));
      inputs.emplace("weights", TensorData(weights));
      data.emplace_back(ModelInput::from_ints(tokens), std::move(inputs));
    }
    return ForwardBackwardInput(std::move(data), "cross_entropy");
  }

  UntypedAPIFuture forward_backward(const std::string& model_id, std::int64_t seq_id, bool forward_only = false,
                                    ForwardBackwardInput input = cross_entropy_batch()) {
    return engine->forward_backward(ForwardBackwardRequest(model_id, seq_id, std::move(input), forward_only), alice);
  }

  UntypedAPIFuture optim_step(const std::string& model_id, std::int64_t seq_id, double lr = 1e-2) {
    return engine->optim_step(OptimStepRequest(model_id, seq_id, AdamParams(lr)), alice);
  }

  const ModelAudit* audit_of(const std::string& model_id) {
    audits = engine->model_audit();
    for (const auto& audit : audits) {
      if (audit.model_id == model_id) return &audit;
    }
    return nullptr;
  }

  TempDir dir;
  ServerOptions options;
  boost::asio::io_context io;
  std::unique_ptr<Engine> engine;
  std::vector<ModelAudit> audits;
  Principal alice = principal_for_key("tml-alice-key");
  Principal bob = principal_for_key("tml-bob-key");
};

}  // namespace tinker::local::test
