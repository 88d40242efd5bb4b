// Reading supervised conversations from JSONL: the cookbook's {"messages": [...]} records and
// prompt/completion pairs.
#include <tinker/error.hpp>
#include <tinker/train/supervised.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <fstream>
#include <string>

namespace tinker::train {
namespace {

namespace json = boost::json;

[[noreturn]] void throw_record_error(const std::string& message) {
  throw tinker::error(errc::invalid_argument, message);
}

// One side of a prompt/completion pair: a string becomes one message of `role`, an array is a
// list of messages in the conversation shape.
void append_side(Conversation& conversation, const json::object& record, const char* key, const char* role) {
  const json::value* side = record.if_contains(key);
  if (side == nullptr)
    throw_record_error(std::string("record has \"prompt\" or \"completion\" but no \"") + key + "\"");
  if (const json::string* text = side->if_string()) {
    conversation.emplace_back(role, std::string(*text));
    return;
  }
  if (!side->is_array()) throw_record_error(std::string(key) + ": expected a string or an array of messages");
  try {
    for (renderers::Message& message : renderers::conversation_from_json(json::serialize(*side))) {
      conversation.push_back(std::move(message));
    }
  } catch (const tinker::error& e) {
    throw_record_error(std::string(key) + ": " + e.what());
  }
}

}  // namespace

Conversation conversation_from_record(std::string_view text) {
  json::value parsed;
  try {
    parsed = json::parse(text);
  } catch (const std::exception& e) {
    throw_record_error(std::string("not JSON: ") + e.what());
  }
  const json::object* record = parsed.if_object();
  if (record == nullptr || record->contains("messages")) return renderers::conversation_from_json(text);
  if (!record->contains("prompt") && !record->contains("completion")) {
    throw_record_error("expected \"messages\" or \"prompt\" and \"completion\"");
  }
  Conversation conversation;
  if (const json::value* system = record->if_contains("system")) {
    if (!system->is_string()) throw_record_error("system: expected a string");
    conversation.emplace_back("system", std::string(system->get_string()));
  }
  append_side(conversation, *record, "prompt", "user");
  append_side(conversation, *record, "completion", "assistant");
  return conversation;
}

std::vector<Conversation> read_conversations(const std::filesystem::path& jsonl) {
  std::ifstream in(jsonl);
  if (!in) throw tinker::error(errc::invalid_argument, "cannot open " + jsonl.string());
  std::vector<Conversation> conversations;
  std::string text;
  for (std::size_t line = 1; std::getline(in, text); ++line) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      conversations.push_back(conversation_from_record(text));
    } catch (const tinker::error& e) {
      throw tinker::error(errc::invalid_argument, jsonl.string() + ":" + std::to_string(line) + ": " + e.what());
    }
  }
  if (conversations.empty()) throw tinker::error(errc::invalid_argument, jsonl.string() + ": no conversations");
  return conversations;
}

}  // namespace tinker::train
