/// \file
/// The batched long-poll of sampling results, POST /api/v1/retrieve_futures
/// (`doc/protocol.md#batched-sampling-results`). SamplingClient uses it when the server's
/// ClientConfigResponse::sample_use_retrieve_futures is true; users do not call it directly.
#pragma once

#include <tinker/types/common.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tinker {

/// Whose completions a retrieve_futures poll asks for: one sampling session's, as seen by one
/// of its clients. Wire tag `"type": "sampling_session"`.
class SamplingSessionFuturesTarget {
 public:
  /// An empty target.
  SamplingSessionFuturesTarget() = default;
  /// The completions of `sampling_session_id_`'s requests sent by client `cloned_sampler_id_`.
  explicit SamplingSessionFuturesTarget(std::string sampling_session_id_, std::int64_t cloned_sampler_id_ = 0)
      : sampling_session_id(std::move(sampling_session_id_)), cloned_sampler_id(cloned_sampler_id_) {}

  std::string sampling_session_id;  ///< the sampler ("<session>:sample:<n>")
  /// Which client of the sampling session: its requests' seq_id / 1'000'000'000 (0 for the client
  /// that created the session).
  std::int64_t cloned_sampler_id = 0;

  /// Equal when every field is equal.
  friend bool operator==(const SamplingSessionFuturesTarget&, const SamplingSessionFuturesTarget&) = default;
};

/// POST /api/v1/retrieve_futures: the completions after `prev_cursor`, waiting up to `timeout`
/// seconds for one when there is none yet.
class FuturesRetrieveRequest {
 public:
  /// An empty request.
  FuturesRetrieveRequest() = default;
  /// The completions of `target_` after `prev_cursor_`.
  explicit FuturesRetrieveRequest(SamplingSessionFuturesTarget target_, std::int64_t prev_cursor_ = 0,
                                  std::optional<double> timeout_ = std::nullopt)
      : target(std::move(target_)), prev_cursor(prev_cursor_), timeout(timeout_) {}

  SamplingSessionFuturesTarget target;  ///< whose completions
  /// The cursor of the previous answer: completions at or before it count as seen (the server may
  /// drop them); 0 starts from the beginning.
  std::int64_t prev_cursor = 0;
  /// Longest wait in seconds when nothing is new. Empty: the server's choice.
  std::optional<double> timeout;

  /// Equal when every field is equal.
  friend bool operator==(const FuturesRetrieveRequest&, const FuturesRetrieveRequest&) = default;
};

/// One request's completion in a retrieve_futures answer, a union on `state`: "finished" (fetch
/// the result with retrieve_future), "failed" (retrieve_future returns the error), or a state
/// this SDK does not know, kept as sent.
class FutureCompletion {
 public:
  /// An empty completion.
  FutureCompletion() = default;
  /// A completion of `request_id_` in `state_`.
  FutureCompletion(std::string state_, std::string request_id_,
                   std::optional<std::int64_t> response_payload_uncompressed_size_ = std::nullopt)
      : state(std::move(state_)),
        request_id(std::move(request_id_)),
        response_payload_uncompressed_size(response_payload_uncompressed_size_) {}

  /// The wire tag: "finished", "failed" or another (kept).
  std::string state;
  /// The request the completion is about (absent in an unknown state: empty).
  std::string request_id;
  /// For "finished": the result's size before compression, when the server knows it.
  std::optional<std::int64_t> response_payload_uncompressed_size;

  /// state == "finished".
  bool finished() const noexcept { return state == "finished"; }
  /// state == "failed".
  bool failed() const noexcept { return state == "failed"; }

  /// Equal when every field is equal.
  friend bool operator==(const FutureCompletion&, const FutureCompletion&) = default;
};

/// The answer to retrieve_futures: what completed after the request's cursor, and the cursor to
/// send next.
class FuturesRetrieveResponse {
 public:
  /// No completions.
  FuturesRetrieveResponse() = default;
  /// `completions_` up to `cursor_`.
  FuturesRetrieveResponse(std::vector<FutureCompletion> completions_, std::int64_t cursor_)
      : completions(std::move(completions_)), cursor(cursor_) {}

  std::vector<FutureCompletion> completions;  ///< in completion order
  std::int64_t cursor = 0;                    ///< the next request's prev_cursor

  /// Equal when every field is equal.
  friend bool operator==(const FuturesRetrieveResponse&, const FuturesRetrieveResponse&) = default;
};

TINKER_DECLARE_PRINTABLE(SamplingSessionFuturesTarget);
TINKER_DECLARE_PRINTABLE(FuturesRetrieveRequest);
TINKER_DECLARE_PRINTABLE(FutureCompletion);
TINKER_DECLARE_PRINTABLE(FuturesRetrieveResponse);

}  // namespace tinker
