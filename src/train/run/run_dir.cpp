// RunDirectory: metrics.jsonl, checkpoints.jsonl and config.json of a training run, written so
// that a process killed at any instant leaves files a reader (and the next appender) can use.
#include "train/run/jsonl_file.hpp"

#include <tinker/error.hpp>
#include <tinker/train/run_dir.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <system_error>

namespace tinker::train {
namespace {
namespace run_dir_lines {

constexpr const char* metrics_file_name = "metrics.jsonl";
constexpr const char* checkpoints_file_name = "checkpoints.jsonl";
constexpr const char* config_file_name = "config.json";

// A JSON number in the shortest text that reads back to the same double. Non-finite values have
// no JSON spelling: they are written as null and read back as NaN (doc/training-loops.md).
void append_number(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, result.ptr);
}

void append_key(std::string& out, std::string_view key) {
  out += boost::json::serialize(boost::json::string(key));
  out += ": ";
}

std::string metrics_line(const StepMetrics& metrics) {
  std::string line = "{\"step\": " + std::to_string(metrics.step);
  for (const auto& [key, value] : metrics.values) {
    line += ", ";
    append_key(line, key);
    append_number(line, value);
  }
  line += "}\n";
  return line;
}

std::string checkpoint_line(const CheckpointRecord& record) {
  std::string line = "{";
  append_key(line, "name");
  line += boost::json::serialize(boost::json::string(record.name));
  // "batch" is the cookbook's spelling of the same counter: its tools resume from it.
  line += ", \"step\": " + std::to_string(record.step) + ", \"batch\": " + std::to_string(record.step);
  if (record.state_path) {
    line += ", ";
    append_key(line, "state_path");
    line += boost::json::serialize(boost::json::string(*record.state_path));
  }
  if (record.sampler_path) {
    line += ", ";
    append_key(line, "sampler_path");
    line += boost::json::serialize(boost::json::string(*record.sampler_path));
  }
  line += ", ";
  append_key(line, "renderer_name");
  line += boost::json::serialize(boost::json::string(record.renderer_name));
  line += record.final ? ", \"final\": true}\n" : ", \"final\": false}\n";
  return line;
}

// Python's json module writes NaN, Infinity and -Infinity for non-finite floats; Boost.JSON
// rejects them. Outside strings they become null (NaN) or an overflowing literal (±inf).
std::string with_python_constants_replaced(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      out += c;
    } else if (text.substr(i, 3) == "NaN") {
      out += "null";
      i += 2;
    } else if (text.substr(i, 8) == "Infinity") {
      out += "1e999";
      i += 7;
    } else {
      out += c;
    }
  }
  return out;
}

double number_value(const boost::json::value& value) {
  if (value.is_double()) return value.get_double();
  if (value.is_int64()) return static_cast<double>(value.get_int64());
  if (value.is_uint64()) return static_cast<double>(value.get_uint64());
  if (value.is_bool()) return value.get_bool() ? 1.0 : 0.0;
  return std::numeric_limits<double>::quiet_NaN();  // null: a non-finite value
}

bool is_numeric(const boost::json::value& value) {
  return value.is_number() || value.is_bool() || value.is_null();
}

std::optional<std::int64_t> integer_value(const boost::json::value& value) {
  if (value.is_int64()) return value.get_int64();
  if (value.is_uint64() && value.get_uint64() <= static_cast<std::uint64_t>(INT64_MAX)) {
    return static_cast<std::int64_t>(value.get_uint64());
  }
  if (value.is_double() && std::nearbyint(value.get_double()) == value.get_double() &&
      std::abs(value.get_double()) < 9e15) {
    return static_cast<std::int64_t>(value.get_double());  // a Python float step such as 3.0
  }
  return std::nullopt;
}

// Parses one line into an object; the error names the file and the line number.
boost::json::object parse_object(const jsonl::Line& line, const std::filesystem::path& file) {
  boost::system::error_code code;
  auto value = boost::json::parse(with_python_constants_replaced(line.text), code);
  if (code) {
    throw error(errc::invalid_file,
                file.string() + ":" + std::to_string(line.number) + ": not a JSON object (" + code.message() + ")");
  }
  if (!value.is_object()) {
    throw error(errc::invalid_file, file.string() + ":" + std::to_string(line.number) + ": not a JSON object");
  }
  return std::move(value.get_object());
}

[[noreturn]] void throw_bad_field(const std::filesystem::path& file, const jsonl::Line& line, std::string what) {
  throw error(errc::invalid_file, file.string() + ":" + std::to_string(line.number) + ": " + what);
}

std::int64_t step_of_metrics(const boost::json::object& object, const std::filesystem::path& file,
                             const jsonl::Line& line) {
  const auto* step = object.if_contains("step");
  const auto parsed = step ? integer_value(*step) : std::nullopt;
  if (!parsed) throw_bad_field(file, line, "\"step\" is missing or not an integer");
  return *parsed;
}

StepMetrics parse_metrics(const jsonl::Line& line, const std::filesystem::path& file) {
  const auto object = parse_object(line, file);
  StepMetrics metrics(step_of_metrics(object, file, line));
  for (const auto& entry : object) {
    // Strings, lists and objects (a cookbook run may log some) have no place in a double.
    if (entry.key() == "step" || !is_numeric(entry.value())) continue;
    metrics.set(entry.key(), number_value(entry.value()));
  }
  return metrics;
}

