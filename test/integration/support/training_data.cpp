#include "integration/support/training_data.hpp"

#include <gtest/gtest.h>

#include <random>
#include <stdexcept>

namespace tinker::test {

std::vector<Datum> tiny_batch(std::size_t count, std::size_t length, std::uint32_t seed) {
  std::mt19937 random(seed);
  std::uniform_int_distribution<TokenId> token(0, 999);
  std::vector<Datum> batch;
  for (std::size_t i = 0; i < count; ++i) {
    std::vector<TokenId> tokens(length + 1);
    for (auto& t : tokens) t = token(random);
    const std::vector<TokenId> input(tokens.begin(), tokens.end() - 1);
    const std::vector<TokenId> targets(tokens.begin() + 1, tokens.end());
    const std::vector<float> weights(length, 1.0f);
    LossFnInputs inputs{{"target_tokens", TensorData::from_tokens(targets)},
                        {"weights", TensorData::from_floats(weights)}};
    batch.emplace_back(ModelInput::from_ints(input), std::move(inputs));
  }
  return batch;
}

double mean_nll(const std::vector<Datum>& data, const ForwardBackwardOutput& output) {
  double total = 0.0;
  double weight_sum = 0.0;
  for (std::size_t i = 0; i < data.size(); ++i) {
    const auto logprobs = output.loss_fn_outputs.at(i).at("logprobs").to_dense_floats();
    const auto weights = data[i].loss_fn_inputs.at("weights").to_dense_floats();
    for (std::size_t k = 0; k < logprobs.size(); ++k) {
      total -= weights[k] * logprobs[k];
      weight_sum += weights[k];
    }
  }
  return weight_sum > 0 ? total / weight_sum : 0.0;
}

std::vector<float> all_logprobs(const ForwardBackwardOutput& output) {
  std::vector<float> out;
  for (const auto& record : output.loss_fn_outputs) {
    const auto values = record.at("logprobs").to_dense_floats();
    out.insert(out.end(), values.begin(), values.end());
  }
  return out;
}

std::vector<local::RequestRecord> requests_to(const local::AuditReport& audit, std::string_view endpoint) {
  std::vector<local::RequestRecord> out;
  for (const auto& record : audit.requests) {
    if (std::string_view(record.path).ends_with(endpoint)) out.push_back(record);
  }
  return out;
}

local::ModelAudit audit_of(const local::AuditReport& audit, std::string_view model_id) {
  for (const auto& model : audit.models) {
    if (model.model_id == model_id) return model;
  }
  throw std::runtime_error("the audit has no model " + std::string(model_id));
}

}  // namespace tinker::test
