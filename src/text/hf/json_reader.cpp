// See json_reader.hpp.
#include "text/hf/json_reader.hpp"

#include "text/hf/model_stream.hpp"

#include <tinker/error.hpp>

#include <fstream>
#include <iterator>
#include <system_error>

namespace tinker::tokenizer_detail::hf {
namespace {

bool is_identifier(std::string_view key) noexcept {
  if (key.empty()) return false;
  for (std::size_t i = 0; i < key.size(); ++i) {
    const char c = key[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!letter && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

[[noreturn]] void fail_file(const std::filesystem::path& file, std::string_view problem) {
  throw error(errc::invalid_configuration, file.string() + ": " + std::string(problem));
}

}  // namespace

std::string read_text_file(const std::filesystem::path& file) {
  std::error_code ec;
  const auto status = std::filesystem::status(file, ec);
  if (!std::filesystem::exists(status)) fail_file(file, "no such file");
  if (std::filesystem::is_directory(status)) fail_file(file, "it is a directory, not a file");
  std::ifstream in(file, std::ios::binary);
  if (!in) fail_file(file, "the file cannot be opened");
  in.seekg(0, std::ios::end);
  const auto size = in.tellg();
  in.seekg(0, std::ios::beg);
  std::string bytes;
  if (size > 0) bytes.resize(static_cast<std::size_t>(size));
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (in.bad() || in.gcount() != static_cast<std::streamsize>(bytes.size())) fail_file(file, "the file cannot be read");
  return bytes;
}

namespace {

std::string position_of(std::string_view text, std::size_t offset) {
  std::size_t line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(offset - line_start + 1) + " (byte offset " +
         std::to_string(offset) + ")";
}

}  // namespace

std::string json_path(std::string_view parent, std::string_view key) {
  if (is_identifier(key)) return parent.empty() ? std::string(key) : std::string(parent) + "." + std::string(key);
  std::string path(parent);
  path += "[\"";
  for (const char c : key) {
    if (c == '"' || c == '\\') path += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      path += "?";
    } else {
      path += c;
    }
  }
  path += "\"]";
  return path;
}

std::string json_path(std::string_view parent, std::size_t index) {
  return std::string(parent) + "[" + std::to_string(index) + "]";
}

const char* json_kind_name(const boost::json::value& value) noexcept {
  switch (value.kind()) {
    case boost::json::kind::null: return "null";
    case boost::json::kind::bool_: return "a boolean";
    case boost::json::kind::int64:
    case boost::json::kind::uint64:
    case boost::json::kind::double_: return "a number";
    case boost::json::kind::string: return "a string";
    case boost::json::kind::array: return "an array";
    case boost::json::kind::object: return "an object";
  }
  return "a value";
}

std::string JsonFile::read() {
  std::string text = read_text_file(file_);
  if (text.empty()) fail(std::string_view(), "the file is empty");
  arena_ = std::make_unique<boost::json::monotonic_resource>();
  return text;
}

void JsonFile::fail_syntax(std::string_view text, std::size_t offset, const boost::system::error_code& ec) const {
  if (offset >= text.size() && (ec == boost::json::error::incomplete || ec == boost::json::error::syntax)) {
    fail(std::string_view(),
         "the JSON ends early (truncated file?) at " + position_of(text, text.size()) + ": " + ec.message());
  }
  fail(std::string_view(), "malformed JSON at " + position_of(text, offset) + ": " + ec.message());
}

JsonFile::JsonFile(std::filesystem::path file) : file_(std::move(file)) {
  const std::string text = read();
  boost::json::parse_options options;
  options.max_depth = 64;
  boost::json::stream_parser parser(boost::json::storage_ptr(), options);
  parser.reset(arena_.get());
  boost::system::error_code ec;
  const std::size_t used = parser.write_some(text.data(), text.size(), ec);
  if (!ec && used < text.size()) ec = boost::json::error::extra_data;
  if (ec) fail_syntax(text, used, ec);
  parser.finish(ec);
  if (ec) fail_syntax(text, text.size(), ec);
  root_ = parser.release();
}

JsonFile::JsonFile(std::filesystem::path file, StreamedModel& model) : file_(std::move(file)) {
  const std::string text = read();
  // Sized from the file, so the vocabulary's table is not regrown while it streams in.
  model.builder.reserve(text.size() / 64, text.size() / 8, 0);
  StreamProblem problem;
  boost::system::error_code ec;
  std::size_t offset = 0;
  root_ = parse_streaming_model(text, arena_.get(), model, problem, ec, offset);
  if (!problem.message.empty()) fail(problem.path, problem.message);
  if (ec) fail_syntax(text, offset, ec);
}

JsonFile::~JsonFile() {
  root_ = nullptr;  // release the document before its arena
}

void JsonFile::fail(std::string_view json_path, std::string_view problem) const {
  if (json_path.empty()) fail_file(file_, problem);
  fail_file(file_, std::string(json_path) + ": " + std::string(problem));
}

namespace {

const boost::json::object& checked_object(const JsonFile& file, const boost::json::value& value,
                                          const std::string& path) {
  if (!value.is_object()) {
    file.fail(path.empty() ? std::string_view("the document") : std::string_view(path),
              std::string("expected an object, found ") + json_kind_name(value));
  }
  return value.get_object();
}

}  // namespace

JsonObject::JsonObject(const JsonFile& file, const boost::json::value& value, std::string path)
    : file_(file), object_(checked_object(file, value, path)), path_(std::move(path)) {}

const boost::json::value* JsonObject::find(std::string_view key) const noexcept {
  const auto* value = object_.if_contains(boost::json::string_view(key.data(), key.size()));
  return value == nullptr || value->is_null() ? nullptr : value;
}

const boost::json::value& JsonObject::require(std::string_view key) const {
  const auto* value = find(key);
  if (value == nullptr) fail_at(key, "missing (required)");
  return *value;
}

std::string_view JsonObject::string(std::string_view key) const {
  return json_string(file_, require(key), path_of(key));
}

std::optional<std::string_view> JsonObject::optional_string(std::string_view key) const {
  const auto* value = find(key);
  if (value == nullptr) return std::nullopt;
  return json_string(file_, *value, path_of(key));
}

bool JsonObject::boolean(std::string_view key, bool fallback) const {
  const auto* value = find(key);
  if (value == nullptr) return fallback;
  if (!value->is_bool()) fail_at(key, std::string("expected a boolean, found ") + json_kind_name(*value));
  return value->get_bool();
}

std::uint64_t JsonObject::unsigned_integer(std::string_view key, std::uint64_t max) const {
  return json_unsigned(file_, require(key), path_of(key), max);
}

std::optional<std::uint64_t> JsonObject::optional_unsigned(std::string_view key, std::uint64_t max) const {
  const auto* value = find(key);
  if (value == nullptr) return std::nullopt;
  return json_unsigned(file_, *value, path_of(key), max);
}

const boost::json::array& JsonObject::array(std::string_view key) const {
  return json_array(file_, require(key), path_of(key));
}

JsonObject JsonObject::child(std::string_view key) const {
  return JsonObject(file_, require(key), path_of(key));
}

std::string_view json_string(const JsonFile& file, const boost::json::value& value, std::string_view path) {
  if (!value.is_string()) file.fail(path, std::string("expected a string, found ") + json_kind_name(value));
  const auto& text = value.get_string();
  return std::string_view(text.data(), text.size());
}

std::uint64_t json_unsigned(const JsonFile& file, const boost::json::value& value, std::string_view path,
                            std::uint64_t max) {
  std::uint64_t number = 0;
  if (value.is_uint64()) {
    number = value.get_uint64();
  } else if (value.is_int64() && value.get_int64() >= 0) {
    number = static_cast<std::uint64_t>(value.get_int64());
  } else {
    file.fail(path, std::string("expected a non-negative integer, found ") +
                        (value.is_number() ? "a negative or fractional number" : json_kind_name(value)));
  }
  if (number > max) file.fail(path, std::to_string(number) + " is too large (at most " + std::to_string(max) + ")");
  return number;
}

const boost::json::array& json_array(const JsonFile& file, const boost::json::value& value, std::string_view path) {
  if (!value.is_array()) file.fail(path, std::string("expected an array, found ") + json_kind_name(value));
  return value.get_array();
}

}  // namespace tinker::tokenizer_detail::hf
