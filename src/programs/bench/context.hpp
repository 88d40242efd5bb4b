// What every scenario runs with (doc/bench.md#what-is-measured): the client on the main thread's io_context, the
// target, the progress line; the meter of a scenario's measured phase; and a group of worker coroutines to await.
#pragma once

#include "programs/bench/measure.hpp"
#include "programs/bench/progress.hpp"
#include "programs/bench/report.hpp"
#include "programs/bench/target.hpp"

#include <tinker/tinker.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tinker::bench {

class Bench {
 public:
  Bench(boost::asio::io_context& io_, ServiceClient& service_, const Target& target_, Progress& progress_,
        std::function<bool()> interrupted_)
      : io(io_), service(service_), target(target_), progress(progress_), interrupted(std::move(interrupted_)) {}

  boost::asio::io_context& io;
  ServiceClient& service;
  const Target& target;
  Progress& progress;
  std::function<bool()> interrupted;  ///< Ctrl-C was pressed: start no more work
};

/// The measured phase of a scenario: wall time, this process's CPU time, the request counters and the forked
/// server's CPU time, between start() and stop().
class Meter {
 public:
  void start(const Bench& bench);
  void stop(const Bench& bench);
  /// Started and not stopped (a scenario that failed half-way).
  bool running() const noexcept { return running_; }
  double wall_seconds() const noexcept { return seconds_between(started_, stopped_); }
  double cpu_seconds() const noexcept { return cpu_stop_ - cpu_start_; }
  /// Adds the common fields (doc/bench.md#common-fields) to `report`.
  void write(Report& report) const;

 private:
  bool running_ = false;
  Clock::time_point started_{};
  Clock::time_point stopped_{};
  double cpu_start_ = 0;
  double cpu_stop_ = 0;
  RequestCounters counters_start_;
  RequestCounters counters_stop_;
  std::optional<double> server_cpu_start_;
  std::optional<double> server_cpu_stop_;
};

/// Coroutines spawned on one executor and awaited together. The first exception one of them throws is rethrown by
/// wait().
class WorkerGroup {
 public:
  explicit WorkerGroup(boost::asio::any_io_executor executor);
  void spawn(boost::asio::awaitable<void> work);
  boost::asio::awaitable<void> wait();

 private:
  boost::asio::any_io_executor executor_;
  boost::asio::steady_timer all_done_;
  int running_ = 0;
  std::exception_ptr failure_;
};

/// `count` token ids below 1000 (valid for every model's vocabulary), varied by `salt`.
std::vector<TokenId> token_ids(std::int64_t count, std::int64_t salt);
/// The same ids as the raw loop writes them: joined by commas.
std::string joined_ids(const std::vector<TokenId>& ids);

/// "<message>: <diagnostics message>" of a failed call, for a result's first_error.
std::string describe_failure(const boost::system::error_code& ec, const diagnostics& diag);

/// What every scenario counts: iterations completed and failed, and the first failure's
/// description (a result's `first_error`).
class Outcomes {
 public:
  void fail(const boost::system::error_code& ec, const diagnostics& diag) {
    ++failed;
    if (first_error.empty()) first_error = describe_failure(ec, diag);
  }

  std::int64_t completed = 0;
  std::int64_t failed = 0;
  std::string first_error;
};

}  // namespace tinker::bench
