// `tinker render`: what a model is prompted with or trained on, for a conversation on standard
// input ({"messages": [...]}, the cookbook's JSON shape).
//
//   tinker render --model Qwen/Qwen3-8B --mode supervised --train-on all_assistant_messages < chat.json
//
// Table output: one line per run of tokens with the same weight (supervised mode), each showing
// the weight, the token positions and the decoded text as a JSON string, then the token ids.
// JSON output (-f json): {"tokens": [...], "weights": [...], "text": "..."}, weights in
// supervised mode only.
#include "programs/cli/context.hpp"

#include <tinker/error.hpp>
#include <tinker/renderers.hpp>
#include <tinker/tokenizer.hpp>

#include <CLI/CLI.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>

#include <iterator>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace tinker::cli {
namespace {
namespace asio = boost::asio;

class RenderOptions {
 public:
  RenderOptions() = default;
  std::string renderer;   // a family name; or
  std::string model;      // a model name whose recommended renderer (and tokenizer) is used
  std::string tokenizer;  // defaults to --model
  std::string mode = "generation";
  std::string train_on = "last_assistant_message";
  std::string role = "assistant";
  std::string prefill;
};

// What was rendered: the tokens, and in supervised mode a weight per token.
class Rendering {
 public:
  std::vector<TokenId> tokens;
  std::vector<float> weights;
};

void check_options(RenderOptions& options) {
  if (options.renderer.empty() == options.model.empty()) {
    throw UsageError("give exactly one of --renderer NAME and --model NAME");
  }
  if (options.tokenizer.empty()) {
    if (options.model.empty()) throw UsageError("--tokenizer is required with --renderer (or give --model)");
    options.tokenizer = options.model;
  }
}

std::string read_all(std::istream* input) {
  if (input == nullptr) throw CliError("nothing on standard input: expected {\"messages\": [...]}");
  return std::string(std::istreambuf_iterator<char>(*input), std::istreambuf_iterator<char>());
}

std::unique_ptr<renderers::Renderer> make_cli_renderer(const RenderOptions& options,
                                                       std::shared_ptr<const Tokenizer> tokenizer) {
  const std::string name = options.renderer.empty() ? renderers::recommended_renderer(options.model) : options.renderer;
  return renderers::make_renderer(name, std::move(tokenizer));
}

Rendering render(const renderers::Renderer& renderer, const std::vector<renderers::Message>& messages,
                 const RenderOptions& options) {
  Rendering rendering;
  if (options.mode == "supervised") {
    renderers::SupervisedExample example =
        renderer.build_supervised_example(messages, renderers::train_on_from_string(options.train_on));
    rendering.tokens = example.model_input.to_ints();
    rendering.weights = std::move(example.weights);
  } else {
    const std::optional<std::string_view> prefill =
        options.prefill.empty() ? std::nullopt : std::optional<std::string_view>(options.prefill);
    rendering.tokens = renderer.build_generation_prompt(messages, options.role, prefill).to_ints();
  }
  return rendering;
}

std::string json_string(std::string_view text) {
  return boost::json::serialize(boost::json::string(text));
}

// One line per run of equal weight: "weight 1  tokens 12-30  "<decoded text>"".
void print_runs(Context& context, const Tokenizer& tokenizer, const Rendering& rendering) {
  std::size_t start = 0;
  while (start < rendering.tokens.size()) {
    std::size_t end = start + 1;
    while (end < rendering.tokens.size() && rendering.weights[end] == rendering.weights[start]) ++end;
    const std::span<const TokenId> run(rendering.tokens.data() + start, end - start);
    context.out << "weight " << rendering.weights[start] << "  tokens " << start << "-" << end - 1 << "  "
                << json_string(tokenizer.decode(run, false)) << '\n';
    start = end;
  }
}

void print_table(Context& context, const Tokenizer& tokenizer, const Rendering& rendering) {
  if (rendering.weights.empty()) {
    context.out << json_string(tokenizer.decode(rendering.tokens, false)) << '\n';
  } else {
    print_runs(context, tokenizer, rendering);
  }
  context.out << "ids:";
  for (TokenId id : rendering.tokens) context.out << ' ' << id;
  context.out << '\n';
}

void print_rendering_json(Context& context, const Tokenizer& tokenizer, const Rendering& rendering) {
  boost::json::object object;
  boost::json::array& tokens = object["tokens"].emplace_array();
  for (TokenId id : rendering.tokens) tokens.emplace_back(id);
  if (!rendering.weights.empty()) {
    boost::json::array& weights = object["weights"].emplace_array();
    for (float weight : rendering.weights) weights.emplace_back(static_cast<double>(weight));
  }
  object["text"] = tokenizer.decode(rendering.tokens, false);
  context.out << boost::json::serialize(object) << '\n';
}

asio::awaitable<void> render_command(Context& context, RenderOptions options) {
  const std::vector<renderers::Message> messages = [&] {
    try {
      return renderers::conversation_from_json(read_all(context.env.input));
    } catch (const error& e) {
      throw CliError(std::string("standard input: ") + e.what());
    }
  }();
  const std::shared_ptr<const Tokenizer> tokenizer = load_cli_tokenizer(context, options.tokenizer);
  try {
    const auto renderer = make_cli_renderer(options, tokenizer);
    const Rendering rendering = render(*renderer, messages, options);
    context.json() ? print_rendering_json(context, *tokenizer, rendering) : print_table(context, *tokenizer, rendering);
  } catch (const error& e) {
    throw CliError(e.what());  // the renderer's own words name the message and part
  }
  co_return;
}

std::string renderer_list() {
  std::string names;
  for (const std::string& name : renderers::renderer_names()) names += (names.empty() ? "" : ", ") + name;
  return names;
}

}  // namespace

void add_render_command(CLI::App& app, Action& action) {
  auto options = std::make_shared<RenderOptions>();
  CLI::App& command = add_command(app, "render",
                                  "Show the tokens a chat model is prompted with (--mode generation) or trained "
                                  "on (--mode supervised) for {\"messages\": [...]} on standard input",
                                  action, options, render_command, check_options);
  command.add_option("--renderer", options->renderer, "Renderer family (" + renderer_list() + ")");
  command.add_option("--model", options->model,
                     "Model name: its recommended renderer, and its tokenizer unless --tokenizer is given");
  command.add_option("--tokenizer", options->tokenizer,
                     "Model name, tokenizer file or directory holding one (default: --model)");
  command.add_option("--mode", options->mode, "generation: the prompt to sample from; supervised: training tokens")
      ->check(CLI::IsMember({"generation", "supervised"}))
      ->capture_default_str();
  command.add_option("--train-on", options->train_on, "Supervised mode: which messages carry weight")
      ->check(CLI::IsMember({"last_assistant_message", "last_assistant_turn", "all_assistant_messages", "all_messages",
                             "all_tokens", "all_user_and_system_messages", "customized"}))
      ->capture_default_str();
  command.add_option("--role", options->role, "Generation mode: the role of the message to generate")
      ->capture_default_str();
  command.add_option("--prefill", options->prefill, "Generation mode: the start of the generated message");
}

}  // namespace tinker::cli
