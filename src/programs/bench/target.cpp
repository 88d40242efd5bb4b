#include "programs/bench/target.hpp"

#include <tinker/local/server.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>
#include <string_view>

namespace tinker::bench {
namespace {

constexpr const char* local_model = "tinker-local/tiny-lm";
constexpr const char* local_key = "tml-tinker-bench";

// Serves until the parent closes its end of `life_fd` (or dies); ~Server then removes its temporary data directory.
void serve(bool null_model, bool per_request_polling, std::int64_t long_poll_ms, int port_fd, int life_fd) {
  tinker::local::ServerOptions options;
  if (long_poll_ms > 0) options.long_poll_hold = std::chrono::milliseconds(long_poll_ms);
  options.null_model = null_model;
  options.client_config.sample_use_retrieve_futures = !per_request_polling;
  // Thousands of samples in flight end to end (--in-flight above the protocol's 2000); never fewer than it.
  options.client_config.sample_max_concurrent_requests = 8192;
  options.sample_queue_limit = 16384;
  options.log_level = LogLevel::off;
  options.request_log_limit = 1000;
  // Results are fetched at once; kept for an hour, a long storm would grow the server as it runs.
  options.result_retention = std::chrono::seconds(60);
  tinker::local::Server server(options);
  server.start();
  const std::uint16_t port = server.port();
  if (write(port_fd, &port, sizeof port) != sizeof port) return;
  close(port_fd);
  char byte;
  while (read(life_fd, &byte, 1) > 0) {
  }
}

// The child's whole life: it exits without running the parent's atexit handlers or destructors.
[[noreturn]] void serve_in_child(bool null_model, bool per_request_polling, std::int64_t long_poll_ms, int port_fd,
                                 int life_fd) {
  try {
    serve(null_model, per_request_polling, long_poll_ms, port_fd, life_fd);
  } catch (...) {
    _exit(1);
  }
  _exit(0);
}

}  // namespace

LocalServer::LocalServer(bool null_model, bool per_request_polling, std::int64_t long_poll_ms) {
  int port_pipe[2];
  int life_pipe[2];
  if (pipe(port_pipe) != 0) throw std::runtime_error("pipe() failed");
  if (pipe(life_pipe) != 0) throw std::runtime_error("pipe() failed");
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork() failed");
  if (pid_ == 0) {
    close(port_pipe[0]);
    close(life_pipe[1]);
    serve_in_child(null_model, per_request_polling, long_poll_ms, port_pipe[1], life_pipe[0]);
  }
  close(port_pipe[1]);
  close(life_pipe[0]);
  keepalive_fd_ = life_pipe[1];
  const bool started = read(port_pipe[0], &port_, sizeof port_) == sizeof port_;
  close(port_pipe[0]);
  if (!started) throw std::runtime_error("the local tinker-local server did not start");
}

LocalServer::~LocalServer() {
  if (keepalive_fd_ >= 0) close(keepalive_fd_);
  if (pid_ > 0) waitpid(pid_, nullptr, 0);
}

std::string LocalServer::base_url() const {
  return "http://127.0.0.1:" + std::to_string(port_);
}

bool is_loopback_url(const std::string& url) {
  std::string_view rest = url;
  const auto scheme_end = rest.find("://");
  if (scheme_end != std::string_view::npos) rest.remove_prefix(scheme_end + 3);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  if (const auto at = rest.rfind('@'); at != std::string_view::npos) rest.remove_prefix(at + 1);
  std::string_view host = rest;
  if (host.starts_with('[')) {
    host = host.substr(0, host.find(']') + 1);
  } else {
    host = host.substr(0, host.find(':'));
  }
  return host == "localhost" || host == "127.0.0.1" || host == "[::1]";
}

Target resolve_target(const TargetSettings& settings, const LocalServer* server) {
  if (settings.null_model && !settings.local) throw std::invalid_argument("--null-model needs --local");
  if (settings.local && !settings.base_url.empty())
    throw std::invalid_argument("--local and --base-url exclude each other");
  Target target;
  target.lora_rank = settings.lora_rank;
  target.null_model = settings.null_model;
  if (server != nullptr) {
    target.kind = settings.null_model ? "local-null-model" : "local";
    target.base_url = server->base_url();
    target.server_pid = server->pid();
    target.local_port = server->port();
  } else {
    target.kind = "url";
    target.base_url = settings.base_url.empty() ? ClientOptions::from_environment().base_url : settings.base_url;
  }
  target.base_model = settings.base_model;
  if (target.base_model.empty()) {
    if (server == nullptr && !is_loopback_url(target.base_url)) {
      throw std::invalid_argument("--base-model is required against " + target.base_url +
                                  " (the model every scenario trains and samples)");
    }
    target.base_model = local_model;
  }
  return target;
}

ClientOptions client_options_for(const TargetSettings& settings, const Target& target) {
  ClientOptions options = settings.local ? ClientOptions() : ClientOptions::from_environment();
  options.base_url = target.base_url;
  // tinker-local takes any key starting with "tml-": a loopback server needs none in the environment.
  const bool local_server = settings.local || is_loopback_url(target.base_url);
  if (settings.local || (local_server && options.api_key.empty())) options.api_key = Secret(local_key);
  // A benchmark's counters and timings are the workload's: no telemetry batches in between.
  options.telemetry_enabled = false;
  options.log_level = LogLevel::error;
  options.validate(/*require_credential=*/true);
  return options;
}

}  // namespace tinker::bench
