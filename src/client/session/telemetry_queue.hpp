// The telemetry event queue of one holder (doc/protocol.md#telemetry): bounded, drained in batches.
#pragma once

#include <tinker/types/telemetry.hpp>

#include <cstddef>
#include <deque>
#include <string>
#include <vector>

namespace tinker::client::session {

class TelemetryQueue {
 public:
  static constexpr std::size_t default_capacity = 10'000;  ///< doc/protocol.md#telemetry: overflow is dropped
  static constexpr std::size_t max_batch = 100;            ///< doc/protocol.md#telemetry: events per HTTP request

  explicit TelemetryQueue(std::size_t capacity = default_capacity) : capacity_(capacity) {}

  /// Queues `event`; false (and the event dropped) when the queue is full.
  bool push(TelemetryEvent event);
  /// Removes and returns the oldest events, at most max_batch of them.
  std::vector<TelemetryEvent> take_batch();
  /// Puts a batch that could not be sent back in front, oldest first (the capacity does not apply: it was counted).
  void put_back(std::vector<TelemetryEvent> batch);

  std::size_t size() const noexcept { return events_.size(); }
  bool empty() const noexcept { return events_.empty(); }
  std::size_t dropped() const noexcept { return dropped_; }

 private:
  std::size_t capacity_;
  std::deque<TelemetryEvent> events_;
  std::size_t dropped_ = 0;
};

/// The host OS name the telemetry request reports (doc/protocol.md#endpoints): Linux, Darwin, Windows.
const char* telemetry_platform() noexcept;
/// One UUID per process (doc/protocol.md#endpoints process_uuid).
const std::string& telemetry_process_uuid();

}  // namespace tinker::client::session
