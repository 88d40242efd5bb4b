// conversation_from_json: the cookbook's / OpenAI's message JSON into renderers::Message.
#include "core/wire/json_reader.hpp"
#include "core/wire/json_writer.hpp"

#include <tinker/error.hpp>
#include <tinker/renderers.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

namespace tinker::renderers {
namespace {

namespace json = boost::json;
using wire::Path;

[[noreturn]] void fail(const Path& path, std::string_view what) {
  const std::string where = path.str();
  throw error(errc::invalid_argument,
              "conversation JSON: " + (where.empty() ? std::string("the document") : where) + ": " + std::string(what));
}

const json::object& as_object(const json::value& value, const Path& path) {
  if (!value.is_object()) fail(path, std::string("expected an object, got ") + wire::json_kind(value));
  return value.get_object();
}

std::string as_string(const json::value& value, const Path& path) {
  if (!value.is_string()) fail(path, std::string("expected a string, got ") + wire::json_kind(value));
  return std::string(value.get_string());
}

const json::value* optional_field(const json::object& object, std::string_view key) {
  const json::value* value = object.if_contains(key);
  return value == nullptr || value->is_null() ? nullptr : value;
}

const json::value& required_field(const json::object& object, std::string_view key, const Path& path) {
  const json::value* value = optional_field(object, key);
  if (value == nullptr) fail(Path(path, key), "required");
  return *value;
}

// An ImagePart from one of the factories, their error re-thrown under the JSON path.
template <class Make>
ImagePart image_part_at(const Path& path, Make&& make) {
  try {
    return make();
  } catch (const error& e) {
    fail(path, e.diag().message);
  }
}

// {"type": "image", "image": base64 or a data: URI, "format"?}: the format is read from the bytes,
// so "format" only has to name one of the encodings.
ImagePart read_image_part(const json::object& part, const Path& path) {
  if (const json::value* format = optional_field(part, "format")) {
    const std::string name = as_string(*format, Path(path, "format"));
    if (name != "png" && name != "jpeg" && name != "jpg" && name != "webp") {
      fail(Path(path, "format"), "unknown image format \"" + name + "\" (known: png, jpeg, webp)");
    }
  }
  const Path image_path(path, "image");
  const std::string image = as_string(required_field(part, "image", path), image_path);
  if (image.starts_with("data:")) return image_part_at(image_path, [&] { return ImagePart::from_data_uri(image); });
  if (image.starts_with("http://") || image.starts_with("https://")) {
    fail(image_path, "remote URLs are not fetched; download the image and pass it as base64 or a data: URI");
  }
  std::string bytes;
  if (!wire::base64_decode(image, bytes))
    fail(image_path, "not valid base64 (standard alphabet, padded) or a data: URI");
  return image_part_at(image_path, [&] { return ImagePart::from_bytes({bytes.begin(), bytes.end()}); });
}

// OpenAI's {"type": "image_url", "image_url": {"url": "data:..."}} (or the URL as a bare string).
ImagePart read_image_url_part(const json::object& part, const Path& path) {
  const Path image_url_path(path, "image_url");
  const json::value& image_url = required_field(part, "image_url", path);
  const Path url_path(image_url_path, "url");
  const bool bare = image_url.is_string();
  const std::string url =
      bare ? std::string(image_url.get_string())
           : as_string(required_field(as_object(image_url, image_url_path), "url", image_url_path), url_path);
  return image_part_at(bare ? image_url_path : url_path, [&] { return ImagePart::from_data_uri(url); });
}

ContentPart read_part(const json::value& value, const Path& path) {
  const json::object& part = as_object(value, path);
  const Path type_path(path, "type");
  const std::string type = as_string(required_field(part, "type", path), type_path);
  if (type == "text") return TextPart(as_string(required_field(part, "text", path), Path(path, "text")));
  if (type == "thinking") {
    return ThinkingPart(as_string(required_field(part, "thinking", path), Path(path, "thinking")));
  }
  if (type == "image") return read_image_part(part, path);
  if (type == "image_url") return read_image_url_part(part, path);
  fail(type_path, "unknown part type \"" + type + "\" (known: text, thinking, image, image_url)");
}

std::vector<ContentPart> read_content(const json::value& value, const Path& path) {
  std::vector<ContentPart> parts;
  if (value.is_string()) {
    parts.emplace_back(TextPart(std::string(value.get_string())));
  } else if (value.is_array()) {
    const json::array& array = value.get_array();
    for (std::size_t i = 0; i < array.size(); ++i) parts.push_back(read_part(array[i], Path(path, i)));
  } else if (!value.is_null()) {
    fail(path, std::string("expected a string or a list of parts, got ") + wire::json_kind(value));
  }
  return parts;
}

ToolCall read_tool_call(const json::value& value, const Path& path) {
  const json::object& call = as_object(value, path);
  const Path function_path(path, "function");
  const json::object& function = as_object(required_field(call, "function", path), function_path);
  ToolCall tool_call;
  tool_call.name = as_string(required_field(function, "name", function_path), Path(function_path, "name"));
  const json::value& arguments = required_field(function, "arguments", function_path);
  if (arguments.is_string()) {
    tool_call.arguments = std::string(arguments.get_string());
  } else if (arguments.is_object()) {
    wire::write_value(arguments, tool_call.arguments);
  } else {
    fail(Path(function_path, "arguments"), "expected a JSON object or its text");
  }
  if (const json::value* id = optional_field(call, "id")) tool_call.id = as_string(*id, Path(path, "id"));
  return tool_call;
}

Message read_message(const json::value& value, const Path& path) {
  const json::object& object = as_object(value, path);
  Message message;
  message.role = as_string(required_field(object, "role", path), Path(path, "role"));
  if (const json::value* reasoning = optional_field(object, "reasoning_content")) {
    message.content.emplace_back(ThinkingPart(as_string(*reasoning, Path(path, "reasoning_content"))));
  }
  if (const json::value* content = optional_field(object, "content")) {
    for (ContentPart& part : read_content(*content, Path(path, "content"))) message.content.push_back(std::move(part));
  }
  if (const json::value* calls = optional_field(object, "tool_calls")) {
    const Path calls_path(path, "tool_calls");
    if (!calls->is_array()) fail(calls_path, std::string("expected a list, got ") + wire::json_kind(*calls));
    const json::array& array = calls->get_array();
    for (std::size_t i = 0; i < array.size(); ++i)
      message.tool_calls.push_back(read_tool_call(array[i], Path(calls_path, i)));
  }
  if (const json::value* name = optional_field(object, "name")) message.name = as_string(*name, Path(path, "name"));
  if (const json::value* id = optional_field(object, "tool_call_id")) {
    message.tool_call_id = as_string(*id, Path(path, "tool_call_id"));
  }
  if (const json::value* trainable = optional_field(object, "trainable")) {
    if (!trainable->is_bool()) fail(Path(path, "trainable"), "expected true or false");
    message.trainable = trainable->get_bool();
  }
  return message;
}

}  // namespace

std::vector<Message> conversation_from_json(std::string_view text) {
  json::value document;
  try {
    document = wire::parse_json(text);
  } catch (const error& e) {
    throw error(errc::invalid_argument, std::string("conversation JSON: ") + e.what());
  }
  const Path root;
  const Path messages_path(root, "messages");
  const json::value* messages = &document;
  if (document.is_object()) messages = &required_field(document.get_object(), "messages", root);
  if (!messages->is_array()) {
    fail(document.is_object() ? messages_path : root, "expected a list of messages or {\"messages\": [...]}");
  }
  std::vector<Message> conversation;
  const json::array& array = messages->get_array();
  for (std::size_t i = 0; i < array.size(); ++i) conversation.push_back(read_message(array[i], Path(messages_path, i)));
  return conversation;
}

}  // namespace tinker::renderers
