#include "client/session/telemetry_queue.hpp"

#include <gtest/gtest.h>

namespace tinker::client::session {
namespace {

TelemetryEvent event_number(std::int64_t i) {
  TelemetryEvent event;
  event.event_session_index = i;
  return event;
}

TEST(TelemetryQueue, BatchesOfAtMostOneHundredOldestFirst) {
  TelemetryQueue queue;
  for (int i = 0; i < 250; ++i) ASSERT_TRUE(queue.push(event_number(i)));
  const auto first = queue.take_batch();
  ASSERT_EQ(first.size(), 100u);
  EXPECT_EQ(first.front().event_session_index, 0);
  EXPECT_EQ(first.back().event_session_index, 99);
  EXPECT_EQ(queue.take_batch().size(), 100u);
  const auto last = queue.take_batch();
  ASSERT_EQ(last.size(), 50u);
  EXPECT_EQ(last.front().event_session_index, 200);
  EXPECT_TRUE(queue.empty());
  EXPECT_TRUE(queue.take_batch().empty());
}

TEST(TelemetryQueue, DropsOverflowAtTheDefaultCapacityOfTenThousand) {
  TelemetryQueue queue;
  for (int i = 0; i < 10'000; ++i) ASSERT_TRUE(queue.push(event_number(i)));
  EXPECT_FALSE(queue.push(event_number(10'000)));
  EXPECT_FALSE(queue.push(event_number(10'001)));
  EXPECT_EQ(queue.size(), 10'000u);
  EXPECT_EQ(queue.dropped(), 2u);
  (void)queue.take_batch();  // room again
  EXPECT_TRUE(queue.push(event_number(10'002)));
}

TEST(TelemetryQueue, PlatformAndProcessUuid) {
  EXPECT_STREQ(telemetry_platform(), "Linux");
  EXPECT_EQ(telemetry_process_uuid().size(), 36u);
  EXPECT_EQ(&telemetry_process_uuid(), &telemetry_process_uuid());
}

}  // namespace
}  // namespace tinker::client::session
