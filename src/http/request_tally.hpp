// What one HttpClient sent and got back, counted for ServiceClient::counters() (doc/bench.md#request-counters).
//
// Written only on the client's io thread and read from any thread: each counter is a relaxed atomic bumped by a
// load and a store (one writer, so no read-modify-write and no locked instruction on the hot path); a reader sees
// each counter's latest or an earlier value.
#pragma once

#include <tinker/error.hpp>

#include <atomic>
#include <cstdint>

namespace tinker::http {

class RequestTally {
 public:
  /// One exchange on a connection ended with `status` (0: no answer) and `error`.
  void note_exchange(int status, boost::system::error_code error) noexcept {
    bump(requests_);
    if (status == 429) bump(rate_limited_);
    if (status >= 500) bump(server_errors_);
    if (status == 0) note_no_answer(error);
  }
  /// A connection could not be opened: nothing was sent.
  void note_connect_failure(boost::system::error_code error) noexcept { note_no_answer(error); }
  /// A retry layer is about to send a request again (doc/protocol.md#retries).
  void note_retry() noexcept { bump(retries_); }

  std::uint64_t requests() const noexcept { return requests_.load(std::memory_order_relaxed); }
  std::uint64_t retries() const noexcept { return retries_.load(std::memory_order_relaxed); }
  std::uint64_t rate_limited() const noexcept { return rate_limited_.load(std::memory_order_relaxed); }
  std::uint64_t server_errors() const noexcept { return server_errors_.load(std::memory_order_relaxed); }
  std::uint64_t transport_errors() const noexcept { return transport_errors_.load(std::memory_order_relaxed); }

 private:
  static void bump(std::atomic<std::uint64_t>& counter) noexcept {
    counter.store(counter.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  // A cancellation is the caller's doing, not a transport failure.
  void note_no_answer(boost::system::error_code error) noexcept {
    if (error && error != errc::cancelled) bump(transport_errors_);
  }

  std::atomic<std::uint64_t> requests_{0};
  std::atomic<std::uint64_t> retries_{0};
  std::atomic<std::uint64_t> rate_limited_{0};
  std::atomic<std::uint64_t> server_errors_{0};
  std::atomic<std::uint64_t> transport_errors_{0};
};

}  // namespace tinker::http
