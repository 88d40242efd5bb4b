// ProgressLine: its text (steps, percentage, rate, ETA, chosen metrics) and in-place redrawing.
#include <tinker/train/progress.hpp>

#include <gtest/gtest.h>

#include <iostream>
#include <sstream>

namespace tinker::train {
namespace {

StepMetrics timed_step(std::int64_t step, double seconds, double loss) {
  StepMetrics metrics(step);
  metrics.set("time/step", seconds);
  metrics.set("loss", loss);
  metrics.set("lr", 0.0001);
  return metrics;
}

TEST(ProgressLine, PlainOutputIsOneLinePerStepWithRateAndEta) {
  std::ostringstream out;
  ProgressLine progress(100, out, false);
  progress.update(timed_step(0, 0.5, 2.0));
  progress.update(timed_step(1, 0.3, 1.23456));
  progress.finish();
  // 2 steps in 0.8 s = 2.5 steps/s; 98 steps left = 39.2 s.
  EXPECT_EQ(out.str(),
            "step 1/100 (1%) | 2.00 steps/s | ETA 50s | loss 2 | lr 0.0001\n"
            "step 2/100 (2%) | 2.50 steps/s | ETA 39s | loss 1.235 | lr 0.0001\n");
}

TEST(ProgressLine, SlowStepsShowSecondsPerStepAndLongEtas) {
  std::ostringstream out;
  ProgressLine progress(1000, out, false);
  progress.update(timed_step(9, 12.0, 0.5));
  // 990 steps left at 12 s = 11880 s = 3h18m.
  EXPECT_EQ(out.str(), "step 10/1000 (1%) | 12.0 s/step | ETA 3h18m | loss 0.5 | lr 0.0001\n");
  EXPECT_EQ(progress.format(timed_step(899, 1, 0.5), 150.0, 100),
            "step 900/1000 (90%) | 1.5 s/step | ETA 2m30s | loss 0.5 | lr 0.0001");
}

TEST(ProgressLine, TheLastStepHasNoEtaAndAnUnknownTotalNoPercentage) {
  ProgressLine known(4, std::cout, false);
  EXPECT_EQ(known.format(timed_step(3, 1.0, 0.1), 4.0, 4), "step 4/4 (100%) | 1.00 steps/s | loss 0.1 | lr 0.0001");
  ProgressLine unknown(0, std::cout, false);
  EXPECT_EQ(unknown.format(timed_step(3, 1.0, 0.1), 2.0, 4), "step 4 | 2.00 steps/s | loss 0.1 | lr 0.0001");
}

TEST(ProgressLine, ShowsAtMostFourPreferredKeysOrElseTheFirstNonTimingValues) {
  ProgressLine progress(10, std::cout, false);
  StepMetrics rl(0);
  rl.set("time/sample", 3.0);
  rl.set("lr", 1e-5);
  rl.set("env/all/reward/total", 0.75);
  rl.set("test/accuracy", 0.5);
  rl.set("margin", 2.0);
  rl.set("loss", 0.25);
  EXPECT_EQ(progress.format(rl, 0.0, 0),
            "step 1/10 (10%) | loss 0.25 | env/all/reward/total 0.75 | margin 2 | test/accuracy 0.5");
  StepMetrics custom(0);
  custom.set("time/step", 1.0);
  custom.set("a", 1.0);
  custom.set("b", 2.0);
  custom.set("c", 3.0);
  custom.set("d", 4.0);
  EXPECT_EQ(progress.format(custom, 0.0, 0), "step 1/10 (10%) | a 1 | b 2 | c 3");
}

TEST(ProgressLine, InPlaceRedrawsOneLineAndErasesALongerOne) {
  std::ostringstream out;
  ProgressLine progress(10, out, true);
  progress.update(timed_step(0, 1.0, 0.123456));
  progress.update(timed_step(1, 1.0, 2.0));
  progress.finish();
  const std::string first = "step 1/10 (10%) | 1.00 steps/s | ETA 9s | loss 0.1235 | lr 0.0001";
  const std::string second = "step 2/10 (20%) | 1.00 steps/s | ETA 8s | loss 2 | lr 0.0001";
  EXPECT_EQ(out.str(), "\r" + first + "\r" + second + std::string(first.size() - second.size(), ' ') + "\n");
}

TEST(ProgressLine, FinishWithoutAnUpdatePrintsNothing) {
  std::ostringstream out;
  ProgressLine progress(10, out, true);
  progress.finish();
  EXPECT_EQ(out.str(), "");
}

}  // namespace
}  // namespace tinker::train
