#include "core/coarse_clock.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace tinker::core {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

// The steady clock as of the last tick: never ahead of a precise reading taken after it (so a check
// "has the timeout passed?" asked with it is never early), and behind it by a tick or a few (50 ms
// allowed for a loaded machine), also right after the thread slept.
TEST(CoarseClock, IsTheSteadyClockNeverAheadAndOnlyAFewMillisecondsBehind) {
  for (int i = 0; i < 200; ++i) {
    if (i % 50 == 0) std::this_thread::sleep_for(milliseconds(7));
    const steady_clock::time_point coarse = coarse_steady_now();
    const steady_clock::time_point precise = steady_clock::now();
    EXPECT_LE(coarse, precise);
    EXPECT_GE(coarse, precise - milliseconds(50));
  }
}

TEST(CoarseClock, Advances) {
  const steady_clock::time_point before = coarse_steady_now();
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_GT(coarse_steady_now(), before);
}

}  // namespace
}  // namespace tinker::core
