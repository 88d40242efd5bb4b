// What `tinker chat` makes of typed lines (src/programs/cli/chat_input.hpp): messages over several
// lines, commands, escapes; and the line reader that keeps the io thread free.
#include "programs/cli/chat_input.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <sstream>
#include <string>
#include <vector>

namespace tinker::cli {
namespace {

using Kind = ChatInput::Kind;

// Feeds `lines` and collects what they complete, then what the end of input completes.
std::vector<ChatInput> assemble(const std::vector<std::string>& lines) {
  ChatInputAssembler assembler;
  std::vector<ChatInput> inputs;
  for (const std::string& line : lines) {
    if (auto input = assembler.add_line(line)) inputs.push_back(*input);
  }
  if (auto input = assembler.finish()) inputs.push_back(*input);
  return inputs;
}

TEST(ChatInput, EachLineIsAMessage) {
  EXPECT_EQ(assemble({"Hello", "How are you?"}),
            (std::vector<ChatInput>{{Kind::message, "Hello"}, {Kind::message, "How are you?"}}));
}

TEST(ChatInput, ABackslashAtTheEndContinuesTheMessageOnTheNextLine) {
  ChatInputAssembler assembler;
  EXPECT_FALSE(assembler.add_line("first line\\"));
  EXPECT_TRUE(assembler.continuing());
  EXPECT_FALSE(assembler.add_line("  second line\\"));
  EXPECT_TRUE(assembler.continuing());
  const auto input = assembler.add_line("third");
  ASSERT_TRUE(input);
  EXPECT_EQ(*input, (ChatInput{Kind::message, "first line\n  second line\nthird"}));
  EXPECT_FALSE(assembler.continuing());
}

TEST(ChatInput, TwoBackslashesEndTheLineWithOne) {
  EXPECT_EQ(assemble({"C:\\dir\\\\"}), (std::vector<ChatInput>{{Kind::message, "C:\\dir\\"}}));
}

TEST(ChatInput, SlashLinesAreCommands) {
  EXPECT_EQ(assemble({"/system You are terse.  ", "/image  cat.png", "/reset", "/exit", "/quit", "/help", "/sing"}),
            (std::vector<ChatInput>{{Kind::system, "You are terse."},
                                    {Kind::image, "cat.png"},
                                    {Kind::reset, ""},
                                    {Kind::exit, ""},
                                    {Kind::exit, ""},
                                    {Kind::help, ""},
                                    {Kind::unknown, "/sing"}}));
  EXPECT_EQ(assemble({"/system"}), (std::vector<ChatInput>{{Kind::system, ""}}));
}

TEST(ChatInput, DoubleSlashSendsALeadingSlash) {
  EXPECT_EQ(assemble({"//usr/bin is a directory"}),
            (std::vector<ChatInput>{{Kind::message, "/usr/bin is a directory"}}));
}

TEST(ChatInput, ASlashInsideAContinuedMessageIsText) {
  EXPECT_EQ(assemble({"run\\", "/exit"}), (std::vector<ChatInput>{{Kind::message, "run\n/exit"}}));
}

TEST(ChatInput, BlankMessagesAreDropped) {
  EXPECT_TRUE(assemble({"", "   ", "\\", " "}).empty());
}

TEST(ChatInput, TheEndOfInputSendsAContinuedMessage) {
  EXPECT_EQ(assemble({"unfinished\\"}), (std::vector<ChatInput>{{Kind::message, "unfinished"}}));
}

TEST(ChatInput, LinesAreReadOffTheIoThreadUntilTheEnd) {
  std::istringstream input("one\r\ntwo\n\nlast");
  boost::asio::io_context io;
  auto read_all = [&input]() -> boost::asio::awaitable<std::vector<std::string>> {
    std::vector<std::string> lines;
    while (auto line = co_await async_read_line(input)) lines.push_back(*line);
    co_return lines;
  };
  auto lines = boost::asio::co_spawn(io, read_all(), boost::asio::use_future);
  io.run();  // returns only once every read completed: each holds the io_context's work while it waits
  EXPECT_EQ(lines.get(), (std::vector<std::string>{"one", "two", "", "last"}));
}

}  // namespace
}  // namespace tinker::cli
