// JSON codecs of the optimizer unions (doc/training.md#optimizers): OptimParams (the step's
// hyper-parameters, `optim_params`) and OptimizerConfig (the model's optimizer, `optimizer_config`).
#include "core/wire/json_api.hpp"

#include <tinker/error.hpp>

#include <variant>

namespace tinker {

namespace wire {
namespace json = boost::json;

namespace {
// The `type` of an object, or empty when it has none (a tagless optim_params is AdamW: the SDK's
// AdamParams has no type field).
std::string_view optimizer_tag(const json::value& v, const Path& p) {
  if (!v.is_object()) fail_type(p, "object", v);
  const json::value* type = v.get_object().if_contains("type");
  if (type == nullptr || type->is_null()) return {};
  if (!type->is_string()) fail_type(Path(p, "type"), "string", *type);
  return type->get_string();
}
}  // namespace

// AdamW is written without a type (the 0.25-era AdamParams has none, so a server that decodes
// `AdamParams | OptimParamsBase` takes it as AdamW); Dimuon carries "type":"dimuon".
void write_json(JsonEncoder& e, const OptimParams& value) {
  std::visit([&](const auto& params) { write_json(e, params); }, value);
}

void read_json(const json::value& v, const Path& p, OptimParams& out) {
  const std::string_view type = optimizer_tag(v, p);
  if (type.empty() || type == "adamw") return read_json(v, p, out.emplace<AdamParams>());
  if (type == "dimuon") return read_json(v, p, out.emplace<DimuonParams>());
  fail_at(Path(p, "type"), "unknown optimizer \"" + std::string(type) + "\" (expected one of: adamw, dimuon)");
}

void write_json(JsonEncoder& e, const UnknownOptimizerConfig& value) {
  JsonWriter& w = e.writer();
  w.begin_object();
  e.req("type", value.type);
  for (const auto& [key, field] : value.fields) {
    if (key == "type") continue;  // the type member wins
    e.push(key);
    w.key(key);
    write_json(e, field);
    e.pop();
  }
  w.end_object();
}

void read_json(const json::value& v, const Path& p, UnknownOptimizerConfig& out) {
  if (!v.is_object()) fail_type(p, "object", v);
  out.fields.clear();
  for (const auto& entry : v.get_object()) {
    const std::string_view key = entry.key();
    if (key == "type") {
      read_json(entry.value(), Path(p, key), out.type);
    } else {
      read_json(entry.value(), Path(p, key), out.fields[std::string(key)]);
    }
  }
}

void write_json(JsonEncoder& e, const OptimizerConfig& value) {
  std::visit([&](const auto& config) { write_json(e, config); }, value);
}

// A type this SDK does not know is kept (UnknownOptimizerConfig), never an error.
void read_json(const json::value& v, const Path& p, OptimizerConfig& out) {
  const std::string_view type = optimizer_tag(v, p);
  if (type.empty()) fail_at(Path(p, "type"), "missing required field");
  if (type == "adamw") return read_json(v, p, out.emplace<AdamOptimizerConfig>());
  if (type == "dimuon") return read_json(v, p, out.emplace<DimuonOptimizerConfig>());
  read_json(v, p, out.emplace<UnknownOptimizerConfig>());
}

}  // namespace wire

TINKER_INSTANTIATE_JSON(DimuonParams);
TINKER_INSTANTIATE_JSON(AdamOptimizerConfig);
TINKER_INSTANTIATE_JSON(DimuonOptimizerConfig);
TINKER_INSTANTIATE_JSON(UnknownOptimizerConfig);

}  // namespace tinker