std::optional<std::string> optional_string(const boost::json::object& object, std::string_view key,
                                           const std::filesystem::path& file, const jsonl::Line& line) {
  const auto* value = object.if_contains(key);
  if (value == nullptr || value->is_null()) return std::nullopt;
  if (!value->is_string()) throw_bad_field(file, line, "\"" + std::string(key) + "\" is not a string");
  return std::string(value->get_string());
}

CheckpointRecord parse_checkpoint(const jsonl::Line& line, const std::filesystem::path& file) {
  const auto object = parse_object(line, file);
  CheckpointRecord record;
  auto name = optional_string(object, "name", file, line);
  if (!name) throw_bad_field(file, line, "\"name\" is missing");
  record.name = std::move(*name);
  // Ours write both; the cookbook's write "batch" only.
  const auto* step = object.if_contains("step");
  if (step == nullptr) step = object.if_contains("batch");
  const auto parsed_step = step ? integer_value(*step) : std::nullopt;
  if (!parsed_step) throw_bad_field(file, line, "\"step\" (or \"batch\") is missing or not an integer");
  record.step = *parsed_step;
  record.state_path = optional_string(object, "state_path", file, line);
  record.sampler_path = optional_string(object, "sampler_path", file, line);
  record.renderer_name = optional_string(object, "renderer_name", file, line).value_or("");
  const auto* final = object.if_contains("final");
  record.final = final != nullptr && final->is_bool() && final->get_bool();
  return record;
}

}  // namespace run_dir_lines
}  // namespace

RunDirectory::RunDirectory(std::filesystem::path path) : path_(std::move(path)) {
  if (path_.empty()) throw error(errc::invalid_argument, "RunDirectory: the path is empty");
  std::error_code code;
  std::filesystem::create_directories(path_, code);
  if (!std::filesystem::is_directory(path_)) {
    throw error(errc::invalid_argument, "RunDirectory: " + path_.string() +
                                            " is not a directory and cannot be made one" +
                                            (code ? " (" + code.message() + ")" : std::string()));
  }
}

void RunDirectory::write_config(std::string_view json_text) const {
  boost::system::error_code code;
  const auto parsed = boost::json::parse(json_text, code);
  if (code || !parsed.is_object()) {
    throw error(errc::invalid_argument, "RunDirectory::write_config: the configuration is not a JSON object");
  }
  std::string text(json_text);
  if (text.empty() || text.back() != '\n') text += '\n';
  jsonl::replace_file(path_ / run_dir_lines::config_file_name, text);
}

std::optional<std::string> RunDirectory::read_config() const {
  return jsonl::read_file_if_present(path_ / run_dir_lines::config_file_name);
}

void RunDirectory::append_metrics(const StepMetrics& metrics) const {
  jsonl::append_line(path_ / run_dir_lines::metrics_file_name, run_dir_lines::metrics_line(metrics));
}

std::vector<StepMetrics> RunDirectory::read_metrics() const {
  const auto file = path_ / run_dir_lines::metrics_file_name;
  std::vector<StepMetrics> result;
  for (const auto& line : jsonl::complete_lines(file)) result.push_back(run_dir_lines::parse_metrics(line, file));
  return result;
}

void RunDirectory::truncate_metrics(std::int64_t first_dropped_step) const {
  const auto file = path_ / run_dir_lines::metrics_file_name;
  if (!std::filesystem::exists(file)) return;
  std::string kept;
  for (const auto& line : jsonl::complete_lines(file)) {
    const auto object = run_dir_lines::parse_object(line, file);
    if (run_dir_lines::step_of_metrics(object, file, line) < first_dropped_step) {
      kept += line.text;  // the original text, byte for byte
      kept += '\n';
    }
  }
  jsonl::replace_file(file, kept);
}

void RunDirectory::append_checkpoint(const CheckpointRecord& record) const {
  jsonl::append_line(path_ / run_dir_lines::checkpoints_file_name, run_dir_lines::checkpoint_line(record));
}

std::vector<CheckpointRecord> RunDirectory::read_checkpoints() const {
  const auto file = path_ / run_dir_lines::checkpoints_file_name;
  std::vector<CheckpointRecord> result;
  for (const auto& line : jsonl::complete_lines(file)) {
    result.push_back(run_dir_lines::parse_checkpoint(line, file));
  }
  return result;
}

std::optional<CheckpointRecord> get_last_checkpoint(const std::filesystem::path& run_dir,
                                                    std::string_view required_key) {
  if (required_key != "state_path" && required_key != "sampler_path") {
    throw error(errc::invalid_argument,
                "get_last_checkpoint: required_key must be \"state_path\" or "
                "\"sampler_path\", got \"" +
                    std::string(required_key) + "\"");
  }
  if (!std::filesystem::is_directory(run_dir)) return std::nullopt;
  const auto file = run_dir / run_dir_lines::checkpoints_file_name;
  std::optional<CheckpointRecord> newest;
  for (const auto& line : jsonl::complete_lines(file)) {
    auto record = run_dir_lines::parse_checkpoint(line, file);
    const bool has_key = required_key == "state_path" ? record.state_path.has_value() : record.sampler_path.has_value();
    if (has_key) newest = std::move(record);
  }
  return newest;
}

}  // namespace tinker::train
