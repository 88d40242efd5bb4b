// Comparisons: the cookbook's preference records (and the common prompt/chosen/rejected shapes)
// read from JSONL and rendered into the chosen/rejected datum pairs DPO trains on.
#include <tinker/error.hpp>
#include <tinker/train/preference.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <fstream>
#include <string>

namespace tinker::train {
namespace {
namespace comparison_records {

namespace json = boost::json;
using Messages = std::vector<renderers::Message>;

[[noreturn]] void refuse(const std::string& what) {
  throw tinker::error(errc::invalid_argument, what);
}

// A side of a record: a string is one message of `role`, an array is messages.
Messages side_messages(const json::object& record, std::string_view key, const char* role) {
  const json::value* side = record.if_contains(key);
  if (side == nullptr) refuse(std::string(key) + ": missing");
  if (side->is_string()) return {renderers::Message(role, std::string(side->get_string()))};
  if (!side->is_array()) refuse(std::string(key) + ": expected a string or an array of messages");
  try {
    return renderers::conversation_from_json(json::serialize(*side));
  } catch (const tinker::error& e) {
    refuse(std::string(key) + ": " + e.what());
  }
}

Comparison checked(Comparison comparison) {
  if (comparison.chosen.empty()) refuse("chosen: no message after the prompt");
  if (comparison.rejected.empty()) refuse("rejected: no message after the prompt");
  return comparison;
}

// {"chosen": [...], "rejected": [...]}: the prompt is what the two conversations share.
Comparison from_whole_conversations(const json::object& record) {
  Messages chosen = side_messages(record, "chosen", "assistant");
  Messages rejected = side_messages(record, "rejected", "assistant");
  std::size_t shared = 0;
  while (shared < chosen.size() && shared < rejected.size() && chosen[shared] == rejected[shared]) ++shared;
  Comparison comparison;
  comparison.prompt.assign(chosen.begin(), chosen.begin() + static_cast<std::ptrdiff_t>(shared));
  comparison.chosen.assign(chosen.begin() + static_cast<std::ptrdiff_t>(shared), chosen.end());
  comparison.rejected.assign(rejected.begin() + static_cast<std::ptrdiff_t>(shared), rejected.end());
  return checked(std::move(comparison));
}

std::optional<Comparison> from_labeled(const json::object& record) {
  const json::value* inner = record.if_contains("comparison");
  if (!inner->is_object()) refuse("comparison: expected an object");
  const json::value* label = record.if_contains("label");
  if (label == nullptr || !label->is_string()) refuse("label: expected \"A\", \"B\" or \"Tie\"");
  const std::string_view preferred = label->get_string();
  if (preferred == "Tie") return std::nullopt;
  if (preferred != "A" && preferred != "B")
    refuse("label: expected \"A\", \"B\" or \"Tie\", got \"" + std::string(preferred) + "\"");
  const json::object& fields = inner->get_object();
  Comparison comparison;
  comparison.prompt = side_messages(fields, "prompt_conversation", "user");
  Messages a = side_messages(fields, "completion_A", "assistant");
  Messages b = side_messages(fields, "completion_B", "assistant");
  comparison.chosen = preferred == "A" ? std::move(a) : std::move(b);
  comparison.rejected = preferred == "A" ? std::move(b) : std::move(a);
  return checked(std::move(comparison));
}

}  // namespace comparison_records
}  // namespace

std::optional<Comparison> comparison_from_record(std::string_view text) {
  namespace json = boost::json;
  boost::system::error_code code;
  const json::value parsed = json::parse(text, code);
  if (code || !parsed.is_object()) comparison_records::refuse("a comparison record must be a JSON object");
  const json::object& record = parsed.get_object();
  if (record.contains("comparison")) return comparison_records::from_labeled(record);
  if (!record.contains("chosen") || !record.contains("rejected")) {
    comparison_records::refuse(
        "expected \"chosen\" and \"rejected\" (with an optional \"prompt\"), or \"comparison\" and \"label\"");
  }
  if (!record.contains("prompt")) return comparison_records::from_whole_conversations(record);
  Comparison comparison;
  if (const json::value* system = record.if_contains("system")) {
    if (!system->is_string()) comparison_records::refuse("system: expected a string");
    comparison.prompt.emplace_back("system", std::string(system->get_string()));
  }
  for (auto& message : comparison_records::side_messages(record, "prompt", "user")) {
    comparison.prompt.push_back(std::move(message));
  }
  comparison.chosen = comparison_records::side_messages(record, "chosen", "assistant");
  comparison.rejected = comparison_records::side_messages(record, "rejected", "assistant");
  return comparison_records::checked(std::move(comparison));
}

std::vector<Comparison> read_comparisons(const std::filesystem::path& jsonl) {
  std::ifstream in(jsonl);
  if (!in) throw tinker::error(errc::invalid_argument, "cannot open " + jsonl.string());
  std::vector<Comparison> comparisons;
  std::string text;
  for (std::size_t line = 1; std::getline(in, text); ++line) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      if (auto comparison = comparison_from_record(text)) comparisons.push_back(std::move(*comparison));
    } catch (const tinker::error& e) {
      throw tinker::error(errc::invalid_argument, jsonl.string() + ":" + std::to_string(line) + ": " + e.what());
    }
  }
  if (comparisons.empty()) throw tinker::error(errc::invalid_argument, jsonl.string() + ": no comparisons");
  return comparisons;
}

std::vector<Datum> render_comparisons(const renderers::Renderer& renderer, const std::vector<Comparison>& comparisons) {
  std::vector<Datum> data;
  data.reserve(comparisons.size() * 2);
  for (std::size_t i = 0; i < comparisons.size(); ++i) {
    const Comparison& comparison = comparisons[i];
    try {
      for (const auto* continuation : {&comparison.chosen, &comparison.rejected}) {
        std::vector<renderers::Message> conversation = comparison.prompt;
        conversation.insert(conversation.end(), continuation->begin(), continuation->end());
        data.push_back(
            renderer.build_supervised_example(conversation, renderers::TrainOn::last_assistant_turn).to_datum());
      }
    } catch (const tinker::error& e) {
      throw tinker::error(errc::invalid_argument,
                          "render_comparisons: comparison " + std::to_string(i) + ": " + e.what());
    }
  }
  return data;
}

}  // namespace tinker::train
