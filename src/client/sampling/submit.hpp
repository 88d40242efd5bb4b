// The sample operation under load (doc/sampling.md#sampling, doc/sampling.md#backpressure-and-retries,
// doc/protocol.md#sample-resubmission): one attempt's submission through the dispatch throttles with the 429 pacing of
// the shared backoff, and sample resubmission around it. The wait for the result is in wait.hpp.
#pragma once

#include "client/futures/driver.hpp"
#include "client/handles.hpp"
#include "client/sampling/state.hpp"

#include <tinker/types.hpp>

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

namespace tinker::client::sampling {

using futures::ResultDecoder;
using futures::TaskControl;

/// One sample() or compute_logprobs() call across its attempts.
class SampleOperation {
 public:
  explicit SampleOperation(SampleRequest request_)
      : request(std::move(request_)), estimated_bytes(estimate_prompt_bytes(request.prompt)) {}

  SampleRequest request;  ///< seq_id is set per attempt
  std::int64_t estimated_bytes;
  bool resubmit = true;  ///< false: sample() with the server flag sample_no_retries (one attempt)
  int attempts = 0;      ///< attempts started so far
  std::chrono::steady_clock::time_point attempt_started{};  ///< for X-Tinker-Create-Promise-Roundtrip-Time
  /// Set by the caller to the call's own time stamp when the first attempt starts at once (no
  /// admission wait): that attempt then takes it as attempt_started instead of reading the clock.
  std::optional<std::chrono::steady_clock::time_point> first_attempt_started;
  /// When the server accepted the last attempt (its ticket arrived): the end of its create round
  /// trip and the operation's submit time, from one clock read.
  std::chrono::steady_clock::time_point ticket_arrived{};
  RetrySlot slot;        ///< the resubmission's concurrency place, held until the operation settles
  ResultDecoder decode;  ///< turns the final answer into the future's value
  /// The future's cost, where every attempt records its body encoding.
  api::OperationCost* cost = nullptr;
};

/// Submits `op` until the server accepts it (doc/sampling.md#sampling): each attempt takes a new
/// seq_id, passes the dispatch throttles, then POSTs /asample (call retries, no transport retries), re-sent
/// with the same seq_id after each backpressure answer (429, or 402 inside the billing window) once
/// the shared backoff is over. With resubmission, retryable failures start a fresh
/// attempt after the protocol's delay, and no progress for the progress timeout fails it
/// (errc::timeout; the stuck detector cancels the attempt through `control`). Without resubmission,
/// one attempt. Runs inside the task `control` belongs to.
boost::asio::awaitable<boost::system::error_code> submit_sample(const SamplingState& s, SampleOperation& op,
                                                                TaskControl& control, UntypedAPIFuture& ticket,
                                                                diagnostics& diag);

/// Waits `delay` before a fresh attempt, on the transport's injectable clock (as every retry does);
/// throws boost::system::system_error when cancelled.
boost::asio::awaitable<void> sleep_before_retry(const SamplingState& s, std::chrono::milliseconds delay);

}  // namespace tinker::client::sampling
