#include "programs/local/server/cli.hpp"

#include "programs/local/server/faults.hpp"

#include <tinker/error.hpp>
#include <tinker/local/model_dir.hpp>

#include <CLI/CLI.hpp>

#include <charconv>
#include <functional>
#include <limits>
#include <optional>
#include <utility>

namespace tinker::local::front {
namespace {

const char* const kCommandLineDescription =
    "A Tinker-compatible server on loopback with a tiny LoRA language model.\n"
    "Prints \"tinker-local listening on http://<host>:<port>\" once ready; stops on SIGINT/SIGTERM.";

const char* const kFaultSpecHelp = R"(Fault spec: <endpoint>:<kind>[=<value>][,<key>=<value>]...
  endpoint  a path suffix such as retrieve_future, forward_backward, asample, training_runs;
            "*" = every /api/v1/ path; "_downloads" = archive downloads
  kind      status=<code>        answer this status (429, 408, 410, 500, 502, 503, 504, 402, ...;
                                 400 is sent bare: empty body, Content-Length 0)
            reset_before         reset the connection without answering (nothing applied)
            reset_mid_body       send the head and half the body, then reset (request applied)
            truncated_body       full Content-Length, half the body, then close (request applied)
            malformed_json       answer 200 with a body that is not JSON (request applied)
            delay=<duration>     hold the request, then serve it normally
            pause_queue=<dur>    futures of the endpoint report a paused queue_state for <dur>
  keys      prob=<0..1>          fire with this probability (reproducible from --fault-seed)
            calls=<n>[+<n>...]   fire on these calls of the rule (1-based), e.g. calls=1+3
            max=<n>              fire at most n times
            retry_after=<form>   seconds:<s> | http_date:<s> | ms:<milliseconds> | none
            should_retry=<bool>  add x-should-retry: true|false
            state=<state>        pause_queue: paused_capacity (default) or paused_rate_limit
  Without prob or calls a rule fires on every call. Durations: 250ms, 2s, or milliseconds.
  Examples: retrieve_future:status=429,retry_after=seconds:2,prob=0.2
            forward_backward:reset_mid_body,calls=1
            asample:pause_queue=2s,state=paused_rate_limit,max=1)";

// The whole of `text` as a decimal integer in [min_value, max_value]. std::from_chars, not CLI11's
// conversion: that one reads a leading 0 as octal ("010" would be 8).
template <class Int>
std::optional<Int> decimal_argument_in(std::string_view text, Int min_value, Int max_value) {
  Int value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < min_value || value > max_value) {
    return std::nullopt;
  }
  return value;
}

// An option taking a decimal integer in [min_value, max_value]; `store` receives it. CLI11 names the
// flag in front of the validator's message.
template <class Int>
CLI::Option* add_integer_option(CLI::App& app, const std::string& name, Int min_value, Int max_value,
                                std::function<void(Int)> store, const std::string& help) {
  auto parse_and_store = [min_value, max_value, store = std::move(store)](const std::string& text) {
    store(*decimal_argument_in(text, min_value, max_value));  // validated below
  };
  auto validate = [min_value, max_value](std::string& text) -> std::string {
    if (decimal_argument_in(text, min_value, max_value)) return {};
    return "expected an integer in [" + std::to_string(min_value) + ", " + std::to_string(max_value) + "], got \"" +
           text + "\"";
  };
  return app.add_option_function<std::string>(name, std::move(parse_and_store), help)
      ->check(CLI::Validator(std::move(validate), ""));
}

// A flag takes no value: "--jwt=yes" is an error.
CLI::Option* add_flag_without_value(CLI::App& app, const std::string& name, bool& value, const std::string& help) {
  return app.add_flag(name, value, help)->disable_flag_override();
}

CLI::Validator non_empty_argument() {
  return CLI::Validator([](std::string& text) { return text.empty() ? std::string("must not be empty") : ""; }, "");
}

std::optional<LogLevel> log_level_named(std::string_view text) {
  for (LogLevel level : {LogLevel::off, LogLevel::error, LogLevel::warning, LogLevel::info, LogLevel::debug}) {
    if (text == to_string(level)) return level;
  }
  if (text == "warn") return LogLevel::warning;
  return std::nullopt;
}

CLI::Validator log_level_check() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (log_level_named(text)) return {};
        return "expected off, error, warning, info or debug, got \"" + text + "\"";
      },
      "");
}

