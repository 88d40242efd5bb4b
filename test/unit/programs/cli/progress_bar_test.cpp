// The CLI's progress display (progress_bar.hpp) on a fake clock: the bar with its rate and time
// left, the redraw limit, the plain lines of a non-terminal, nothing when hidden.
#include "programs/cli/progress_bar.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

namespace tinker::cli {
namespace {

using namespace std::chrono_literals;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr std::uint64_t mib = 1024 * 1024;

class FakeTime {
 public:
  ProgressBar::Now now() {
    return [this] { return start + elapsed; };
  }
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  std::chrono::steady_clock::duration elapsed{0};
};

TEST(ProgressTexts, RatesAndTimesLeft) {
  EXPECT_EQ(rate_text(8.5 * mib), "8.5 MiB/s");
  EXPECT_EQ(rate_text(512), "512 B/s");
  EXPECT_EQ(eta_text(7), "0:07");
  EXPECT_EQ(eta_text(0.2), "0:01");  // never "0:00" while something is left
  EXPECT_EQ(eta_text(754), "12:34");
  EXPECT_EQ(eta_text(3723), "1:02:03");
}

TEST(ProgressBarTest, ABarShowsTheRateAndTimeLeftOnceASecondHasPassed) {
  std::ostringstream err;
  FakeTime time;
  ProgressBar bar(err, ProgressBar::Style::bar, "Merging", time.now());
  bar.update(0, 100 * mib);
  EXPECT_EQ(err.str(), "\rMerging  [------------------------------]   0%  0 B / 100.0 MiB   ");
  time.elapsed = 2s;
  bar.update(20 * mib, 100 * mib);
  EXPECT_THAT(err.str(), EndsWith("\rMerging  [######------------------------]  20%  20.0 MiB / 100.0 MiB  10.0 MiB/s  "
                                  "ETA 0:08   "));
  bar.finish();
  EXPECT_THAT(err.str(), EndsWith("\n"));
}

TEST(ProgressBarTest, RedrawsAtMostTenTimesASecondButAlwaysTheEnd) {
  std::ostringstream err;
  FakeTime time;
  ProgressBar bar(err, ProgressBar::Style::bar, "Writing", time.now());
  bar.update(1, 10);
  const std::string first = err.str();
  time.elapsed = 50ms;
  bar.update(2, 10);
  EXPECT_EQ(err.str(), first);
  bar.update(10, 10);
  EXPECT_THAT(err.str(), HasSubstr("100%"));
}

TEST(ProgressBarTest, ANewStageHasItsLabelAndItsOwnRate) {
  std::ostringstream err;
  FakeTime time;
  ProgressBar bar(err, ProgressBar::Style::bar, "Reading adapter", time.now());
  time.elapsed = 5s;
  bar.update(50 * mib, 50 * mib);
  bar.set_label("Merging");
  time.elapsed = 5s + 200ms;
  bar.update(1 * mib, 100 * mib);  // under a second into the stage: no rate yet
  EXPECT_THAT(err.str(), EndsWith("\rMerging  [------------------------------]   1%  1.0 MiB / 100.0 MiB   "));
}

TEST(ProgressBarTest, WithoutATerminalALineEveryInterval) {
  std::ostringstream err;
  FakeTime time;
  ProgressBar bar(err, ProgressBar::Style::lines, "Merging", time.now());
  bar.update(1 * mib, 100 * mib);
  EXPECT_EQ(err.str(), "");
  time.elapsed = 10s;
  bar.update(50 * mib, 100 * mib);
  EXPECT_EQ(err.str(), "Merging: 50%  50.0 MiB / 100.0 MiB  5.0 MiB/s  ETA 0:10\n");
  time.elapsed = 15s;
  bar.update(75 * mib, 100 * mib);
  EXPECT_THAT(err.str(), Not(HasSubstr("75")));
  time.elapsed = 20s;
  bar.update(80 * mib, std::nullopt);
  EXPECT_THAT(err.str(), EndsWith("Merging: 80.0 MiB  4.0 MiB/s\n"));
  bar.finish();
  EXPECT_THAT(err.str(), EndsWith("4.0 MiB/s\n"));
}

TEST(ProgressBarTest, HiddenDrawsNothing) {
  std::ostringstream err;
  ProgressBar bar(err, false, "Downloading");
  bar.update(5, 10);
  bar.finish();
  EXPECT_EQ(err.str(), "");
  ProgressBar shown(err, true, "Downloading");
  shown.update(5, 10);
  EXPECT_THAT(err.str(), StartsWith("\rDownloading  ["));
}

}  // namespace
}  // namespace tinker::cli
