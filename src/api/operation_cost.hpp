// What one operation cost the client before the server accepted it: the time spent encoding its request bodies,
// their bytes, and the time from the call until it was accepted (tinker::FutureStatus, doc/bench.md#operation-costs).
//
// Written only on the client's io thread and read from any thread (FutureStatus is a snapshot any thread may take):
// relaxed atomics bumped by a load and a store (one writer, no read-modify-write).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace tinker::api {

class OperationCost {
 public:
  using Clock = std::chrono::steady_clock;

  OperationCost() = default;
  OperationCost(const OperationCost&) = delete;
  OperationCost& operator=(const OperationCost&) = delete;

  /// One request body of `bytes` took `took` to encode.
  void add_encoded(std::chrono::nanoseconds took, std::size_t bytes) noexcept {
    add(encode_ns_, took.count());
    add(body_bytes_, static_cast<std::int64_t>(bytes));
  }
  /// Adds what `other` recorded (an operation's submit, recorded before its future existed).
  void add_encoded(const OperationCost& other) noexcept {
    add(encode_ns_, other.encode_ns_.load(std::memory_order_relaxed));
    add(body_bytes_, other.body_bytes_.load(std::memory_order_relaxed));
  }
  /// The server accepted the operation now; `called` is when the caller started it. The first acceptance counts.
  void set_accepted(Clock::time_point called) noexcept { set_accepted(called, Clock::now()); }
  /// The server accepted the operation at `accepted` (a clock read the caller already made).
  void set_accepted(Clock::time_point called, Clock::time_point accepted) noexcept {
    if (submit_ns_.load(std::memory_order_relaxed) >= 0) return;
    const auto took = std::chrono::duration_cast<std::chrono::nanoseconds>(accepted - called);
    submit_ns_.store(took.count(), std::memory_order_relaxed);
  }

  std::chrono::nanoseconds encode_time() const noexcept {
    return std::chrono::nanoseconds(encode_ns_.load(std::memory_order_relaxed));
  }
  std::uint64_t body_bytes() const noexcept {
    return static_cast<std::uint64_t>(body_bytes_.load(std::memory_order_relaxed));
  }
  std::optional<std::chrono::nanoseconds> submit_time() const noexcept {
    const std::int64_t ns = submit_ns_.load(std::memory_order_relaxed);
    if (ns < 0) return std::nullopt;
    return std::chrono::nanoseconds(ns);
  }

 private:
  static void add(std::atomic<std::int64_t>& counter, std::int64_t value) noexcept {
    counter.store(counter.load(std::memory_order_relaxed) + value, std::memory_order_relaxed);
  }

  std::atomic<std::int64_t> encode_ns_{0};
  std::atomic<std::int64_t> body_bytes_{0};
  std::atomic<std::int64_t> submit_ns_{-1};  ///< -1: not accepted yet
};

/// Times one body encoding into `cost` (null: records nothing and reads no clock).
template <class Encode>
auto timed_encode(OperationCost* cost, Encode& encode) {
  if (cost == nullptr) return encode();
  const auto started = OperationCost::Clock::now();
  auto body = encode();
  cost->add_encoded(OperationCost::Clock::now() - started, body.size());
  return body;
}

}  // namespace tinker::api