// Checks a --fault spec; the option's callback parses it again into the rule (it cannot fail then).
CLI::Validator fault_spec_check() {
  return CLI::Validator(
      [](std::string& spec) -> std::string {
        std::string problem;
        if (parse_fault_spec(spec, problem)) return {};
        return spec + ": " + problem;
      },
      "");
}

CLI::Validator path_prefix_check() {
  return CLI::Validator(
      [](std::string& prefix) -> std::string {
        if (prefix.empty() || (prefix.front() == '/' && prefix.back() != '/')) return {};
        return "must start with '/' and not end with '/'";
      },
      "");
}

void add_listen_options(CLI::App& app, ServerOptions& options) {
  const ServerOptions defaults;
  app.add_option("--host", options.host, "listen address")
      ->check(non_empty_argument())
      ->type_name("<address>")
      ->default_str(defaults.host);
  add_integer_option<std::uint16_t>(
      app, "--port", 0, 65535, [&options](std::uint16_t port) { options.port = port; },
      "listen port; 0 = ephemeral, printed on start")
      ->type_name("<n>")
      ->default_str(std::to_string(defaults.port));
  app.add_option("--path-prefix", options.path_prefix, "serve under this prefix, e.g. /services/tinker (default none)")
      ->check(path_prefix_check())
      ->type_name("<path>");
}

void add_storage_options(CLI::App& app, ServerOptions& options) {
  app.add_option("--data-dir", options.data_dir,
                 "sessions and checkpoints (default: a fresh temporary directory, removed on exit)")
      ->type_name("<dir>");
  app.add_option("--hf-hub-cache", options.hf_hub_cache,
                 "Hugging Face hub cache for the tokenizer (default $HF_HUB_CACHE, $HF_HOME/hub,\n"
                 "$XDG_CACHE_HOME/huggingface/hub, ~/.cache/huggingface/hub)")
      ->type_name("<dir>");
}

void add_client_options(CLI::App& app, ServerOptions& options) {
  app.add_option("--api-key", options.api_keys,
                 "accept this key (repeatable); default: any key starting with \"tml-\"")
      ->check(non_empty_argument())
      ->type_name("<key>")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false);  // one key per --api-key, as every other option
  ClientConfigFlags& config = options.client_config;
  add_flag_without_value(app, "--jwt", config.pjwt_auth_enabled,
                         "announce pjwt_auth_enabled and mint JWTs at /api/v1/auth/token");
  add_flag_without_value(app, "--sample-no-retries", config.sample_no_retries,
                         "announce sample_no_retries (clients send each sample once)");
  // A callback, not add_flag("...{false}"): CLI11 reads "--no-x=false" on such a flag as x = true.
  app.add_flag_callback(
         "--no-sample-stuck-detection", [&config] { config.sample_enable_stuck_detection = false; },
         "announce sample_enable_stuck_detection false (no progress timeout)")
      ->disable_flag_override();
}

void add_engine_options(CLI::App& app, ServerOptions& options) {
  const ServerOptions defaults;
  app.add_option_function<std::string>(
         "--log-level", [&options](const std::string& text) { options.log_level = *log_level_named(text); },
         "off, error, warning, info (one line per request), debug")
      ->check(log_level_check())
      ->type_name("<level>")
      ->default_str(to_string(defaults.log_level));
  add_flag_without_value(app, "--null-model", options.null_model,
                         "every operation completes at once with well-formed results (benchmarks)");
  add_integer_option<int>(
      app, "--workers", 1, 256, [&options](int workers) { options.worker_threads = workers; }, "model worker threads")
      ->type_name("<n>")
      ->default_str(std::to_string(defaults.worker_threads));
  add_integer_option<std::int64_t>(
      app, "--training-delay-ms", 0, 3'600'000,
      [&options](std::int64_t ms) { options.training_delay = std::chrono::milliseconds(ms); },
      "each forward_backward, forward and optim_step keeps its model busy this much longer (a slower GPU)")
      ->type_name("<ms>")
      ->default_str(std::to_string(defaults.training_delay.count()));
  add_integer_option<std::int64_t>(
      app, "--sampling-delay-ms", 0, 3'600'000,
      [&options](std::int64_t ms) { options.sampling_delay = std::chrono::milliseconds(ms); },
      "each sample request takes at least this long")
      ->type_name("<ms>")
      ->default_str(std::to_string(defaults.sampling_delay.count()));
  add_integer_option<std::int64_t>(
      app, "--long-poll-ms", 0, 40'000,
      [&options](std::int64_t ms) { options.long_poll_hold = std::chrono::milliseconds(ms); },
      "how long retrieve_future holds a pending future")
      ->type_name("<ms>")
      ->default_str(std::to_string(defaults.long_poll_hold.count()));
  add_integer_option<std::int64_t>(
      app, "--session-expiry-s", 1, 31'536'000,
      [&options](std::int64_t s) { options.session_expiry = std::chrono::seconds(s); },
      "sessions without heartbeat expire after this")
      ->type_name("<s>")
      ->default_str(std::to_string(defaults.session_expiry.count()));
}

