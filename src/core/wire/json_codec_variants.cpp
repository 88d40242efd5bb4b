// JSON codecs of TensorData and of the protocol's unions: model-input chunks, stop conditions,
// top-k entries, billing event info, and the forward_backward request (whose JSON form has no
// forward_only field).
#include "core/types/tensor_checks.hpp"
#include "core/wire/json_codec.hpp"
#include "core/wire/json_schema.hpp"

#include <tinker/error.hpp>

#include <limits>
#include <variant>

namespace tinker::wire {
namespace json = boost::json;

// ---------------------------------------------------------------------------------------------
// TensorData (doc/protocol.md#core-types): dense, or sparse CSR with crow/col indices

void write_json(JsonEncoder& e, const TensorData& t) {
  if (!e.lenient()) {
    const std::string problem = detail::tensor_structure_problem(t);
    if (!problem.empty()) e.fail(problem);
  }
  JsonWriter& w = e.writer();
  w.begin_object();
  w.key("data");
  e.push("data");
  if (const auto* floats = std::get_if<std::vector<float>>(&t.values)) {
    write_json(e, *floats);
  } else {
    w.int_array(std::get<std::vector<std::int64_t>>(t.values));
  }
  e.pop();
  e.tag("dtype", to_string(t.dtype()));
  if (t.shape) {
    w.key("shape");
    w.int_array(*t.shape);
  }
  if (t.sparse_crow_indices) {
    w.key("sparse_crow_indices");
    w.int_array(*t.sparse_crow_indices);
  }
  if (t.sparse_col_indices) {
    w.key("sparse_col_indices");
    w.int_array(*t.sparse_col_indices);
  }
  w.end_object();
}

namespace {
void read_int64_array(const json::value& v, const Path& p, std::vector<std::int64_t>& out) {
  if (!v.is_array()) fail_type(p, "array", v);
  const json::array& array = v.get_array();
  out.resize(array.size());
  for (std::size_t i = 0; i < array.size(); ++i) {
    const json::value& item = array[i];
    if (item.is_int64()) {
      out[i] = item.get_int64();
    } else {
      read_json(item, Path(p, i), out[i]);
    }
  }
}

void read_optional_int64_array(JsonDecoder& d, std::string_view name, std::optional<std::vector<std::int64_t>>& out) {
  const json::value* found = d.object().if_contains(name);
  if (found == nullptr || found->is_null()) return;
  read_int64_array(*found, Path(d.path(), name), out.emplace());
}
}  // namespace

void read_json(const json::value& v, const Path& p, TensorData& out) {
  if (!v.is_object()) fail_type(p, "object", v);
  JsonDecoder d(v.get_object(), p);
  std::string dtype;
  d.req("dtype", dtype);
  const json::value* data = v.get_object().if_contains("data");
  if (data == nullptr) fail_at(Path(p, "data"), "missing required field");
  if (dtype == "float32") {
    read_json(*data, Path(p, "data"), out.values.emplace<std::vector<float>>());
  } else if (dtype == "int64") {
    read_int64_array(*data, Path(p, "data"), out.values.emplace<std::vector<std::int64_t>>());
  } else {
    fail_at(Path(p, "dtype"), "unknown dtype \"" + dtype + "\" (expected one of: float32, int64)");
  }
  read_optional_int64_array(d, "shape", out.shape);
  read_optional_int64_array(d, "sparse_crow_indices", out.sparse_crow_indices);
  read_optional_int64_array(d, "sparse_col_indices", out.sparse_col_indices);
  const std::string problem = detail::tensor_structure_problem(out);
  if (!problem.empty()) fail_at(p, problem);
}

// ---------------------------------------------------------------------------------------------
// Tagged unions: the alternative is chosen by the object's `type` field.

namespace {
template <class Variant>
void write_alternative(JsonEncoder& e, const Variant& value) {
  std::visit([&](const auto& alternative) { write_json(e, alternative); }, value);
}

std::string_view read_type_tag(const json::value& v, const Path& p) {
  if (!v.is_object()) fail_type(p, "object", v);
  const json::value* type = v.get_object().if_contains("type");
  if (type == nullptr) fail_at(Path(p, "type"), "missing required field");
  if (!type->is_string()) fail_type(Path(p, "type"), "string", *type);
  return type->get_string();
}

[[noreturn]] void fail_unknown_type(const Path& p, std::string_view type, std::string_view choices) {
  fail_at(Path(p, "type"),
          "unknown type \"" + std::string(type) + "\" (expected one of: " + std::string(choices) + ")");
}
}  // namespace

void write_json(JsonEncoder& e, const ModelInputChunk& value) {
  write_alternative(e, value);
}

void read_json(const json::value& v, const Path& p, ModelInputChunk& out) {
  const std::string_view type = read_type_tag(v, p);
  if (type == "encoded_text") return read_json(v, p, out.emplace<EncodedTextChunk>());
  if (type == "image") return read_json(v, p, out.emplace<ImageChunk>());
  if (type == "image_asset_pointer") return read_json(v, p, out.emplace<ImageAssetPointerChunk>());
  if (type == "dmel") return read_json(v, p, out.emplace<DmelChunk>());
  fail_unknown_type(p, type, "encoded_text, image, image_asset_pointer, dmel");
}

// Datum provenance (doc/training.md#provenance): {"type": "prompt" | "sampled", ...}. Only servers decode it,
// and a server cannot check a span it does not know, so an unknown type is refused.
void write_json(JsonEncoder& e, const ProvenanceSpan& value) {
  write_alternative(e, value);
}

void read_json(const json::value& v, const Path& p, ProvenanceSpan& out) {
  const std::string_view type = read_type_tag(v, p);
  if (type == "prompt") return read_json(v, p, out.emplace<PromptProvenanceSpan>());
  if (type == "sampled") return read_json(v, p, out.emplace<SampledProvenanceSpan>());
  fail_unknown_type(p, type, "prompt, sampled");
}

void write_json(JsonEncoder& e, const billing::EventInfo& value) {
  write_alternative(e, value);
}

void read_json(const json::value& v, const Path& p, billing::EventInfo& out) {
  const std::string_view type = read_type_tag(v, p);
  if (type == "training") return read_json(v, p, out.emplace<billing::Training>());
  if (type == "sampling_prefill") return read_json(v, p, out.emplace<billing::SamplingPrefill>());
  if (type == "sampling_sample") return read_json(v, p, out.emplace<billing::SamplingSample>());
  if (type == "checkpoint") return read_json(v, p, out.emplace<billing::CheckpointEvent>());
  if (type == "storage") return read_json(v, p, out.emplace<billing::Storage>());
  fail_unknown_type(p, type, "training, sampling_prefill, sampling_sample, checkpoint, storage");
}

// ---------------------------------------------------------------------------------------------
// SearchOwner (doc/rest.md#search-sessions): {"type": "own"} | {"type": "accessible"} |
// {"type": "user", "owner_urns": [1..10 URNs]}. Only servers decode it, and a server cannot
// search for an owner it does not know, so an unknown type is refused (not kept).

namespace {
constexpr std::size_t max_search_owner_urns = 10;

const char* search_owner_type(SearchOwner::Kind kind) {
  switch (kind) {
    case SearchOwner::Kind::own: return "own";
    case SearchOwner::Kind::accessible: return "accessible";
    case SearchOwner::Kind::user: return "user";
  }
  return "own";
}

std::string search_owner_urns_problem(const SearchOwner& owner) {
  if (owner.kind != SearchOwner::Kind::user) {
    return owner.owner_urns.empty() ? std::string() : "owner_urns is only allowed with type \"user\"";
  }
  const std::size_t count = owner.owner_urns.size();
  if (count == 0 || count > max_search_owner_urns) {
    return "owner_urns must hold 1..10 URNs, got " + std::to_string(count);
  }
  return {};
}
}  // namespace

void write_json(JsonEncoder& e, const SearchOwner& value) {
  if (!e.lenient()) {
    const std::string problem = search_owner_urns_problem(value);
    if (!problem.empty()) e.fail(problem);
  }
  e.writer().begin_object();
  e.tag("type", search_owner_type(value.kind));
  if (value.kind == SearchOwner::Kind::user || !value.owner_urns.empty()) e.req("owner_urns", value.owner_urns);
  e.writer().end_object();
}

void read_json(const json::value& v, const Path& p, SearchOwner& out) {
  const std::string_view type = read_type_tag(v, p);
  JsonDecoder d(v.get_object(), p);
  if (type == "own") {
    out = SearchOwner::own();
  } else if (type == "accessible") {
    out = SearchOwner::accessible();
  } else if (type == "user") {
    std::vector<std::string> urns;
    d.req("owner_urns", urns);
    out = SearchOwner::users(std::move(urns));
    const std::string problem = search_owner_urns_problem(out);
    if (!problem.empty()) fail_at(Path(p, "owner_urns"), problem);
  } else {
    fail_unknown_type(p, type, "own, accessible, user");
  }
}

// ---------------------------------------------------------------------------------------------
// SamplingParams.stop: a string, a list of strings, or a list of token ids.

void write_json(JsonEncoder& e, const StopCondition& value) {
  std::visit([&](const auto& alternative) { write_json(e, alternative); }, value);
}

void read_json(const json::value& v, const Path& p, StopCondition& out) {
  if (v.is_string()) return read_json(v, p, out.emplace<std::string>());
  if (!v.is_array()) fail_type(p, "string or array", v);
  const json::array& array = v.get_array();
  // An empty list is read as "no stop strings"; both forms mean the same.
  if (array.empty() || array.front().is_string()) return read_json(v, p, out.emplace<std::vector<std::string>>());
  read_json(v, p, out.emplace<std::vector<TokenId>>());
}

// ---------------------------------------------------------------------------------------------
// Top-k prompt logprob entry: [token_id, logprob].

void write_json(JsonEncoder& e, const TopkEntry& value) {
  e.writer().begin_array();
  write_json(e, value.first);
  write_json(e, value.second);
  e.writer().end_array();
}

void read_json(const json::value& v, const Path& p, TopkEntry& out) {
  if (!v.is_array()) fail_type(p, "[token_id, logprob] array", v);
  const json::array& pair = v.get_array();
  if (pair.size() != 2) fail_at(p, "expected [token_id, logprob], got " + std::to_string(pair.size()) + " elements");
  read_json(pair[0], Path(p, 0), out.first);
  read_json(pair[1], Path(p, 1), out.second);
}

// ---------------------------------------------------------------------------------------------
// ForwardBackwardRequest: its JSON form (doc/protocol.md#endpoints, forward_backward).

void write_json(JsonEncoder& e, const ForwardBackwardRequest& value) {
  if (value.forward_only && !e.lenient()) {
    e.push("forward_only");
    e.fail(
        "the JSON form of forward_backward has no forward_only; send a ForwardRequest to /api/v1/forward "
        "or use the protobuf form");
  }
  e.writer().begin_object();
  e.req("forward_backward_input", value.forward_backward_input);
  e.req("model_id", value.model_id);
  e.req("seq_id", value.seq_id);
  if (value.forward_only) e.req("forward_only", value.forward_only);  // lenient (printing) only
  e.writer().end_object();
}

void read_json(const json::value& v, const Path& p, ForwardBackwardRequest& out) {
  if (!v.is_object()) fail_type(p, "object", v);
  JsonDecoder d(v.get_object(), p);
  d.req("forward_backward_input", out.forward_backward_input);
  d.req("model_id", out.model_id);
  d.req("seq_id", out.seq_id);
  out.forward_only = false;
}

}  // namespace tinker::wire
