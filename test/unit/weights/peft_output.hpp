// Running build_lora_adapter on a family written to disk and reading what it wrote.
#pragma once

#include "unit/weights/family_models.hpp"

#include <tinker/weights.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <string>
#include <vector>

namespace tinker::test::lora_fixtures {

struct PeftOutput {
  weights::ExportSummary summary;
  ReadBack tensors;
  std::string config_text;
  boost::json::object config;
};

/// Writes `family` under `root` (base/, adapter/), exports to root/peft and reads it back.
inline PeftOutput export_peft(const std::filesystem::path& root, const FamilyCase& family,
                              const std::string& base_name = "") {
  write_family(root, family);
  weights::LoraAdapterOptions options;
  options.adapter_dir = root / "adapter";
  options.base_model_dir = root / "base";
  options.output_dir = root / "peft";
  options.base_model_name = base_name;
  PeftOutput out;
  out.summary = weights::build_lora_adapter(options);
  out.tensors = read_safetensors(root / "peft" / "adapter_model.safetensors");
  out.config_text = tinker::test::read_file(root / "peft" / "adapter_config.json");
  out.config = boost::json::parse(out.config_text).as_object();
  return out;
}

/// The PEFT keys ("base_model.model.<module>.lora_A.weight", ".lora_B.weight") of `modules`, sorted.
inline std::vector<std::string> peft_keys_of(const std::vector<std::string>& modules) {
  std::vector<std::string> keys;
  for (const auto& module : modules) {
    for (auto& key : peft_keys(module)) keys.push_back(std::move(key));
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

inline std::vector<std::string> string_list(const boost::json::value& value) {
  std::vector<std::string> out;
  for (const auto& item : value.as_array()) out.emplace_back(item.as_string());
  return out;
}

}  // namespace tinker::test::lora_fixtures
