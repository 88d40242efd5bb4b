#include "local/server/cli.hpp"

#include "local/server/faults.hpp"

#include <charconv>
#include <limits>
#include <optional>

namespace tinker::local::front {
namespace {

template <class Int>
Int parse_integer(std::string_view flag, std::string_view text, Int min_value, Int max_value) {
  Int value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < min_value || value > max_value) {
    throw CommandLineError(std::string(flag) + ": expected an integer in [" + std::to_string(min_value) + ", " +
                           std::to_string(max_value) + "], got \"" + std::string(text) + "\"");
  }
  return value;
}

LogLevel parse_log_level(std::string_view text) {
  for (LogLevel level : {LogLevel::off, LogLevel::error, LogLevel::warning, LogLevel::info, LogLevel::debug}) {
    if (text == to_string(level)) return level;
  }
  if (text == "warn") return LogLevel::warning;
  throw CommandLineError("--log-level: expected off, error, warning, info or debug, got \"" + std::string(text) + "\"");
}

}  // namespace

std::string usage_text() {
  return R"(Usage: tinker-local [options]

A Tinker-compatible server on loopback with a tiny LoRA language model.
Prints "tinker-local listening on http://<host>:<port>" once ready; stops on SIGINT/SIGTERM.

Options:
  --host <address>         listen address (default 127.0.0.1)
  --port <n>               listen port; 0 = ephemeral, printed on start (default 0)
  --path-prefix <path>     serve under this prefix, e.g. /services/tinker (default none)
  --data-dir <dir>         sessions and checkpoints (default: a fresh temporary directory,
                           removed on exit)
  --hf-hub-cache <dir>     Hugging Face hub cache for the tokenizer (default $HF_HUB_CACHE,
                           $HF_HOME/hub, $XDG_CACHE_HOME/huggingface/hub, ~/.cache/huggingface/hub)
  --api-key <key>          accept this key (repeatable); default: any key starting with "tml-"
  --jwt                    announce pjwt_auth_enabled and mint JWTs at /api/v1/auth/token
  --sample-no-retries      announce sample_no_retries (clients send each sample once)
  --no-sample-stuck-detection  announce sample_enable_stuck_detection false (no progress timeout)
  --log-level <level>      off, error, warning, info (one line per request), debug (default warning)
  --null-model             every operation completes at once with well-formed results (benchmarks)
  --workers <n>            model worker threads (default 2)
  --long-poll-ms <ms>      how long retrieve_future holds a pending future (default 5000)
  --session-expiry-s <s>   sessions without heartbeat expire after this (default 300)
  --max-request-body <n>   larger request bodies get 413 (default 268435456)
  --max-header-bytes <n>   larger request heads get 431 (default 65536)
  --header-timeout-ms <ms> a started request head must be complete within this, or 408 (default 10000)
  --max-connections <n>    more connections at once get 503 (default 0: open-file limit - 64)
  --archive-json           answer checkpoint archive requests with 200 JSON instead of 302
  --fault <spec>           inject a fault (repeatable), see below
  --fault-seed <n>         seed of the fault generator (default 1)
  --help                   this text
  --version                versions of tinker-local and of the protocol it speaks

Fault spec: <endpoint>:<kind>[=<value>][,<key>=<value>]...
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
            asample:pause_queue=2s,state=paused_rate_limit,max=1
)";
}

CommandLine parse_command_line(const std::vector<std::string_view>& args) {
  CommandLine command;
  ServerOptions& options = command.options;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string_view flag = args[i];
    std::optional<std::string_view> inline_value;
    if (const std::size_t eq = flag.find('='); flag.substr(0, 2) == "--" && eq != std::string_view::npos) {
      inline_value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    }
    auto value = [&]() -> std::string_view {
      if (inline_value) return *inline_value;
      if (i + 1 >= args.size()) throw CommandLineError(std::string(flag) + ": missing value");
      return args[++i];
    };
    auto no_value = [&] {
      if (inline_value) throw CommandLineError(std::string(flag) + ": takes no value");
    };

    if (flag == "--help" || flag == "-h") {
      no_value();
      command.help = true;
    } else if (flag == "--version") {
      no_value();
      command.version = true;
    } else if (flag == "--host") {
      options.host = std::string(value());
      if (options.host.empty()) throw CommandLineError("--host: must not be empty");
    } else if (flag == "--port") {
      options.port = parse_integer<std::uint16_t>(flag, value(), 0, 65535);
    } else if (flag == "--path-prefix") {
      options.path_prefix = std::string(value());
      if (!options.path_prefix.empty() && (options.path_prefix.front() != '/' || options.path_prefix.back() == '/')) {
        throw CommandLineError("--path-prefix: must start with '/' and not end with '/'");
      }
    } else if (flag == "--data-dir") {
      options.data_dir = std::string(value());
    } else if (flag == "--hf-hub-cache") {
      options.hf_hub_cache = std::string(value());
    } else if (flag == "--api-key") {
      const std::string_view key = value();
      if (key.empty()) throw CommandLineError("--api-key: must not be empty");
      options.api_keys.emplace_back(key);
    } else if (flag == "--jwt") {
      no_value();
      options.client_config.pjwt_auth_enabled = true;
    } else if (flag == "--sample-no-retries") {
      no_value();
      options.client_config.sample_no_retries = true;
    } else if (flag == "--no-sample-stuck-detection") {
      no_value();
      options.client_config.sample_enable_stuck_detection = false;
    } else if (flag == "--log-level") {
      options.log_level = parse_log_level(value());
    } else if (flag == "--null-model") {
      no_value();
      options.null_model = true;
    } else if (flag == "--workers") {
      options.worker_threads = parse_integer<int>(flag, value(), 1, 256);
    } else if (flag == "--long-poll-ms") {
      options.long_poll_hold = std::chrono::milliseconds(parse_integer<std::int64_t>(flag, value(), 0, 40'000));
    } else if (flag == "--session-expiry-s") {
      options.session_expiry = std::chrono::seconds(parse_integer<std::int64_t>(flag, value(), 1, 31'536'000));
    } else if (flag == "--max-request-body") {
      options.max_request_body =
          parse_integer<std::size_t>(flag, value(), 1, std::numeric_limits<std::size_t>::max() / 2);
    } else if (flag == "--max-header-bytes") {
      options.max_header_bytes = parse_integer<std::size_t>(flag, value(), 1024, std::size_t{1} << 30);
    } else if (flag == "--header-timeout-ms") {
      options.header_timeout = std::chrono::milliseconds(parse_integer<std::int64_t>(flag, value(), 1, 3'600'000));
    } else if (flag == "--max-connections") {
      options.max_connections = parse_integer<std::size_t>(flag, value(), 0, 1'000'000);
    } else if (flag == "--archive-json") {
      no_value();
      options.archive_json_form = true;
    } else if (flag == "--fault") {
      const std::string_view spec = value();
      std::string problem;
      auto rule = parse_fault_spec(spec, problem);
      if (!rule) throw CommandLineError("--fault " + std::string(spec) + ": " + problem);
      options.faults.push_back(std::move(*rule));
    } else if (flag == "--fault-seed") {
      options.fault_seed = parse_integer<std::uint64_t>(flag, value(), 0, std::numeric_limits<std::uint64_t>::max());
    } else {
      throw CommandLineError(std::string(flag) + ": unknown option (see --help)");
    }
  }
  return command;
}

}  // namespace tinker::local::front
