// What every tinker-bench result measures besides its scenario's own figures (doc/bench.md#what-is-measured): the
// client's CPU time and peak resident memory, the local server's CPU time, and distributions reported as
// percentiles.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace tinker::bench {

using Clock = std::chrono::steady_clock;

/// Seconds between two steady-clock points.
double seconds_between(Clock::time_point from, Clock::time_point to);
/// Milliseconds between two steady-clock points.
double ms_between(Clock::time_point from, Clock::time_point to);

/// `amount / count`, or 0 when nothing was counted (a rate or a mean over an empty run).
inline double per(double amount, double count) {
  return count > 0 ? amount / count : 0.0;
}

/// User + system CPU time of this whole process (every thread), from getrusage(RUSAGE_SELF). A forked local server
/// is another process and never counted here.
double process_cpu_seconds();

/// Peak resident memory (VmHWM) since reset_peak_rss(), in bytes; the process's lifetime peak (ru_maxrss) where
/// the kernel cannot reset it.
class PeakRss {
 public:
  /// Resets the kernel's high-water mark (writes "5" to /proc/self/clear_refs). False where that is refused.
  static bool reset();
  /// VmHWM from /proc/self/status, else getrusage's ru_maxrss.
  static std::uint64_t bytes();
};

/// User + system CPU time of another process (the forked server) from /proc/<pid>/stat; empty when unreadable.
std::optional<double> child_cpu_seconds(pid_t pid);

/// The p50/p90/p99/max of a set of values (nearest rank). Empty sets report zeros and count 0.
class Percentiles {
 public:
  Percentiles() = default;
  explicit Percentiles(std::vector<double> values);

  std::size_t count = 0;
  double p50 = 0;
  double p90 = 0;
  double p99 = 0;
  double max = 0;
  double mean = 0;
};

/// The value at nearest rank `p` (0..100) of sorted `values`; 0 for none.
double nearest_rank(const std::vector<double>& sorted, double p);

/// The median of `values` (the lower middle of an even count); 0 for none.
double median(std::vector<double> values);

}  // namespace tinker::bench
