// Input checks shared by the ready-made custom losses.
#include "losses/checks.hpp"

#include <cmath>

namespace tinker::losses::detail {

std::size_t target_count(std::string_view loss, const Datum& datum, std::size_t i) {
  auto it = datum.loss_fn_inputs.find("target_tokens");
  if (it == datum.loss_fn_inputs.end()) fail(loss, datum_path(i) + ".loss_fn_inputs.target_tokens: missing");
  std::size_t count = 1;
  for (std::int64_t extent : it->second.effective_shape()) count *= static_cast<std::size_t>(extent);
  return count;
}

std::vector<float> datum_weights(std::string_view loss, const Datum& datum, std::size_t i, std::size_t count,
                                 bool required) {
  auto it = datum.loss_fn_inputs.find("weights");
  const std::string path = datum_path(i) + ".loss_fn_inputs.weights";
  if (it == datum.loss_fn_inputs.end()) {
    if (required) fail(loss, path + ": missing (this loss weights the tokens by it)");
    return {};
  }
  std::vector<float> weights = it->second.to_dense_floats();
  if (weights.size() != count) {
    fail(loss, path + ": length " + std::to_string(weights.size()) + " != " + std::to_string(count) + " target tokens");
  }
  for (std::size_t t = 0; t < weights.size(); ++t) {
    if (!std::isfinite(weights[t])) fail(loss, path + "[" + std::to_string(t) + "]: not a finite number");
  }
  return weights;
}

void check_length(std::string_view loss, std::size_t i, std::string_view field, std::size_t size, std::size_t count) {
  if (size == count) return;
  fail(loss, datum_path(i) + ": " + std::string(field) + ": length " + std::to_string(size) +
                 " != " + std::to_string(count) + " target tokens");
}

void check_batch(std::string_view loss, std::string_view field, std::size_t size, std::size_t data_size) {
  if (size == data_size) return;
  fail(loss,
       std::string(field) + ": " + std::to_string(size) + " entries for " + std::to_string(data_size) + " datums");
}

}  // namespace tinker::losses::detail
