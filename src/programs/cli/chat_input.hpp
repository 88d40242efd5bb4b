// What a person types at `tinker chat`'s prompt: lines gathered into messages and commands, and
// the reading of a line without blocking the io thread.
#pragma once

#include <boost/asio/awaitable.hpp>

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

namespace tinker::cli {

/// One complete input: a message to send or a command.
class ChatInput {
 public:
  enum class Kind {
    message,  ///< `text` is the user's message
    system,   ///< /system TEXT: `text` is the new system prompt (empty: none)
    image,    ///< /image PATH: `text` is the path
    reset,    ///< /reset
    exit,     ///< /exit or /quit
    help,     ///< /help
    unknown,  ///< another /word: `text` is the word, slash included
  };

  Kind kind = Kind::message;
  std::string text;

  friend bool operator==(const ChatInput&, const ChatInput&) = default;
};

/// Gathers typed lines into inputs. A line ending with `\` continues the message on the next line
/// (the backslash becomes a line break; end a line with `\\` for a literal backslash); any other
/// line ends it. A line starting with `/` is a command, unless it continues a message or starts
/// with `//`, which sends the rest from its second slash on. Blank messages are dropped.
class ChatInputAssembler {
 public:
  /// The input `line` (without its line break) completes, if any.
  std::optional<ChatInput> add_line(std::string_view line);
  /// What the end of the input completes: the message being continued, if any.
  std::optional<ChatInput> finish();
  /// True while a message continues (the prompt shows it).
  bool continuing() const noexcept { return continuing_; }

 private:
  std::optional<ChatInput> message(std::string text);

  std::string pending_;
  bool continuing_ = false;
};

/// The next line of `input` without its line break (and a '\r' before it); empty at the end of
/// the input. The read runs on a helper thread, so the io thread keeps serving the session (its
/// heartbeats) however long a person takes to type. Cancellation (Ctrl-C) completes the wait at
/// once with the cancellation error; the helper then finishes its read unobserved.
boost::asio::awaitable<std::optional<std::string>> async_read_line(std::istream& input);

}  // namespace tinker::cli
