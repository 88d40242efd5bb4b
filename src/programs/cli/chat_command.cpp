// `tinker chat`: a conversation with a base model or a sampler checkpoint, in the model's chat
// format (its recommended renderer, or --renderer).
//
//   tinker chat --model Qwen/Qwen3.5-4B            an interactive chat in the terminal
//   tinker chat --model ... --json < chat.json     the next assistant message of one conversation
//
// Interactive: each message is rendered with the whole conversation so far and sampled in one
// request (the protocol does not stream), then parsed back into the reply's reasoning, text and
// tool calls. Notes and errors go to the error stream; a failed turn is reported and the chat
// goes on. `--json` reads {"messages": [...]} (with an optional "tools" list) on standard input
// and writes the parsed reply as JSON (replies.hpp).
#include "programs/cli/chat_input.hpp"
#include "programs/cli/context.hpp"
#include "programs/cli/output.hpp"
#include "programs/cli/replies.hpp"
#include "programs/cli/sampling_setup.hpp"
#include "programs/cli/sampling_turn.hpp"

#include <tinker/error.hpp>
#include <tinker/renderers.hpp>

#include <CLI/CLI.hpp>
#include <boost/json/parse.hpp>

#include <istream>
#include <iterator>
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace tinker::cli {
namespace {
namespace asio = boost::asio;
using renderers::Message;

class ChatOptions {
 public:
  SamplerOptions sampler;
  std::string system_prompt;
  std::string tools_file;
  bool json = false;
};

constexpr const char* chat_help =
    "Enter sends the message; a line ending with \\ continues it on the next line.\n"
    "  /system TEXT   set the system prompt (/system alone removes it)\n"
    "  /image PATH    attach an image (PNG, JPEG or WebP) to your next message\n"
    "  /reset         forget the conversation (the system prompt stays)\n"
    "  /exit          end the chat (also /quit, or Ctrl-D)\n"
    "  //TEXT         send a message that starts with /\n";

// The interactive chat: the conversation so far and what the next message carries.
class ChatSession {
 public:
  ChatSession(Context& context, const OpenedSampler& sampler, const ChatOptions& options,
              std::vector<renderers::ToolSpec> tools)
      : context_(context),
        sampler_(sampler),
        params_(options.sampler.sampling_params(sampler.renderer->stop_sequences())),
        system_prompt_(options.system_prompt),
        tools_(std::move(tools)),
        style_(context.env.output_is_terminal ? ReplyStyle::terminal : ReplyStyle::plain) {}

  asio::awaitable<void> run();

 private:
  // False once the chat should end.
  asio::awaitable<bool> handle(const ChatInput& input);
  asio::awaitable<void> take_turn(const std::string& text);
  void attach_image(const std::string& path);
  void set_system_prompt(std::string text);
  void print_banner() const;

  Context& context_;
  const OpenedSampler& sampler_;
  SamplingParams params_;
  std::string system_prompt_;
  std::vector<renderers::ToolSpec> tools_;
  std::vector<Message> history_;  // the user's messages and the replies, after the prefix
  std::vector<renderers::ImagePart> pending_images_;
  ReplyStyle style_;
};

asio::awaitable<void> ChatSession::run() {
  if (context_.env.input == nullptr) throw CliError("no standard input to read the chat from");
  const bool prompt = context_.env.input_is_terminal;
  if (prompt) print_banner();
  ChatInputAssembler assembler;
  for (;;) {
    if (prompt) context_.out << (assembler.continuing() ? "... " : "> ") << std::flush;
    const std::optional<std::string> line = co_await async_read_line(*context_.env.input);
    // Ctrl-C may reach the reading thread first, whose read then ends as if the input had.
    if (!line && context_.interrupted()) throw error(errc::cancelled, "interrupted");
    const std::optional<ChatInput> input = line ? assembler.add_line(*line) : assembler.finish();
    if (input && !co_await handle(*input)) co_return;
    if (!line) {
      if (prompt) context_.out << '\n';
      co_return;
    }
  }
}

asio::awaitable<bool> ChatSession::handle(const ChatInput& input) {
  using Kind = ChatInput::Kind;
  switch (input.kind) {
    case Kind::message: co_await take_turn(input.text); break;
    case Kind::system: set_system_prompt(input.text); break;
    case Kind::image: attach_image(input.text); break;
    case Kind::reset:
      history_.clear();
      pending_images_.clear();
      context_.err << "(conversation cleared; the system prompt stays)\n";
      break;
    case Kind::exit: co_return false;
    case Kind::help: context_.out << chat_help; break;
    case Kind::unknown:
      context_.err << "Error: unknown command " << input.text << " (/help lists them; // sends a leading /)\n";
      break;
  }
  co_return true;
}

asio::awaitable<void> ChatSession::take_turn(const std::string& text) {
  Message user("user", std::vector<renderers::ContentPart>());
  for (renderers::ImagePart& image : pending_images_) user.content.emplace_back(std::move(image));
  pending_images_.clear();
  user.content.emplace_back(renderers::TextPart(text));
  const renderers::Renderer& renderer = *sampler_.renderer;
  ModelInput prompt;
  try {
    std::vector<Message> messages = conversation_prefix(renderer, system_prompt_, tools_);
    messages.insert(messages.end(), history_.begin(), history_.end());
    messages.push_back(user);
    prompt = renderer.build_generation_prompt(messages);
  } catch (const error& e) {
    print_cli_error(context_.err, e);
    context_.err << "(the message was not sent)\n";
    co_return;
  }
  std::vector<SampledSequence> sequences;
  try {
    sequences = co_await sample_sequences(context_, sampler_.client, std::move(prompt), params_, 1,
                                          style_ == ReplyStyle::terminal);
  } catch (const std::exception& e) {
    if (context_.interrupted()) throw;
    print_cli_error(context_.err, e);
    context_.err << "(the message was not sent)\n";
    co_return;
  }
  const renderers::ParsedResponse reply = renderer.parse_response(sequences.front().tokens);
  print_reply(context_.out, reply, sequences.front().stop_reason, style_);
  if (style_ == ReplyStyle::terminal) context_.out << '\n';
  context_.out << std::flush;
  history_.push_back(std::move(user));
  history_.push_back(reply.message);
}

void ChatSession::attach_image(const std::string& path) {
  if (path.empty()) {
    context_.err << "Error: /image needs the image file's path: /image PATH\n";
    return;
  }
  try {
    pending_images_.push_back(renderers::ImagePart::from_file(path));
    context_.err << "(image " << path << " attached to your next message)\n";
  } catch (const std::exception& e) {
    print_cli_error(context_.err, e);
  }
}

void ChatSession::set_system_prompt(std::string text) {
  system_prompt_ = std::move(text);
  context_.err << (system_prompt_.empty() ? "(system prompt removed)\n" : "(system prompt set)\n");
}

void ChatSession::print_banner() const {
  context_.err << "Chatting with " << sampler_.source << " (chat format " << sampler_.renderer->name() << ")";
  if (!tools_.empty()) context_.err << " with " << tools_.size() << " tools declared";
  context_.err << ". /help lists the commands; /exit or Ctrl-D ends.\n";
}

std::string read_standard_input(const Context& context) {
  if (context.env.input == nullptr) throw CliError("nothing on standard input: expected {\"messages\": [...]}");
  return std::string(std::istreambuf_iterator<char>(*context.env.input), std::istreambuf_iterator<char>());
}

// The tools of a {"messages": [...], "tools": [...]} document; none for other shapes.
std::vector<renderers::ToolSpec> tools_in_document(const std::string& document) {
  boost::system::error_code ec;
  const boost::json::value value = boost::json::parse(document, ec);
  if (ec || !value.is_object() || !value.get_object().contains("tools")) return {};
  try {
    return renderers::tools_from_json(document);
  } catch (const error& e) {
    throw CliError("standard input: " + e.diag().message);
  }
}

// A leading system message becomes the system prompt of the tool declaration's prefix.
std::vector<Message> with_tools(const renderers::Renderer& renderer, std::vector<Message> messages,
                                std::span<const renderers::ToolSpec> tools) {
  if (tools.empty()) return messages;
  std::string system_prompt;
  if (!messages.empty() && messages.front().role == "system") {
    system_prompt = messages.front().text();
    messages.erase(messages.begin());
  }
  std::vector<Message> conversation = conversation_prefix(renderer, system_prompt, tools);
  conversation.insert(conversation.end(), messages.begin(), messages.end());
  return conversation;
}

asio::awaitable<void> chat_json(Context& context, const ChatOptions& options) {
  if (!options.system_prompt.empty()) {
    throw UsageError(
        "--system is for the interactive chat: with --json, the conversation's first message can be "
        "the system message");
  }
  const std::string document = read_standard_input(context);
  std::vector<Message> messages;
  try {
    messages = renderers::conversation_from_json(document);
  } catch (const error& e) {
    throw CliError("standard input: " + e.diag().message);
  }
  std::vector<renderers::ToolSpec> tools = tools_in_document(document);
  if (!options.tools_file.empty()) tools = read_tools_file(options.tools_file);
  const SamplingBackend backend(context, options.sampler.local);
  const OpenedSampler sampler = co_await open_sampler(backend, options.sampler, true);
  ModelInput prompt;
  try {
    prompt = sampler.renderer->build_generation_prompt(with_tools(*sampler.renderer, std::move(messages), tools));
  } catch (const error& e) {
    throw CliError(e.what());  // the renderer's words name the message and part
  }
  const SamplingParams params = options.sampler.sampling_params(sampler.renderer->stop_sequences());
  const std::vector<SampledSequence> sequences =
      co_await sample_sequences(context, sampler.client, std::move(prompt), params, 1, false);
  const renderers::ParsedResponse reply = sampler.renderer->parse_response(sequences.front().tokens);
  print_json(context.out, reply_json(reply, sequences.front().stop_reason));
}

asio::awaitable<void> chat_command(Context& context, ChatOptions options) {
  if (options.json || context.json()) {
    co_await chat_json(context, options);
    co_return;
  }
  std::vector<renderers::ToolSpec> tools;
  if (!options.tools_file.empty()) tools = read_tools_file(options.tools_file);
  const SamplingBackend backend(context, options.sampler.local);
  const OpenedSampler sampler = co_await open_sampler(backend, options.sampler, true);
  ChatSession session(context, sampler, options, std::move(tools));
  co_await session.run();
}

}  // namespace

void add_chat_command(CLI::App& app, Action& action) {
  auto options = std::make_shared<ChatOptions>();
  CLI::App& command =
      add_command(app, "chat",
                  "Chat with a base model or a sampler checkpoint in its chat format; with --json, "
                  "answer one conversation ({\"messages\": [...]}) read on standard input",
                  action, options, chat_command, [](ChatOptions& chosen) { check_sampler_options(chosen.sampler); });
  add_sampler_options(command, options->sampler);
  command.add_option("--system", options->system_prompt, "System prompt to start with (the chat's /system changes it)");
  command.add_option("--tools", options->tools_file,
                     "JSON file declaring the tools the model may call ([{\"name\", \"description\", "
                     "\"parameters\"}, ...])");
  command.add_flag("--json", options->json,
                   "Read one conversation as JSON on standard input and write the next assistant message as JSON");
}

}  // namespace tinker::cli
