/// \file
/// Asynchronous results on the wire: tickets, polling requests and poll answers
/// (`doc/protocol.md#futures`). Users normally see them only through tinker::Future.
#pragma once

#include <tinker/error.hpp>
#include <tinker/types/common.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace tinker {

/// The ticket a future endpoint answers with: the id to poll `retrieve_future` with.
class UntypedAPIFuture {
 public:
  /// An empty ticket.
  UntypedAPIFuture() = default;
  /// A ticket for `request_id_`.
  explicit UntypedAPIFuture(std::string request_id_, std::optional<std::string> model_id_ = std::nullopt)
      : request_id(std::move(request_id_)), model_id(std::move(model_id_)) {}

  /// The server's opaque id of the pending result.
  std::string request_id;
  /// The model the operation runs on, when the server says so (informational).
  std::optional<std::string> model_id;

  /// Equal when every field is equal.
  friend bool operator==(const UntypedAPIFuture&, const UntypedAPIFuture&) = default;
};

/// POST /api/v1/retrieve_future: one poll for a pending result.
class RetrieveFutureRequest {
 public:
  /// An empty request.
  RetrieveFutureRequest() = default;
  /// A poll of `request_id_`.
  explicit RetrieveFutureRequest(std::string request_id_, bool allow_metadata_only_ = false)
      : request_id(std::move(request_id_)), allow_metadata_only(allow_metadata_only_) {}

  /// The ticket's id (UntypedAPIFuture::request_id).
  std::string request_id;
  /// True: the server may answer a large result with its size first (FutureMetadataResponse),
  /// so the client can reserve memory before fetching it.
  bool allow_metadata_only = false;

  /// Equal when every field is equal.
  friend bool operator==(const RetrieveFutureRequest&, const RetrieveFutureRequest&) = default;
};

/// Why a request is not running yet. Unrecognised wire values decode as `unknown`.
enum class QueueState {
  active,             ///< queued or running normally
  paused_rate_limit,  ///< held back by a rate limit (e.g. too many concurrent training clients)
  paused_capacity,    ///< held back until the service has capacity
  unknown,            ///< a state this SDK does not know
};
/// The wire name: "active", "paused_rate_limit", "paused_capacity" or "unknown".
const char* to_string(QueueState state) noexcept;

/// "Not ready yet" (`"type": "try_again"`, HTTP 200 or 408).
class TryAgainResponse {
 public:
  /// An empty answer.
  TryAgainResponse() = default;
  /// "`request_id_` is not ready; it is in `queue_state_`".
  TryAgainResponse(std::string request_id_, QueueState queue_state_,
                   std::optional<std::string> queue_state_reason_ = std::nullopt)
      : request_id(std::move(request_id_)),
        queue_state(queue_state_),
        queue_state_reason(std::move(queue_state_reason_)) {}

  /// The polled id.
  std::string request_id;
  /// Where the request waits.
  QueueState queue_state = QueueState::active;
  /// The server's explanation, free text.
  std::optional<std::string> queue_state_reason;

  /// Equal when every field is equal.
  friend bool operator==(const TryAgainResponse&, const TryAgainResponse&) = default;
};

/// "The result is ready but large": poll again with allow_metadata_only = false.
class FutureMetadataResponse {
 public:
  /// A zero size.
  FutureMetadataResponse() = default;
  /// "The result is ready and `response_payload_size_` bytes long".
  explicit FutureMetadataResponse(std::int64_t response_payload_size_)
      : response_payload_size(response_payload_size_) {}

  /// Size of the result in bytes.
  std::int64_t response_payload_size = 0;

  /// Equal when every field is equal.
  friend bool operator==(const FutureMetadataResponse&, const FutureMetadataResponse&) = default;
};

/// A completed future that failed (`{"error", "category"}`, `doc/protocol.md#errors`); the
/// client reports it as errc::request_failed.
class RequestFailedResponse {
 public:
  /// An empty failure.
  RequestFailedResponse() = default;
  /// A failure with message `error_`, caused by `category_`.
  RequestFailedResponse(std::string error_, RequestErrorCategory category_)
      : error(std::move(error_)), category(category_) {}

  /// The server's message, e.g. "target_tokens length 12 != model_input length 13".
  std::string error;
  /// Who caused it; unrecognised or missing values decode as `unknown`.
  RequestErrorCategory category = RequestErrorCategory::unknown;

  /// Equal when every field is equal.
  friend bool operator==(const RequestFailedResponse&, const RequestFailedResponse&) = default;
};

TINKER_DECLARE_PRINTABLE(UntypedAPIFuture);
TINKER_DECLARE_PRINTABLE(RetrieveFutureRequest);
TINKER_DECLARE_PRINTABLE(TryAgainResponse);
TINKER_DECLARE_PRINTABLE(FutureMetadataResponse);
TINKER_DECLARE_PRINTABLE(RequestFailedResponse);

}  // namespace tinker
