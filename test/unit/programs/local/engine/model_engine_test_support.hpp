// An engine over the real tiny model, with a 256-token byte vocabulary standing in for the
// SentencePiece tokenizer (the model needs only an id, a vocabulary size and a decoder).
#pragma once

#include "engine_test_support.hpp"
#include "programs/local/engine/backend.hpp"

#include <cstring>

namespace tinker::local::test {

inline engine_detail::TokenizerInfo byte_tokenizer() {
  engine_detail::TokenizerInfo info;
  info.id = "test/bytes-256";
  info.vocab_size = 256;
  info.decode = [](std::span<const TokenId> tokens) {
    std::string text;
    for (TokenId t : tokens) text.push_back(static_cast<char>(t));
    return text;
  };
  return info;
}

class ModelEngineFixture : public EngineFixture {
 protected:
  ModelEngineFixture() {
    options.null_model = false;
    options.worker_threads = 2;
    options.long_poll_hold = std::chrono::milliseconds(50);
  }

  void start_model() {
    if (engine) engine->shutdown();
    engine.reset();
    engine = Engine::with_backend(io.get_executor(), options, engine_detail::make_model_backend(byte_tokenizer()));
  }

  ForwardBackwardOutput forward(const std::string& model, std::int64_t seq) {
    RetrieveOutcome outcome = result(forward_backward(model, seq, true).request_id, true);
    EXPECT_EQ(outcome.content_type, "application/x-protobuf") << outcome.body;
    return from_protobuf<ForwardBackwardOutput>(outcome.body);
  }

  /// fwd/bwd then optim, returns the next free seq_id.
  std::int64_t train_steps(const std::string& model, std::int64_t seq, int steps) {
    for (int i = 0; i < steps; ++i) {
      forward_backward(model, seq++);
      result(optim_step(model, seq++, 1e-3).request_id);
    }
    return seq;
  }

  static std::vector<std::uint32_t> bits(const ForwardBackwardOutput& output) {
    std::vector<std::uint32_t> out;
    for (const auto& record : output.loss_fn_outputs) {
      for (float f : record.at("logprobs").floats()) {
        std::uint32_t b;
        std::memcpy(&b, &f, sizeof b);
        out.push_back(b);
      }
    }
    return out;
  }
};

}  // namespace tinker::local::test
