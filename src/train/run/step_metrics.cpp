// StepMetrics: one line of metrics.jsonl as an ordered list of named values.
#include <tinker/error.hpp>
#include <tinker/train/run_dir.hpp>

#include <algorithm>
#include <string>

namespace tinker::train {

void StepMetrics::set(std::string_view key, double value) {
  if (key == "step") {
    throw error(errc::invalid_argument, "StepMetrics::set: \"step\" is the step field, not a value key");
  }
  const auto found = std::find_if(values.begin(), values.end(), [&](const auto& entry) { return entry.first == key; });
  if (found != values.end()) {
    found->second = value;
  } else {
    values.emplace_back(std::string(key), value);
  }
}

std::optional<double> StepMetrics::get(std::string_view key) const {
  const auto found = std::find_if(values.begin(), values.end(), [&](const auto& entry) { return entry.first == key; });
  if (found == values.end()) return std::nullopt;
  return found->second;
}

void StepMetrics::merge(const StepMetrics& other, std::string_view prefix) {
  for (const auto& [key, value] : other.values) {
    std::string prefixed(prefix);
    prefixed += key;
    set(prefixed, value);
  }
}

}  // namespace tinker::train
