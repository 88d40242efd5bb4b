// The GGUF tests' reference reader: test/data/weights/gguf_reference.js parses a file with the npm
// package @huggingface/gguf (installed by .ci/install-deps) and prints its metadata, tensor infos and
// decoded tensor values as JSON.
#pragma once

#include "support/tokenizer_reference.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace tinker::test {

/// What @huggingface/gguf read from `file` (see gguf_reference.js for the shape).
inline boost::json::value read_gguf_with_reference(const std::filesystem::path& file) {
  const std::filesystem::path script = std::filesystem::path(TINKER_TEST_DATA_DIR) / "weights" / "gguf_reference.js";
  const std::vector<std::string> lines = run_node_script(script, {file.string(), npm_node_modules().string()});
  if (lines.size() != 1) {
    throw std::runtime_error(script.string() + " printed " + std::to_string(lines.size()) + " lines for " +
                             file.string());
  }
  return boost::json::parse(lines.front());
}

/// The tensor called `name` in a reading, or nullptr.
inline const boost::json::object* find_gguf_tensor(const boost::json::value& reading, std::string_view name) {
  for (const boost::json::value& tensor : reading.at("tensors").as_array()) {
    if (tensor.at("name").as_string() == name) return &tensor.as_object();
  }
  return nullptr;
}

/// A JSON array of numbers as integers.
inline std::vector<std::int64_t> json_ints(const boost::json::value& array) {
  std::vector<std::int64_t> out;
  for (const boost::json::value& item : array.as_array()) out.push_back(item.to_number<std::int64_t>());
  return out;
}

/// A JSON array of numbers as floats.
inline std::vector<float> json_floats(const boost::json::value& array) {
  std::vector<float> out;
  for (const boost::json::value& item : array.as_array()) out.push_back(static_cast<float>(item.to_number<double>()));
  return out;
}

}  // namespace tinker::test