void add_limit_options(CLI::App& app, ServerOptions& options) {
  const ServerOptions defaults;
  add_integer_option<std::size_t>(
      app, "--max-request-body", 1, std::numeric_limits<std::size_t>::max() / 2,
      [&options](std::size_t bytes) { options.max_request_body = bytes; }, "larger request bodies get 413")
      ->type_name("<n>")
      ->default_str(std::to_string(defaults.max_request_body));
  add_integer_option<std::size_t>(
      app, "--max-header-bytes", 1024, std::size_t{1} << 30,
      [&options](std::size_t bytes) { options.max_header_bytes = bytes; }, "larger request heads get 431")
      ->type_name("<n>")
      ->default_str(std::to_string(defaults.max_header_bytes));
  add_integer_option<std::int64_t>(
      app, "--header-timeout-ms", 1, 3'600'000,
      [&options](std::int64_t ms) { options.header_timeout = std::chrono::milliseconds(ms); },
      "a started request head must be complete within this, or 408")
      ->type_name("<ms>")
      ->default_str(std::to_string(defaults.header_timeout.count()));
  add_integer_option<std::size_t>(
      app, "--max-connections", 0, 1'000'000,
      [&options](std::size_t connections) { options.max_connections = connections; },
      "more connections at once get 503 (0: the open-file limit - 64)")
      ->type_name("<n>")
      ->default_str(std::to_string(defaults.max_connections));
  add_flag_without_value(app, "--archive-json", options.archive_json_form,
                         "answer checkpoint archive requests with 200 JSON instead of 302");
}

void add_fault_options(CLI::App& app, ServerOptions& options) {
  const ServerOptions defaults;
  app.add_option_function<std::vector<std::string>>(
         "--fault",
         [&options](const std::vector<std::string>& specs) {
           std::string problem;
           for (const std::string& spec : specs) options.faults.push_back(*parse_fault_spec(spec, problem));
         },
         "inject a fault (repeatable), see below")
      ->check(fault_spec_check())
      ->type_name("<spec>")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false);
  add_integer_option<std::uint64_t>(
      app, "--fault-seed", 0, std::numeric_limits<std::uint64_t>::max(),
      [&options](std::uint64_t seed) { options.fault_seed = seed; }, "seed of the fault generator")
      ->type_name("<n>")
      ->default_str(std::to_string(defaults.fault_seed));
}

// "NAME=VALUE" split at the first '='; nullopt unless both parts are non-empty.
std::optional<std::pair<std::string, std::string>> name_and_value(const std::string& spec) {
  const std::size_t equals = spec.find('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 == spec.size()) return std::nullopt;
  return std::pair(spec.substr(0, equals), spec.substr(equals + 1));
}

// "NAME=DIR:BASE_MODEL" (split at the last ':', base model names have none) as an import.
std::optional<AdapterImport> adapter_import_of(const std::string& spec) {
  const auto parts = name_and_value(spec);
  if (!parts) return std::nullopt;
  const std::size_t colon = parts->second.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == parts->second.size()) return std::nullopt;
  return AdapterImport(parts->first, parts->second.substr(0, colon), parts->second.substr(colon + 1));
}

CLI::Validator spec_check(bool adapter) {
  return CLI::Validator(
      [adapter](std::string& spec) -> std::string {
        if (adapter ? adapter_import_of(spec).has_value() : name_and_value(spec).has_value()) return {};
        return "expected " + std::string(adapter ? "NAME=DIR:BASE_MODEL" : "NAME=DIR") + ", got \"" + spec + "\"";
      },
      "");
}

// --model-dir and --adapter; the directories named by --model-dir are read after parsing.
void add_model_options(CLI::App& app, ServerOptions& options, std::vector<std::string>& model_dirs) {
  app.add_option("--model-dir", model_dirs,
                 "serve the Hugging Face directory DIR (written by export-model, or a merge of one)\n"
                 "as base model NAME (repeatable)")
      ->check(spec_check(false))
      ->type_name("<NAME=DIR>")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false);
  app.add_option_function<std::vector<std::string>>(
         "--adapter",
         [&options](const std::vector<std::string>& specs) {
           for (const std::string& spec : specs) options.adapters.push_back(*adapter_import_of(spec));
         },
         "serve the PEFT adapter in DIR over BASE_MODEL as the sampler checkpoint\n"
         "tinker://local-imports/sampler_weights/NAME (repeatable)")
      ->check(spec_check(true))
      ->type_name("<NAME=DIR:BASE_MODEL>")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false);
}

