// `tinker sample`: replies to one prompt, sent as one user message in the model's chat format
// (or, with --raw, as the prompt's tokens alone).
//
//   tinker sample --model Qwen/Qwen3.5-4B --num-samples 3 "Name a prime number."
//   tinker sample --checkpoint tinker://<run-id>/sampler_weights/final --raw -f json "Once upon a time"
//
// Table output: each parsed reply as `tinker chat` shows it (under a "--- sample i of n ---" line
// when there are several); with --raw, the decoded text. JSON output (-f json): {"samples": [...]},
// each the chat's reply object plus "tokens", or with --raw {"text", "tokens", "stop_reason"}.
#include "programs/cli/context.hpp"
#include "programs/cli/output.hpp"
#include "programs/cli/replies.hpp"
#include "programs/cli/sampling_setup.hpp"
#include "programs/cli/sampling_turn.hpp"

#include <tinker/error.hpp>
#include <tinker/renderers.hpp>
#include <tinker/tokenizer.hpp>

#include <CLI/CLI.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <istream>
#include <iterator>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace tinker::cli {
namespace {
namespace asio = boost::asio;

class SampleCommandOptions {
 public:
  SamplerOptions sampler;
  std::string prompt;  // "-": standard input
  std::string system_prompt;
  bool raw = false;
  std::int64_t num_samples = 1;
};

void check_sample_options(SampleCommandOptions& options) {
  check_sampler_options(options.sampler);
  if (options.raw && !options.sampler.renderer.empty()) throw UsageError("--raw uses no chat format: drop --renderer");
  if (options.raw && !options.system_prompt.empty()) throw UsageError("--raw sends no messages: drop --system");
}

std::string prompt_text(const Context& context, const SampleCommandOptions& options) {
  if (options.prompt != "-") return options.prompt;
  if (context.env.input == nullptr) throw CliError("PROMPT is - but there is no standard input");
  return std::string(std::istreambuf_iterator<char>(*context.env.input), std::istreambuf_iterator<char>());
}

ModelInput build_prompt(const OpenedSampler& sampler, const SampleCommandOptions& options, const std::string& text) {
  if (options.raw) return ModelInput::from_ints(sampler.tokenizer->encode(text, true));
  std::vector<renderers::Message> messages;
  if (!options.system_prompt.empty()) messages.emplace_back("system", options.system_prompt);
  messages.emplace_back("user", text);
  try {
    return sampler.renderer->build_generation_prompt(messages);
  } catch (const error& e) {
    throw CliError(e.what());
  }
}

boost::json::array token_json(const std::vector<TokenId>& tokens) {
  boost::json::array array;
  for (TokenId id : tokens) array.emplace_back(id);
  return array;
}

boost::json::object sample_json(const OpenedSampler& sampler, const SampledSequence& sequence) {
  boost::json::object object;
  if (sampler.renderer) {
    object = reply_json(sampler.renderer->parse_response(sequence.tokens), sequence.stop_reason);
  } else {
    object["text"] = sampler.tokenizer->decode(sequence.tokens, false);
    object["stop_reason"] = to_string(sequence.stop_reason);
  }
  object["tokens"] = token_json(sequence.tokens);
  return object;
}

void print_samples(Context& context, const OpenedSampler& sampler, const std::vector<SampledSequence>& sequences) {
  const ReplyStyle style = context.env.output_is_terminal ? ReplyStyle::terminal : ReplyStyle::plain;
  for (std::size_t i = 0; i < sequences.size(); ++i) {
    if (sequences.size() > 1) context.out << "--- sample " << i + 1 << " of " << sequences.size() << " ---\n";
    const SampledSequence& sequence = sequences[i];
    if (sampler.renderer) {
      print_reply(context.out, sampler.renderer->parse_response(sequence.tokens), sequence.stop_reason, style);
    } else {
      const std::string text = sampler.tokenizer->decode(sequence.tokens, false);
      context.out << (style == ReplyStyle::terminal ? terminal_safe(text) : text) << '\n';
    }
  }
}

asio::awaitable<void> sample_command(Context& context, SampleCommandOptions options) {
  const std::string text = prompt_text(context, options);
  const SamplingBackend backend(context, options.sampler.local);
  const OpenedSampler sampler = co_await open_sampler(backend, options.sampler, !options.raw);
  const ModelInput prompt = build_prompt(sampler, options, text);
  const std::optional<StopCondition> stop =
      sampler.renderer ? std::optional<StopCondition>(sampler.renderer->stop_sequences()) : std::nullopt;
  const bool spinner = context.env.output_is_terminal && !context.json();
  const std::vector<SampledSequence> sequences = co_await sample_sequences(
      context, sampler.client, prompt, options.sampler.sampling_params(stop), options.num_samples, spinner);
  if (context.json()) {
    boost::json::array samples;
    for (const SampledSequence& sequence : sequences) samples.push_back(sample_json(sampler, sequence));
    print_json(context.out, boost::json::object{{"samples", std::move(samples)}});
  } else {
    print_samples(context, sampler, sequences);
  }
}

}  // namespace

void add_sample_command(CLI::App& app, Action& action) {
  auto options = std::make_shared<SampleCommandOptions>();
  CLI::App& command = add_command(app, "sample",
                                  "Sample replies to one prompt from a base model or a sampler checkpoint, sent as "
                                  "a user message in its chat format (or as raw text with --raw)",
                                  action, options, sample_command, check_sample_options);
  command.add_option("PROMPT", options->prompt, "The prompt (- reads it from standard input)")->required();
  add_sampler_options(command, options->sampler);
  command.add_option("--num-samples,-n", options->num_samples, "How many replies to sample")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command.add_option("--system", options->system_prompt, "A system message before the prompt");
  command.add_flag("--raw", options->raw,
                   "Send the prompt's tokens as they are (with the tokenizer's special tokens, e.g. a BOS), no chat "
                   "format; print the decoded text");
}

}  // namespace tinker::cli
