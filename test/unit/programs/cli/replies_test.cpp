// How `tinker chat` and `tinker sample` show a parsed reply (src/programs/cli/replies.hpp): its JSON
// form (and that it reads back as the assistant's message), the text for a terminal and for a pipe.
#include "programs/cli/replies.hpp"

#include <tinker/renderers.hpp>

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <sstream>
#include <string>

namespace tinker::cli {
namespace {

using renderers::ParsedResponse;
using renderers::ParseTermination;

ParsedResponse reply_with_everything() {
  ParsedResponse reply;
  reply.message.role = "assistant";
  reply.message.content = {renderers::ThinkingPart("The user wants the weather."),
                           renderers::TextPart("Let me look it up.")};
  reply.message.tool_calls.emplace_back("get_weather", R"({"city": "Paris"})", "call_1");
  reply.termination = ParseTermination::stop_sequence;
  return reply;
}

std::string printed(const ParsedResponse& reply, StopReason stop_reason, ReplyStyle style) {
  std::ostringstream out;
  print_reply(out, reply, stop_reason, style);
  return out.str();
}

TEST(ChatReplies, JsonHasEveryPartOfTheReply) {
  const boost::json::object json = reply_json(reply_with_everything(), StopReason::stop);
  EXPECT_EQ(json.at("role"), "assistant");
  EXPECT_EQ(json.at("content"), "Let me look it up.");
  EXPECT_EQ(json.at("thinking"), "The user wants the weather.");
  EXPECT_EQ(json.at("termination"), "stop_sequence");
  EXPECT_EQ(json.at("stop_reason"), "stop");
  EXPECT_EQ(
      boost::json::serialize(json.at("tool_calls")),
      R"([{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Paris\"}"}}])");
  EXPECT_FALSE(json.contains("unparsed_tool_calls"));
}

TEST(ChatReplies, JsonWithoutReasoningOrCallsStillHasTheirKeys) {
  ParsedResponse reply;
  reply.message = renderers::Message("assistant", "Hi.");
  reply.termination = ParseTermination::malformed;
  const boost::json::object json = reply_json(reply, StopReason::length);
  EXPECT_EQ(json.at("thinking"), "");
  EXPECT_TRUE(json.at("tool_calls").as_array().empty());
  EXPECT_EQ(json.at("termination"), "malformed");
  EXPECT_EQ(json.at("stop_reason"), "length");
}

TEST(ChatReplies, JsonListsUnreadableToolCalls) {
  ParsedResponse reply;
  reply.message.unparsed_tool_calls.emplace_back("<tool_call>{oops</tool_call>", "not JSON");
  const boost::json::object json = reply_json(reply, StopReason::stop);
  EXPECT_EQ(boost::json::serialize(json.at("unparsed_tool_calls")),
            R"([{"raw_text":"<tool_call>{oops</tool_call>","error":"not JSON"}])");
}

TEST(ChatReplies, JsonAppendedToTheConversationReadsBackAsTheAssistantsMessage) {
  const ParsedResponse reply = reply_with_everything();
  const std::string conversation = R"({"messages": [{"role": "user", "content": "Weather in Paris?"}, )" +
                                   boost::json::serialize(reply_json(reply, StopReason::stop)) + "]}";
  const std::vector<renderers::Message> messages = renderers::conversation_from_json(conversation);
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[1].role, "assistant");
  EXPECT_EQ(messages[1].text(), "Let me look it up.");
  EXPECT_EQ(messages[1].tool_calls, reply.message.tool_calls);
}

TEST(ChatReplies, PlainTextMarksTheReasoningAndListsToolCalls) {
  EXPECT_EQ(printed(reply_with_everything(), StopReason::stop, ReplyStyle::plain),
            "[thinking]\nThe user wants the weather.\n[/thinking]\n"
            "Let me look it up.\n"
            "[tool call] get_weather({\"city\": \"Paris\"}) id call_1\n");
}

TEST(ChatReplies, TerminalTextDimsTheReasoning) {
  EXPECT_EQ(printed(reply_with_everything(), StopReason::stop, ReplyStyle::terminal),
            "\x1b[2mThe user wants the weather.\x1b[0m\n"
            "Let me look it up.\n"
            "[tool call] get_weather({\"city\": \"Paris\"}) id call_1\n");
}

TEST(ChatReplies, AReplyWithoutItsEndSaysWhy) {
  ParsedResponse reply;
  reply.message = renderers::Message("assistant", "\nOnce upon a");
  reply.termination = ParseTermination::malformed;
  EXPECT_EQ(printed(reply, StopReason::length, ReplyStyle::plain), "Once upon a\n[cut off at max tokens]\n");
  const std::string stopped = printed(reply, StopReason::stop, ReplyStyle::plain);
  EXPECT_EQ(stopped.rfind("Once upon a\n[malformed reply: ", 0), 0u) << stopped;
  reply.termination = ParseTermination::eos;
  EXPECT_EQ(printed(reply, StopReason::stop, ReplyStyle::plain), "Once upon a\n");
}

TEST(ChatReplies, ControlCharactersCannotDriveTheTerminal) {
  EXPECT_EQ(terminal_safe("a\x1b[31mred\tb\nc\x7f\r"), "a^[[31mred\tb\nc^?^M");
  EXPECT_EQ(terminal_safe("csi \xc2\x9b"
                          "2J, caf\xc3\xa9"),
            "csi \\u009b2J, caf\xc3\xa9");
  ParsedResponse reply;
  reply.message = renderers::Message("assistant", "\x1b]0;title\x07");
  reply.termination = ParseTermination::stop_sequence;
  EXPECT_EQ(printed(reply, StopReason::stop, ReplyStyle::terminal), "^[]0;title^G\n");
  EXPECT_EQ(printed(reply, StopReason::stop, ReplyStyle::plain), "\x1b]0;title\x07\n") << "a pipe gets the bytes";
}

}  // namespace
}  // namespace tinker::cli
