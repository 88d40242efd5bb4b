// Visitor members and the hand-written JSON codecs: scalars, enums, tensors, bytes, tagged
// unions, timestamps and free-form values.
#include "core/wire/json_codec.hpp"

#include "core/types/raw_json_access.hpp"
#include "core/types/tensor_checks.hpp"
#include "core/wire/field_path.hpp"
#include "core/wire/json_schema.hpp"

#include <tinker/error.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>

namespace tinker::wire {
namespace json = boost::json;

// ---------------------------------------------------------------------------------------------
// Visitors

void JsonEncoder::tag(std::string_view name, std::string_view literal) {
  writer_.schema_key(name);
  writer_.schema_literal(literal);
}

std::string JsonEncoder::path_string() const {
  std::string out;
  for (std::size_t level = 0; level < depth_; ++level) {
    const Segment& segment = this->segment(level);
    if (segment.is_index) {
      append_path_step(out, {}, static_cast<std::int64_t>(segment.index));
    } else {
      append_path_step(out, segment.key);
    }
  }
  return out;
}

void JsonEncoder::fail(std::string_view what) const {
  std::string where = path_string();
  throw error(errc::invalid_argument, (where.empty() ? std::string("value") : where) + ": " + std::string(what));
}

const json::value* JsonDecoder::find(std::string_view name) {
  const json::value* found = object_.if_contains(name);
  if (found != nullptr) {
    if (claimed_count_ < claimed_.size()) claimed_[claimed_count_] = name;
    ++claimed_count_;
  }
  return found;
}

void JsonDecoder::tag(std::string_view name, std::string_view literal) {
  const json::value* found = find(name);
  if (found == nullptr || found->is_null()) return;
  if (!found->is_string()) fail_type(Path(path_, name), "string", *found);
  if (found->get_string() != literal) {
    fail_at(Path(path_, name),
            "expected \"" + std::string(literal) + "\", got \"" + std::string(found->get_string()) + "\"");
  }
}

void JsonDecoder::strict() {
  if (claimed_count_ == object_.size()) return;
  for (const auto& entry : object_) {
    const std::string_view key = entry.key();
    bool claimed = false;
    for (std::size_t i = 0; i < std::min(claimed_count_, claimed_.size()); ++i) claimed = claimed || claimed_[i] == key;
    if (!claimed) fail_at(Path(path_, key), "unknown field (this object forbids extra fields)");
  }
}

// ---------------------------------------------------------------------------------------------
// Scalars

void write_json(JsonEncoder& e, const std::string& value) {
  if (!e.writer().string(value)) {
    if (!e.lenient()) e.fail("string is not valid UTF-8");
    e.writer().raw("\"<invalid UTF-8>\"");
  }
}

void write_json(JsonEncoder& e, bool value) {
  e.writer().boolean(value);
}
void write_json(JsonEncoder& e, std::int64_t value) {
  e.writer().integer(value);
}
void write_json(JsonEncoder& e, std::int32_t value) {
  e.writer().integer(value);
}
void write_json(JsonEncoder& e, std::uint64_t value) {
  e.writer().unsigned_integer(value);
}

namespace {
template <class Float>
void write_float(JsonEncoder& e, Float value) {
  if (e.writer().number(value)) return;
  if (!e.lenient()) e.fail("NaN and infinity cannot be encoded in JSON");
  e.writer().raw(std::isnan(value) ? "\"NaN\"" : (value > 0 ? "\"Infinity\"" : "\"-Infinity\""));
}
}  // namespace

void write_json(JsonEncoder& e, double value) {
  write_float(e, value);
}
void write_json(JsonEncoder& e, float value) {
  write_float(e, value);
}

void read_json(const json::value& v, const Path& p, std::string& out) {
  if (!v.is_string()) fail_type(p, "string", v);
  out.assign(v.get_string().data(), v.get_string().size());
}

void read_json(const json::value& v, const Path& p, bool& out) {
  if (!v.is_bool()) fail_type(p, "boolean", v);
  out = v.get_bool();
}

namespace {
// Integers accept JSON integers, and floats with an exact integral value (as pydantic does).
template <class Int>
Int read_integer(const json::value& v, const Path& p) {
  constexpr auto lo = std::numeric_limits<Int>::min();
  constexpr auto hi = std::numeric_limits<Int>::max();
  const char* type_name = std::is_signed_v<Int> ? (sizeof(Int) == 4 ? "int32" : "int64") : "uint64";
  if (v.is_int64()) {
    const std::int64_t i = v.get_int64();
    if constexpr (std::is_signed_v<Int>) {
      if (i >= lo && i <= hi) return static_cast<Int>(i);
    } else {
      if (i >= 0) return static_cast<Int>(i);
    }
    fail_at(p, "integer " + std::to_string(i) + " out of range for " + type_name);
  }
  if (v.is_uint64()) {
    const std::uint64_t u = v.get_uint64();
    if (u <= static_cast<std::uint64_t>(hi)) return static_cast<Int>(u);
    fail_at(p, "integer " + std::to_string(u) + " out of range for " + type_name);
  }
  if (v.is_double()) {
    const double d = v.get_double();
    if (std::trunc(d) != d) fail_type(p, "integer", v);
    // Exclusive upper bound: hi + 1 is exactly representable as a double, hi itself may not be.
    if (d >= static_cast<double>(lo) && d < static_cast<double>(hi) + 1.0) return static_cast<Int>(d);
    fail_at(p, std::string("integer out of range for ") + type_name);
  }
  fail_type(p, "integer", v);
}

double read_double(const json::value& v, const Path& p) {
  if (v.is_double()) {
    const double d = v.get_double();
    if (!std::isfinite(d)) fail_at(p, "number out of range");
    return d;
  }
  if (v.is_int64()) return static_cast<double>(v.get_int64());
  if (v.is_uint64()) return static_cast<double>(v.get_uint64());
  fail_type(p, "number", v);
}

float read_float(const json::value& v, const Path& p) {
  const double d = read_double(v, p);
  const auto f = static_cast<float>(d);
  if (!std::isfinite(f)) fail_at(p, "number out of range for float32");
  return f;
}
}  // namespace

void read_json(const json::value& v, const Path& p, std::int64_t& out) {
  out = read_integer<std::int64_t>(v, p);
}
void read_json(const json::value& v, const Path& p, std::int32_t& out) {
  out = read_integer<std::int32_t>(v, p);
}
void read_json(const json::value& v, const Path& p, std::uint64_t& out) {
  out = read_integer<std::uint64_t>(v, p);
}
void read_json(const json::value& v, const Path& p, double& out) {
  out = read_double(v, p);
}
void read_json(const json::value& v, const Path& p, float& out) {
  out = read_float(v, p);
}

// ---------------------------------------------------------------------------------------------
// Number arrays: the bulk of every request, written without per-element allocation.

void write_json(JsonEncoder& e, const std::vector<TokenId>& value) {
  e.writer().int_array(value);
}

void write_json(JsonEncoder& e, const std::vector<float>& value) {
  const std::ptrdiff_t bad = e.writer().float_array(value);
  if (bad < 0) return;
  e.push(static_cast<std::size_t>(bad));
  if (!e.lenient()) e.fail("NaN and infinity cannot be encoded in JSON");
  e.pop();
  e.writer().begin_array();
  for (const float f : value) write_float(e, f);
  e.writer().end_array();
}

namespace {
const json::array& expect_array(const json::value& v, const Path& p) {
  if (!v.is_array()) fail_type(p, "array", v);
  return v.get_array();
}
}  // namespace

void read_json(const json::value& v, const Path& p, std::vector<TokenId>& out) {
  const json::array& array = expect_array(v, p);
  out.resize(array.size());
  for (std::size_t i = 0; i < array.size(); ++i) {
    const json::value& item = array[i];
    if (item.is_int64() && item.get_int64() >= 0 && item.get_int64() <= std::numeric_limits<TokenId>::max()) {
      out[i] = static_cast<TokenId>(item.get_int64());  // fast path: a valid token id
    } else {
      out[i] = read_integer<TokenId>(item, Path(p, i));
    }
  }
}

void read_json(const json::value& v, const Path& p, std::vector<float>& out) {
  const json::array& array = expect_array(v, p);
  out.resize(array.size());
  for (std::size_t i = 0; i < array.size(); ++i) out[i] = read_float(array[i], Path(p, i));
}

// ---------------------------------------------------------------------------------------------
// Enums

namespace {
template <class Enum, std::size_t N>
struct EnumTable {
  std::array<std::pair<Enum, const char*>, N> entries;

