// A cheap reading of std::chrono::steady_clock for checks on the per-request path
// (doc/performance.md#clock-reads).
//
// libstdc++'s steady_clock is Linux's CLOCK_MONOTONIC, which reads the hardware counter: 20 ns
// where the vDSO reads the TSC cheaply, but 80-200 ns on virtual machines with a slow clock source,
// and a sample used to read it 17 times. CLOCK_MONOTONIC_COARSE is the same clock as of the last
// timer tick, read from memory in every case: never ahead of a precise reading taken after it, but
// behind by a tick (1-4 ms) or more (measured: more than 4 ms after the CPU was idle). So it may
// only make a check late, never early: "has the timeout passed since <a precise stamp>?" asked with
// the coarse clock says yes up to a few milliseconds late; a stamp taken with it is older than
// the truth, which is fine for a connection's last use (closed a little sooner when idle) but not
// for a deadline that must not fire early.
#pragma once

#include <time.h>

#include <chrono>

namespace tinker::core {

inline std::chrono::steady_clock::time_point coarse_steady_now() noexcept {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
  const auto since_boot = std::chrono::seconds(now.tv_sec) + std::chrono::nanoseconds(now.tv_nsec);
  return std::chrono::steady_clock::time_point(
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(since_boot));
}

}  // namespace tinker::core
