#include "programs/bench/cli.hpp"

#include "programs/bench/bench.hpp"
#include "programs/bench/training_data.hpp"

#include <tinker/version.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <ostream>
#include <stdexcept>

namespace tinker::bench {
namespace {

const char* const description =
    "Measure what a Tinker workload costs: throughput, latency percentiles, client CPU and memory, retries.\n"
    "Against the service in TINKER_BASE_URL/--base-url (TINKER_API_KEY; asks before spending), or an embedded\n"
    "tinker-local (--local, optionally --null-model). See doc/bench.md.";

void add_size(CLI::App& command, const std::string& name, std::int64_t& value, const std::string& help) {
  command.add_option(name, value, help)->check(CLI::PositiveNumber)->capture_default_str();
}

void add_target_options(CLI::App& app, TargetSettings& target) {
  app.add_flag("--local", target.local, "Run against an embedded tinker-local (a forked child process)");
  app.add_flag("--null-model", target.null_model, "With --local: no model computations (measures the client)");
  app.add_flag("--local-per-request-polling", target.per_request_polling,
               "With --local: the server turns off the batched result poll (retrieve_futures)");
  app.add_option("--local-long-poll-ms", target.local_long_poll_ms,
                 "With --local: how long the server holds a pending retrieve_future (default 5000)")
      ->check(CLI::PositiveNumber);
  app.add_option("--base-url", target.base_url, "The service's URL (default: TINKER_BASE_URL, else the SDK's)");
  app.add_option("--base-model", target.base_model,
                 "The model to train and sample (required against a remote service; local: tinker-local/tiny-lm)");
  add_size(app, "--lora-rank", target.lora_rank, "LoRA rank of the training client");
  app.add_flag("-y,--yes", target.yes, "Spend without asking (a remote service only; see doc/bench.md#cost-guard)");
}

void add_sample(CLI::App& app, Invocation& invocation) {
  SampleSettings& s = invocation.sample;
  CLI::App* command = app.add_subcommand("sample", "N sample requests, C in flight, each awaited to its result");
  add_size(*command, "--requests", s.requests, "Sample requests in all");
  add_size(*command, "--in-flight", s.in_flight, "Requests outstanding at once");
  add_size(*command, "--prompt-tokens", s.prompt_tokens, "Tokens per prompt");
  add_size(*command, "--num-samples", s.num_samples, "Sequences per request");
  add_size(*command, "--max-tokens", s.max_tokens, "Tokens per sequence at most");
  command->add_flag("--prompt-logprobs", s.prompt_logprobs, "Also ask for the prompt's logprobs");
  command->add_flag("--compare-raw", s.compare_raw,
                    "With --local: then alternate the raw Beast loop and the SDK, and print the SDK's ratios");
  add_size(*command, "--pairs", s.pairs, "--compare-raw: raw/SDK pairs");
  command->add_option("--seconds", s.seconds, "--compare-raw: seconds per point (after a 0.3 s warm-up)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command->callback([&invocation] { invocation.scenarios = {Scenario::sample}; });
}

void add_logprobs(CLI::App& app, Invocation& invocation) {
  LogprobsSettings& s = invocation.logprobs;
  CLI::App* command = app.add_subcommand("logprobs", "A compute_logprobs storm: N requests, C in flight");
  add_size(*command, "--requests", s.requests, "compute_logprobs calls in all");
  add_size(*command, "--in-flight", s.in_flight, "Calls outstanding at once");
  add_size(*command, "--prompt-tokens", s.prompt_tokens, "Tokens per prompt");
  command->callback([&invocation] { invocation.scenarios = {Scenario::logprobs}; });
}

void add_train(CLI::App& app, Invocation& invocation) {
  TrainSettings& s = invocation.train;
  CLI::App* command = app.add_subcommand("train", "Pipelined forward_backward + optim_step steps");
  add_size(*command, "--steps", s.steps, "Training steps");
  add_size(*command, "--batch", s.batch, "Examples per step");
  add_size(*command, "--tokens", s.tokens, "Tokens per example");
  add_size(*command, "--depth", s.depth, "Steps submitted before the oldest is awaited (1: no pipelining)");
  command->add_option("--loss", s.loss, "cross_entropy, importance_sampling, ppo or cispo")->capture_default_str();
  command->callback([&invocation] { invocation.scenarios = {Scenario::train}; });
}

void add_rl(CLI::App& app, Invocation& invocation) {
  RlSettings& s = invocation.rl;
  CLI::App* command =
      app.add_subcommand("rl", "RL iterations: sample groups, train a step on them, make a fresh sampler");
  add_size(*command, "--iterations", s.iterations, "RL iterations");
  add_size(*command, "--prompts", s.prompts, "Prompts (groups) per iteration, all sampled at once");
  add_size(*command, "--group-size", s.group_size, "Samples per prompt (num_samples)");
  add_size(*command, "--prompt-tokens", s.prompt_tokens, "Tokens per prompt (at least 2)");
  add_size(*command, "--max-tokens", s.max_tokens, "Tokens per sample at most");
  command->callback([&invocation] { invocation.scenarios = {Scenario::rl}; });
}

void add_checkpoint(CLI::App& app, Invocation& invocation) {
  CheckpointSettings& s = invocation.checkpoint;
  CLI::App* command = app.add_subcommand(
      "checkpoint", "save_state, save_weights_for_sampler, load_state and the archive download, repeated");
  add_size(*command, "--repeats", s.repeats, "Rounds");
  command->add_flag("--no-download{false}", s.download, "Skip the archive download");
  command->callback([&invocation] { invocation.scenarios = {Scenario::checkpoint}; });
}

// Flags that parse but do not go together; std::invalid_argument names them.
void check(const Invocation& invocation) {
  const TargetSettings& target = invocation.target;
  if (target.null_model && !target.local) throw std::invalid_argument("--null-model needs --local");
  if ((target.per_request_polling || target.local_long_poll_ms > 0) && !target.local) {
    throw std::invalid_argument("--local-per-request-polling and --local-long-poll-ms need --local");
  }
  if (target.local && !target.base_url.empty())
    throw std::invalid_argument("--local and --base-url exclude each other");
  if (invocation.sample.compare_raw && !target.local) {
    throw std::invalid_argument("--compare-raw needs --local (the raw loop speaks plain HTTP to the forked server)");
  }
  if (!known_loss(invocation.train.loss)) {
    throw std::invalid_argument("--loss must be cross_entropy, importance_sampling, ppo or cispo");
  }
  if (invocation.rl.prompt_tokens < 2) throw std::invalid_argument("rl --prompt-tokens must be at least 2");
}

}  // namespace

std::optional<int> parse_invocation(std::vector<std::string> args, Invocation& invocation, std::ostream& out,
                                    std::ostream& err) {
  CLI::App app(description, "tinker-bench");
  app.fallthrough();  // target and output flags may also follow the scenario
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("tinker-bench ") + sdk_version);
  add_target_options(app, invocation.target);
  bool json = false;
  bool csv = false;
  CLI::Option* json_flag = app.add_flag("--json", json, "One JSON object per scenario (fields: doc/bench.md#results)");
  app.add_flag("--csv", csv, "A CSV header and row per scenario")->excludes(json_flag);
  add_sample(app, invocation);
  add_train(app, invocation);
  add_logprobs(app, invocation);
  add_rl(app, invocation);
  add_checkpoint(app, invocation);
  app.add_subcommand("all", "Every scenario with its default sizes")->callback([&invocation] {
    invocation.scenarios = {Scenario::sample, Scenario::train, Scenario::logprobs, Scenario::rl, Scenario::checkpoint};
  });

  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last first
  try {
    app.parse(args);
    check(invocation);
  } catch (const CLI::Success& e) {
    return app.exit(e, out, err);
  } catch (const CLI::ParseError& e) {
    err << "Error: " << e.what() << "\nRun with --help for more information.\n";
    return exit_usage;
  } catch (const std::invalid_argument& e) {
    err << "Error: " << e.what() << "\nRun with --help for more information.\n";
    return exit_usage;
  }
  invocation.format = json ? OutputFormat::json : csv ? OutputFormat::csv : OutputFormat::table;
  return std::nullopt;
}

const char* scenario_name(Scenario scenario) {
  switch (scenario) {
    case Scenario::sample: return "sample";
    case Scenario::train: return "train";
    case Scenario::logprobs: return "logprobs";
    case Scenario::rl: return "rl";
    case Scenario::checkpoint: return "checkpoint";
  }
  return "?";
}

}  // namespace tinker::bench
