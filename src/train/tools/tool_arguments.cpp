// ToolArguments (include/tinker/train/tool_env.hpp): a tool call's JSON object, read once.
#include <tinker/error.hpp>
#include <tinker/train/tool_env.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <string>

namespace tinker::train {

class ToolArguments::Parsed {
 public:
  boost::json::object object;
};

namespace {

boost::json::object parse_tool_arguments(std::string_view text) {
  boost::system::error_code failure;
  boost::json::value value = boost::json::parse(text, failure);
  if (failure) {
    throw tinker::error(errc::invalid_argument, "tool arguments are not JSON: " + failure.message());
  }
  if (!value.is_object()) {
    throw tinker::error(errc::invalid_argument,
                        "tool arguments must be a JSON object, got " + boost::json::serialize(value));
  }
  return std::move(value.get_object());
}

}  // namespace

ToolArguments::ToolArguments(std::string_view json_object_text)
    : text_(json_object_text), parsed_(std::make_unique<Parsed>()) {
  parsed_->object = parse_tool_arguments(json_object_text);
}

ToolArguments::ToolArguments(const ToolArguments& other)
    : text_(other.text_), parsed_(std::make_unique<Parsed>(*other.parsed_)) {}

ToolArguments& ToolArguments::operator=(const ToolArguments& other) {
  if (this != &other) {
    text_ = other.text_;
    parsed_ = std::make_unique<Parsed>(*other.parsed_);
  }
  return *this;
}

ToolArguments::~ToolArguments() = default;

std::vector<std::string> ToolArguments::names() const {
  std::vector<std::string> names;
  for (const auto& entry : parsed_->object) names.emplace_back(entry.key());
  return names;
}

bool ToolArguments::has(std::string_view name) const {
  return parsed_->object.contains(name);
}

std::optional<std::string> ToolArguments::string(std::string_view name) const {
  const boost::json::value* value = parsed_->object.if_contains(name);
  if (value == nullptr || !value->is_string()) return std::nullopt;
  return std::string(value->get_string());
}

std::optional<double> ToolArguments::number(std::string_view name) const {
  const boost::json::value* value = parsed_->object.if_contains(name);
  if (value == nullptr || !value->is_number()) return std::nullopt;
  return value->to_number<double>();
}

std::optional<bool> ToolArguments::boolean(std::string_view name) const {
  const boost::json::value* value = parsed_->object.if_contains(name);
  if (value == nullptr || !value->is_bool()) return std::nullopt;
  return value->get_bool();
}

std::optional<std::string> ToolArguments::json(std::string_view name) const {
  const boost::json::value* value = parsed_->object.if_contains(name);
  if (value == nullptr) return std::nullopt;
  return boost::json::serialize(*value);
}

}  // namespace tinker::train
