// Reading tokenizer.json and tokenizer_config.json with Boost.JSON: parse errors name the file and
// the line, column and byte offset; wrong or missing fields name the file and the JSON path
// ("model.merges[12]", "pre_tokenizer.pretokenizers[0].pattern"). Errors are tinker::error
// (invalid_configuration).
#pragma once

#include <boost/json.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace tinker::tokenizer_detail::hf {

class StreamedModel;

/// The bytes of a file; fails naming it when it is missing or unreadable (an empty file is fine).
std::string read_text_file(const std::filesystem::path& file);

/// "parent.key" (or `parent["key"]` when the key is not an identifier), "key" at the root.
std::string json_path(std::string_view parent, std::string_view key);
/// "parent[index]".
std::string json_path(std::string_view parent, std::size_t index);
/// "a string", "an object", ... for messages.
const char* json_kind_name(const boost::json::value& value) noexcept;

/// A parsed JSON file. The document lives in a monotonic arena owned by this object (one
/// allocation stream, freed at once), so a large vocabulary costs no per-node frees.
class JsonFile {
 public:
  /// Reads and parses `file`; fails naming it for a missing, unreadable or malformed file.
  explicit JsonFile(std::filesystem::path file);
  /// A tokenizer.json, with model.vocab and model.merges read into `model` while parsing (see
  /// model_stream.hpp).
  JsonFile(std::filesystem::path file, StreamedModel& model);
  JsonFile(const JsonFile&) = delete;
  JsonFile& operator=(const JsonFile&) = delete;
  ~JsonFile();

  const std::filesystem::path& path() const noexcept { return file_; }
  const boost::json::value& root() const noexcept { return root_; }
  /// Throws tinker::error(invalid_configuration): "<file>: <json path>: <problem>".
  [[noreturn]] void fail(std::string_view json_path, std::string_view problem) const;

 private:
  std::filesystem::path file_;
  std::unique_ptr<boost::json::monotonic_resource> arena_;
  boost::json::value root_;

  std::string read();
  [[noreturn]] void fail_syntax(std::string_view text, std::size_t offset, const boost::system::error_code& ec) const;
};

/// A JSON object at a known path, with typed field access that fails naming the field's path.
/// A field that is absent or null takes the given default where there is one.
class JsonObject {
 public:
  /// Fails unless `value` is an object.
  JsonObject(const JsonFile& file, const boost::json::value& value, std::string path);

  const std::string& path() const noexcept { return path_; }
  const boost::json::object& object() const noexcept { return object_; }
  const JsonFile& file() const noexcept { return file_; }
  std::string path_of(std::string_view key) const { return json_path(path_, key); }

  /// The field, or nullptr when it is absent or null.
  const boost::json::value* find(std::string_view key) const noexcept;
  const boost::json::value& require(std::string_view key) const;

  std::string_view string(std::string_view key) const;
  std::optional<std::string_view> optional_string(std::string_view key) const;
  bool boolean(std::string_view key, bool fallback) const;
  std::uint64_t unsigned_integer(std::string_view key, std::uint64_t max) const;
  std::optional<std::uint64_t> optional_unsigned(std::string_view key, std::uint64_t max) const;
  const boost::json::array& array(std::string_view key) const;
  JsonObject child(std::string_view key) const;

  [[noreturn]] void fail(std::string_view problem) const { file_.fail(path_, problem); }
  [[noreturn]] void fail_at(std::string_view key, std::string_view problem) const { file_.fail(path_of(key), problem); }

 private:
  const JsonFile& file_;
  const boost::json::object& object_;
  std::string path_;
};

/// Type checks of array elements and other values at `path`.
std::string_view json_string(const JsonFile& file, const boost::json::value& value, std::string_view path);
std::uint64_t json_unsigned(const JsonFile& file, const boost::json::value& value, std::string_view path,
                            std::uint64_t max);
const boost::json::array& json_array(const JsonFile& file, const boost::json::value& value, std::string_view path);

}  // namespace tinker::tokenizer_detail::hf
