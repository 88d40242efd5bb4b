// See safetensors_header.hpp. The header comes from files a user downloaded: every number is
// checked for overflow before it is used, and every problem names the file and the tensor.
#include "weights/safetensors_header.hpp"

#include <tinker/error.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>

namespace tinker::safetensors::detail {
namespace {

namespace json = boost::json;

// A valid header nests three levels deep (object, tensor, shape); the limit keeps a hostile one
// from recursing through the parser's stack.
constexpr std::size_t header_max_depth = 16;

[[noreturn]] void fail_header(const std::string& label, const std::string& problem) {
  throw error(errc::invalid_file, label + ": " + problem);
}

[[noreturn]] void fail_tensor(const std::string& label, std::string_view tensor, const std::string& problem) {
  fail_header(label, "tensor '" + std::string(tensor) + "': " + problem);
}

std::string offsets_text(std::uint64_t begin, std::uint64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + "]";
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i == 0 ? "" : ", ") + std::to_string(shape[i]);
  return text + "]";
}

// A JSON number that is a non-negative integer (as int64 or uint64), or nullopt.
std::optional<std::uint64_t> non_negative_integer(const json::value& value) noexcept {
  if (const auto* i = value.if_int64()) {
    if (*i >= 0) return static_cast<std::uint64_t>(*i);
    return std::nullopt;
  }
  if (const auto* u = value.if_uint64()) return *u;
  return std::nullopt;
}

std::uint64_t read_header_length(std::span<const std::byte> file, const std::string& label) {
  if (file.size() < 8) {
    fail_header(label, "file of " + std::to_string(file.size()) + " bytes is shorter than the 8-byte header length");
  }
  std::uint64_t length = 0;
  std::memcpy(&length, file.data(), sizeof length);  // little-endian, as the machines this builds for
  if (length > file.size() - 8) {
    fail_header(label, "header length " + std::to_string(length) + " exceeds the file size (" +
                           std::to_string(file.size()) + " bytes)");
  }
  if (length > max_header_bytes) {
    fail_header(label, "header length " + std::to_string(length) + " exceeds the limit of " +
                           std::to_string(max_header_bytes) + " bytes");
  }
  return length;
}

json::object parse_header_object(std::string_view text, const std::string& label) {
  json::parse_options options;
  options.max_depth = header_max_depth;
  boost::system::error_code ec;
  json::value value = json::parse(text, ec, {}, options);
  if (ec) fail_header(label, "header is not valid JSON (" + ec.message() + ")");
  if (!value.is_object()) fail_header(label, "header is not a JSON object");
  return std::move(value.as_object());
}

std::map<std::string, std::string> read_metadata(const json::value& value, const std::string& label) {
  const auto* object = value.if_object();
  if (object == nullptr) fail_header(label, "__metadata__ is not an object");
  std::map<std::string, std::string> metadata;
  for (const auto& [key, entry] : *object) {
    const auto* text = entry.if_string();
    if (text == nullptr) fail_header(label, "__metadata__ '" + std::string(key) + "' is not a string");
    metadata.emplace(std::string(key), std::string(*text));
  }
  return metadata;
}

std::vector<std::int64_t> read_shape(const json::value& value, const std::string& label, std::string_view name) {
  const auto* array = value.if_array();
  if (array == nullptr) fail_tensor(label, name, "shape is not an array");
  std::vector<std::int64_t> shape;
  shape.reserve(array->size());
  for (const auto& dim : *array) {
    const auto size = non_negative_integer(dim);
    if (!size || *size > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      fail_tensor(label, name, "shape is not an array of non-negative integers");
    }
    shape.push_back(static_cast<std::int64_t>(*size));
  }
  return shape;
}

// The tensor's byte length, dtype x shape, or a failure when it does not fit in 64 bits.
std::uint64_t expected_bytes(const TensorInfo& tensor, const std::string& label) {
  std::uint64_t bytes = dtype_size(tensor.dtype);
  bool zero = false;
  bool overflow = false;
  for (const auto dim : tensor.shape) {
    const auto size = static_cast<std::uint64_t>(dim);
    if (size == 0) zero = true;
    if (size != 0 && bytes > std::numeric_limits<std::uint64_t>::max() / size) overflow = true;
    if (!overflow) bytes *= size;
  }
  if (zero) return 0;  // a zero dimension makes any other product harmless
  if (overflow) fail_tensor(label, tensor.name, "shape " + shape_text(tensor.shape) + " is too large");
  return bytes;
}

void read_offsets(const json::value& value, TensorInfo& tensor, const std::string& label) {
  const auto* array = value.if_array();
  std::optional<std::uint64_t> begin;
  std::optional<std::uint64_t> end;
  if (array != nullptr && array->size() == 2) {
    begin = non_negative_integer((*array)[0]);
    end = non_negative_integer((*array)[1]);
  }
  if (!begin || !end) fail_tensor(label, tensor.name, "data_offsets is not [begin, end] of non-negative integers");
  tensor.begin = *begin;
  tensor.end = *end;
}

TensorInfo read_tensor(std::string_view name, const json::value& value, const std::string& label) {
  const auto* object = value.if_object();
  if (object == nullptr) fail_tensor(label, name, "not an object");
  for (const auto& entry : *object) {
    if (entry.key() != "dtype" && entry.key() != "shape" && entry.key() != "data_offsets") {
      fail_tensor(label, name, "unexpected key '" + std::string(entry.key()) + "'");
    }
  }
  for (const char* key : {"dtype", "shape", "data_offsets"}) {
    if (!object->contains(key)) fail_tensor(label, name, std::string("no \"") + key + "\"");
  }
  TensorInfo tensor;
  tensor.name = std::string(name);
  const auto* dtype_name = object->at("dtype").if_string();
  if (dtype_name == nullptr) fail_tensor(label, name, "dtype is not a string");
  const auto dtype = dtype_from_string(*dtype_name);
  if (!dtype) fail_tensor(label, name, "unknown dtype '" + std::string(*dtype_name) + "'");
  tensor.dtype = *dtype;
  tensor.shape = read_shape(object->at("shape"), label, name);
  read_offsets(object->at("data_offsets"), tensor, label);
  return tensor;
}

void check_range(const TensorInfo& tensor, std::uint64_t data_size, const std::string& label) {
  const auto offsets = offsets_text(tensor.begin, tensor.end);
  if (tensor.begin > tensor.end) fail_tensor(label, tensor.name, "data_offsets " + offsets + " end before they begin");
  if (tensor.end > data_size) {
    fail_tensor(label, tensor.name,
                "data_offsets " + offsets + " exceed the data section (" + std::to_string(data_size) + " bytes)");
  }
  const std::uint64_t needed = expected_bytes(tensor, label);
  if (tensor.end - tensor.begin != needed) {
    fail_tensor(label, tensor.name,
                "data_offsets " + offsets + " hold " + std::to_string(tensor.end - tensor.begin) + " bytes, but " +
                    std::string(to_string(tensor.dtype)) + " " + shape_text(tensor.shape) + " needs " +
                    std::to_string(needed));
  }
}

// Sorts by begin and refuses two non-empty ranges sharing a byte. Gaps are allowed (the
// reference reader refuses them, but they are harmless to read).
void sort_and_check_overlaps(std::vector<TensorInfo>& tensors, const std::string& label) {
  std::sort(tensors.begin(), tensors.end(), [](const TensorInfo& a, const TensorInfo& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.name < b.name;
  });
  const TensorInfo* furthest = nullptr;  // the non-empty tensor reaching furthest so far
  for (const auto& tensor : tensors) {
    if (tensor.begin == tensor.end) continue;
    if (furthest != nullptr && tensor.begin < furthest->end) {
      fail_tensor(label, tensor.name,
                  "data_offsets " + offsets_text(tensor.begin, tensor.end) + " overlap tensor '" + furthest->name +
                      "' " + offsets_text(furthest->begin, furthest->end));
    }
    if (furthest == nullptr || tensor.end > furthest->end) furthest = &tensor;
  }
}

}  // namespace

ParsedHeader parse_header(std::span<const std::byte> file, const std::string& label) {
  const std::uint64_t length = read_header_length(file, label);
  const std::string_view text(reinterpret_cast<const char*>(file.data()) + 8, static_cast<std::size_t>(length));
  const json::object header = parse_header_object(text, label);
  ParsedHeader parsed;
  parsed.data_offset = 8 + length;
  const std::uint64_t data_size = file.size() - parsed.data_offset;
  parsed.tensors.reserve(header.size());
  for (const auto& [key, value] : header) {
    if (key == "__metadata__") {
      parsed.metadata = read_metadata(value, label);
      continue;
    }
    parsed.tensors.push_back(read_tensor(key, value, label));
    check_range(parsed.tensors.back(), data_size, label);
  }
  sort_and_check_overlaps(parsed.tensors, label);
  return parsed;
}

}  // namespace tinker::safetensors::detail
