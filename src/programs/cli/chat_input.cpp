#include "programs/cli/chat_input.hpp"

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <istream>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

namespace tinker::cli {
namespace {
namespace asio = boost::asio;

std::string_view trim_spaces(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

ChatInput parse_chat_command(std::string_view line) {
  const std::size_t space = line.find_first_of(" \t");
  const std::string_view word = line.substr(0, space);
  const std::string argument(space == std::string_view::npos ? std::string_view() : trim_spaces(line.substr(space)));
  using Kind = ChatInput::Kind;
  if (word == "/system") return ChatInput{Kind::system, argument};
  if (word == "/image") return ChatInput{Kind::image, argument};
  if (word == "/reset") return ChatInput{Kind::reset, {}};
  if (word == "/exit" || word == "/quit") return ChatInput{Kind::exit, {}};
  if (word == "/help") return ChatInput{Kind::help, {}};
  return ChatInput{Kind::unknown, std::string(word)};
}

using ReadSignature = void(boost::system::error_code, std::optional<std::string>);

// One line read on a detached helper thread. Whichever comes first, the line or the
// cancellation, completes the handler (on its executor); the other then finds nothing to do.
// The helper never touches the io_context after the handler is gone, so a read cancelled by
// Ctrl-C may outlive the command (it ends with the process).
template <class Handler>
class LineRead : public std::enable_shared_from_this<LineRead<Handler>> {
 public:
  LineRead(Handler handler, std::istream& input)
      : input_(input),
        handler_(std::move(handler)),
        work_(asio::make_work_guard(asio::get_associated_executor(*handler_))) {}

  void start() {
    auto slot = asio::get_associated_cancellation_slot(*handler_);
    if (slot.is_connected()) {
      slot.assign([weak = this->weak_from_this()](asio::cancellation_type) {
        if (auto self = weak.lock()) self->complete(asio::error::operation_aborted, std::nullopt);
      });
    }
    std::thread([self = this->shared_from_this()] { self->read(); }).detach();
  }

 private:
  void read() {
    std::optional<std::string> line;
    std::string text;
    if (std::getline(input_, text)) {
      if (!text.empty() && text.back() == '\r') text.pop_back();
      line = std::move(text);
    }
    complete({}, std::move(line));
  }

  void complete(boost::system::error_code ec, std::optional<std::string> line) {
    std::unique_lock lock(mutex_);
    if (!handler_) return;
    Handler handler = std::move(*handler_);
    handler_.reset();
    auto work = std::move(*work_);
    work_.reset();
    lock.unlock();
    const auto executor = work.get_executor();
    asio::post(executor, [handler = std::move(handler), work = std::move(work), ec, line = std::move(line)]() mutable {
      asio::get_associated_cancellation_slot(handler).clear();
      std::move(handler)(ec, std::move(line));
    });
  }

  std::istream& input_;
  std::mutex mutex_;
  std::optional<Handler> handler_;
  std::optional<asio::executor_work_guard<asio::associated_executor_t<Handler>>> work_;
};

template <class Token>
auto async_read_line_with(std::istream& input, Token&& token) {
  return asio::async_initiate<Token, ReadSignature>(
      [](auto handler, std::istream* stream) {
        using Handler = std::decay_t<decltype(handler)>;
        std::make_shared<LineRead<Handler>>(std::move(handler), *stream)->start();
      },
      token, &input);
}

}  // namespace

std::optional<ChatInput> ChatInputAssembler::add_line(std::string_view line) {
  if (!continuing_ && line.starts_with('/')) {
    if (!line.starts_with("//")) return parse_chat_command(trim_spaces(line));
    line.remove_prefix(1);
  }
  const bool literal_backslash = line.ends_with("\\\\");
  if (line.ends_with('\\') && !literal_backslash) {
    pending_ += line.substr(0, line.size() - 1);
    pending_ += '\n';
    continuing_ = true;
    return std::nullopt;
  }
  if (literal_backslash) line.remove_suffix(1);
  pending_ += line;
  return message(std::exchange(pending_, {}));
}

std::optional<ChatInput> ChatInputAssembler::finish() {
  std::string text = std::exchange(pending_, {});
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return message(std::move(text));
}

std::optional<ChatInput> ChatInputAssembler::message(std::string text) {
  continuing_ = false;
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return std::nullopt;
  return ChatInput{ChatInput::Kind::message, std::move(text)};
}

asio::awaitable<std::optional<std::string>> async_read_line(std::istream& input) {
  co_return co_await async_read_line_with(input, asio::use_awaitable);
}

}  // namespace tinker::cli