CLI::App* add_export_model_command(CLI::App& app, ExportModelCommand& command) {
  CLI::App* sub = app.add_subcommand(
      "export-model", "write base model MODEL as a Hugging Face directory (config.json, model.safetensors, tokenizer)");
  sub->fallthrough();  // --hf-hub-cache and --model-dir may follow the subcommand
  // Checked after parsing rather than marked required, so that `export-model --help` prints help.
  sub->add_option("model", command.model, "a base model of the catalogue, e.g. tinker-local/tiny-lm (required)")
      ->type_name("<MODEL>");
  sub->add_option("-o,--output", command.output_dir, "the directory to create, which must not exist (required)")
      ->type_name("<DIR>");
  sub->add_option_function<std::string>(
         "--dtype",
         [&command](const std::string& name) {
           command.dtype = name == "bf16"  ? safetensors::Dtype::bf16
                           : name == "f16" ? safetensors::Dtype::f16
                                           : safetensors::Dtype::f32;
         },
         "weights dtype: f32 (exact), bf16 or f16 (rounded to nearest even)")
      ->check(CLI::IsMember({"f32", "bf16", "f16"}))
      ->type_name("<dtype>")
      ->default_str("f32");
  return sub;
}

// Every option of tinker-local, bound to `command`; parsing and --help both use it.
CLI::App* describe_command_line(CLI::App& app, CommandLine& command, std::vector<std::string>& model_dirs,
                                ExportModelCommand& export_command) {
  app.set_help_flag();  // --help sets CommandLine::help (main prints usage_text()) instead of throwing
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // a repeated option: the last wins
  app.get_formatter()->column_width(32);
  ServerOptions& options = command.options;
  add_listen_options(app, options);
  add_storage_options(app, options);
  add_client_options(app, options);
  add_engine_options(app, options);
  add_limit_options(app, options);
  add_fault_options(app, options);
  add_model_options(app, options, model_dirs);
  add_flag_without_value(app, "-h,--help", command.help, "this text");
  add_flag_without_value(app, "--version", command.version, "versions of tinker-local and of the protocol it speaks");
  app.footer(kFaultSpecHelp);
  return add_export_model_command(app, export_command);
}

// Appends a catalogue entry per --model-dir, reading each directory's config.json.
void add_model_dirs(const std::vector<std::string>& specs, ServerOptions& options) {
  for (const std::string& spec : specs) {
    auto [name, dir] = *name_and_value(spec);
    for (const CatalogueEntry& entry : options.catalogue) {
      if (entry.name == name) throw CommandLineError("--model-dir " + spec + ": the catalogue already has " + name);
    }
    try {
      options.catalogue.push_back(model_dir_entry(name, dir));
    } catch (const tinker::error& e) {
      throw CommandLineError("--model-dir " + spec + ": " + (e.diag().message.empty() ? e.what() : e.diag().message));
    }
  }
}

}  // namespace

std::string usage_text() {
  CommandLine described;  // what --help lists is bound somewhere; nothing is parsed into it
  std::vector<std::string> model_dirs;
  ExportModelCommand export_command;
  CLI::App app(kCommandLineDescription, "tinker-local");
  CLI::App* export_model = describe_command_line(app, described, model_dirs, export_command);
  return app.help() + "\n" + export_model->help();
}

CommandLine parse_command_line(const std::vector<std::string_view>& args) {
  CommandLine command;
  std::vector<std::string> model_dirs;
  ExportModelCommand export_command;
  CLI::App app(kCommandLineDescription, "tinker-local");
  CLI::App* export_model = describe_command_line(app, command, model_dirs, export_command);
  std::vector<std::string> last_first(args.rbegin(), args.rend());  // CLI11 takes the arguments last first
  try {
    app.parse(last_first);
  } catch (const CLI::ParseError& e) {
    throw CommandLineError(e.what());
  }
  if (command.help || command.version) return command;
  add_model_dirs(model_dirs, command.options);
  if (export_model->parsed()) {
    if (export_command.model.empty() || export_command.output_dir.empty()) {
      throw CommandLineError("export-model: MODEL and -o DIR are required");
    }
    command.export_model = std::move(export_command);
  }
  return command;
}

}  // namespace tinker::local::front
