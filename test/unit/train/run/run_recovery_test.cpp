// TrainingRun::is_recoverable (doc/training-loops.md#resume): which failures a restart from the
// last good checkpoint answers.
#include <tinker/error.hpp>
#include <tinker/train/run.hpp>

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace tinker::train {
namespace {

tinker::error request_failure(std::optional<RequestErrorCategory> category, std::string message) {
  diagnostics diag;
  diag.category = category;
  diag.message = std::move(message);
  return tinker::error(make_error_code(errc::request_failed), diag);
}

TEST(RunRecoverableTest, TheServiceFailingTheRunOrLosingItIsRecoverable) {
  EXPECT_TRUE(TrainingRun::is_recoverable(request_failure(RequestErrorCategory::server, "worker lost")));
  EXPECT_TRUE(TrainingRun::is_recoverable(request_failure(RequestErrorCategory::unknown, "seq_id 7 was lost")));
  EXPECT_TRUE(TrainingRun::is_recoverable(request_failure(std::nullopt, "no category")));
  EXPECT_TRUE(TrainingRun::is_recoverable(
      request_failure(RequestErrorCategory::user, "training run s:train:0 is corrupted: lost")));
  EXPECT_TRUE(TrainingRun::is_recoverable(tinker::error(errc::not_found, "unknown model_id s:train:0")));
  EXPECT_TRUE(TrainingRun::is_recoverable(tinker::error(errc::gone, "future evicted")));
}

TEST(RunRecoverableTest, FailuresARestartWouldRepeatAreNot) {
  EXPECT_FALSE(TrainingRun::is_recoverable(request_failure(RequestErrorCategory::user, "target_tokens too long")));
  EXPECT_FALSE(TrainingRun::is_recoverable(tinker::error(errc::invalid_argument, "batch is empty")));
  EXPECT_FALSE(TrainingRun::is_recoverable(tinker::error(errc::bad_request, "bad seq_id")));
  EXPECT_FALSE(TrainingRun::is_recoverable(tinker::error(errc::authentication_failed, "key")));
  EXPECT_FALSE(TrainingRun::is_recoverable(tinker::error(errc::payment_required, "billing")));
  EXPECT_FALSE(TrainingRun::is_recoverable(tinker::error(errc::rate_limited, "slow down")));
  EXPECT_FALSE(TrainingRun::is_recoverable(tinker::error(errc::connection_failed, "refused")));
  EXPECT_FALSE(TrainingRun::is_recoverable(tinker::error(errc::server_error, "503 after retries")));
  EXPECT_FALSE(TrainingRun::is_recoverable(tinker::error(errc::cancelled, "cancelled")));
}

}  // namespace
}  // namespace tinker::train
