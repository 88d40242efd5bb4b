// Where tinker-bench sends its requests (doc/bench.md#targets): the real service (or any URL), or an embedded
// tinker-local forked into a child process so that none of its CPU time or memory is counted as the client's.
#pragma once

#include "programs/bench/settings.hpp"

#include <tinker/config.hpp>

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace tinker::bench {

/// tinker-local in a forked child process. Fork it before the process starts any thread: the child then runs the
/// server's threads alone. It stops when this object goes (or when this process dies: it watches a pipe).
class LocalServer {
 public:
  /// Forks and starts the server (the real tiny model, or none with `null_model`; announcing
  /// sample_use_retrieve_futures unless `per_request_polling`; holding a pending poll `long_poll_ms`, 0: its
  /// default); throws std::runtime_error when it does not come up.
  explicit LocalServer(bool null_model, bool per_request_polling = false, std::int64_t long_poll_ms = 0);
  ~LocalServer();
  LocalServer(const LocalServer&) = delete;
  LocalServer& operator=(const LocalServer&) = delete;

  std::uint16_t port() const noexcept { return port_; }
  pid_t pid() const noexcept { return pid_; }
  std::string base_url() const;

 private:
  pid_t pid_ = -1;
  std::uint16_t port_ = 0;
  int keepalive_fd_ = -1;  ///< the child serves until this closes
};

/// What the results say about the target, and what the scenarios need of it.
class Target {
 public:
  Target() = default;

  std::string kind;        ///< "local-null-model", "local" or "url"
  std::string base_url;    ///< where the requests go
  std::string base_model;  ///< the model every scenario uses
  std::int64_t lora_rank = 32;
  bool null_model = false;                  ///< results come at once: no server-side computation to wait for
  std::optional<pid_t> server_pid;          ///< the forked local server, whose CPU time is reported apart
  std::optional<std::uint16_t> local_port;  ///< the forked local server's port (the raw loop of --compare-raw)
};

/// True for a URL whose host is written localhost, 127.0.0.1 or [::1]: such a target spends no money and needs no
/// confirmation. Every other host counts as the real service (doc/bench.md#cost-guard).
bool is_loopback_url(const std::string& url);

/// The client options for `target` from the environment (TINKER_API_KEY, ...) and the flags; throws tinker::error
/// (invalid_configuration) when they are not usable, before anything is sent.
ClientOptions client_options_for(const TargetSettings& settings, const Target& target);

/// The target `settings` describe, with `server` the forked local one when --local was given. Throws
/// std::invalid_argument for flags that do not go together or a missing --base-model.
Target resolve_target(const TargetSettings& settings, const LocalServer* server);

}  // namespace tinker::bench