  const char* name(Enum value) const {
    for (const auto& [e, n] : entries) {
      if (e == value) return n;
    }
    return entries[0].second;
  }

  bool parse(std::string_view text, Enum& out) const {
    for (const auto& [e, n] : entries) {
      if (text == n) {
        out = e;
        return true;
      }
    }
    return false;
  }

  std::string choices() const {
    std::string out;
    for (const auto& entry : entries) out += (out.empty() ? "" : ", ") + std::string(entry.second);
    return out;
  }
};

template <class Enum, std::size_t N>
void read_enum(const json::value& v, const Path& p, Enum& out, const EnumTable<Enum, N>& table) {
  if (!v.is_string()) fail_type(p, "string", v);
  const std::string_view text = v.get_string();
  if (table.parse(text, out)) return;
  fail_at(p, "unknown value \"" + std::string(text) + "\" (expected one of: " + table.choices() + ")");
}

}  // namespace

// Tables are shared with the public to_string functions below.
constexpr EnumTable<ImageFormat, 2> image_formats{{{{ImageFormat::png, "png"}, {ImageFormat::jpeg, "jpeg"}}}};
constexpr EnumTable<StopReason, 2> stop_reasons{{{{StopReason::stop, "stop"}, {StopReason::length, "length"}}}};
constexpr EnumTable<QueueState, 4> queue_states{{{{QueueState::active, "active"},
                                                  {QueueState::paused_rate_limit, "paused_rate_limit"},
                                                  {QueueState::paused_capacity, "paused_capacity"},
                                                  {QueueState::unknown, "unknown"}}}};
constexpr EnumTable<RequestErrorCategory, 3> error_categories{{{{RequestErrorCategory::unknown, "unknown"},
                                                                {RequestErrorCategory::server, "server"},
                                                                {RequestErrorCategory::user, "user"}}}};
constexpr EnumTable<CheckpointType, 3> checkpoint_types{{{{CheckpointType::training, "training"},
                                                          {CheckpointType::sampler, "sampler"},
                                                          {CheckpointType::external, "external"}}}};
constexpr EnumTable<TraceExportStatus, 3> trace_statuses{{{{TraceExportStatus::pending, "pending"},
                                                           {TraceExportStatus::ready, "ready"},
                                                           {TraceExportStatus::failed, "failed"}}}};
constexpr EnumTable<TelemetryEventKind, 4> event_kinds{
    {{{TelemetryEventKind::session_start, "SESSION_START"},
      {TelemetryEventKind::session_end, "SESSION_END"},
      {TelemetryEventKind::unhandled_exception, "UNHANDLED_EXCEPTION"},
      {TelemetryEventKind::generic_event, "GENERIC_EVENT"}}}};
constexpr EnumTable<Severity, 5> severities{{{{Severity::debug, "DEBUG"},
                                              {Severity::info, "INFO"},
                                              {Severity::warning, "WARNING"},
                                              {Severity::error, "ERROR"},
                                              {Severity::critical, "CRITICAL"}}}};

#define TINKER_ENUM_CODEC(Enum, table)                             \
  void write_json(JsonEncoder& e, Enum value) {                    \
    (void)e.writer().string(table.name(value));                    \
  }                                                                \
  void read_json(const json::value& v, const Path& p, Enum& out) { \
    read_enum(v, p, out, table);                                   \
  }                                                                \
  static_assert(true)

TINKER_ENUM_CODEC(ImageFormat, image_formats);
TINKER_ENUM_CODEC(StopReason, stop_reasons);
TINKER_ENUM_CODEC(CheckpointType, checkpoint_types);
TINKER_ENUM_CODEC(TraceExportStatus, trace_statuses);
TINKER_ENUM_CODEC(TelemetryEventKind, event_kinds);
TINKER_ENUM_CODEC(Severity, severities);
#undef TINKER_ENUM_CODEC

// Unrecognised queue states and error categories mean "unknown", not an error, so a newer server's
// values do not break an older client (doc/protocol.md#futures, doc/protocol.md#errors).
void write_json(JsonEncoder& e, QueueState value) {
  (void)e.writer().string(queue_states.name(value));
}
void read_json(const json::value& v, const Path& p, QueueState& out) {
  if (!v.is_string()) fail_type(p, "string", v);
  if (!queue_states.parse(v.get_string(), out)) out = QueueState::unknown;
}

void write_json(JsonEncoder& e, RequestErrorCategory value) {
  (void)e.writer().string(error_categories.name(value));
}
void read_json(const json::value& v, const Path& p, RequestErrorCategory& out) {
  if (!v.is_string()) fail_type(p, "string", v);
  if (!error_categories.parse(v.get_string(), out)) out = RequestErrorCategory::unknown;
}

// ---------------------------------------------------------------------------------------------
// Bytes, timestamps, free-form JSON

void write_json(JsonEncoder& e, const std::vector<std::uint8_t>& bytes) {
  (void)e.writer().string(base64_encode(bytes));  // base64 is ASCII
}

void read_json(const json::value& v, const Path& p, std::vector<std::uint8_t>& bytes) {
  if (!v.is_string()) fail_type(p, "string (base64)", v);
  std::string decoded;
  if (!base64_decode(v.get_string(), decoded)) fail_at(p, "invalid base64");
  bytes.assign(decoded.begin(), decoded.end());
}

void write_json(JsonEncoder& e, const Timestamp& value) {
  (void)e.writer().string(format_timestamp(value));
}

void read_json(const json::value& v, const Path& p, Timestamp& out) {
  if (!v.is_string()) fail_type(p, "string (RFC 3339 timestamp)", v);
  try {
    out = parse_timestamp(v.get_string());
  } catch (const error& e) {
    fail_at(p, e.diag().message);
  }
}

void write_json(JsonEncoder& e, const RawJson& value) {
  e.writer().raw(value.text());
}

void read_json(const json::value& v, const Path&, RawJson& out) {
  std::string text;
  write_value(v, text);
  out = RawJsonAccess::make(std::move(text));
}

}  // namespace tinker::wire

namespace tinker {
const char* to_string(ImageFormat v) noexcept {
  return wire::image_formats.name(v);
}
const char* to_string(StopReason v) noexcept {
  return wire::stop_reasons.name(v);
}
const char* to_string(QueueState v) noexcept {
  return wire::queue_states.name(v);
}
const char* to_string(CheckpointType v) noexcept {
  return wire::checkpoint_types.name(v);
}
const char* to_string(TraceExportStatus v) noexcept {
  return wire::trace_statuses.name(v);
}
const char* to_string(TelemetryEventKind v) noexcept {
  return wire::event_kinds.name(v);
}
const char* to_string(Severity v) noexcept {
  return wire::severities.name(v);
}
const char* to_string(DType v) noexcept {
  return v == DType::float32 ? "float32" : "int64";
}
}  // namespace tinker
