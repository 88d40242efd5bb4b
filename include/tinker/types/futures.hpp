// Asynchronous results: tickets, polling requests and poll answers (spec 6, 8.10, 9.7).
#pragma once

#include <tinker/error.hpp>
#include <tinker/types/common.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace tinker {

/// The ticket a future endpoint answers with.
class UntypedAPIFuture {
 public:
  UntypedAPIFuture() = default;
  explicit UntypedAPIFuture(std::string request_id_, std::optional<std::string> model_id_ = std::nullopt)
      : request_id(std::move(request_id_)), model_id(std::move(model_id_)) {}

  std::string request_id;
  std::optional<std::string> model_id;

  friend bool operator==(const UntypedAPIFuture&, const UntypedAPIFuture&) = default;
};

/// POST /api/v1/retrieve_future.
class RetrieveFutureRequest {
 public:
  RetrieveFutureRequest() = default;
  explicit RetrieveFutureRequest(std::string request_id_, bool allow_metadata_only_ = false)
      : request_id(std::move(request_id_)), allow_metadata_only(allow_metadata_only_) {}

  std::string request_id;
  bool allow_metadata_only = false;

  friend bool operator==(const RetrieveFutureRequest&, const RetrieveFutureRequest&) = default;
};

/// Why a request is not running yet. Unrecognised wire values decode as `unknown`.
enum class QueueState { active, paused_rate_limit, paused_capacity, unknown };
const char* to_string(QueueState state) noexcept;

/// "Not ready yet" (`"type": "try_again"`, HTTP 200 or 408).
class TryAgainResponse {
 public:
  TryAgainResponse() = default;
  TryAgainResponse(std::string request_id_, QueueState queue_state_,
                   std::optional<std::string> queue_state_reason_ = std::nullopt)
      : request_id(std::move(request_id_)),
        queue_state(queue_state_),
        queue_state_reason(std::move(queue_state_reason_)) {}

  std::string request_id;
  QueueState queue_state = QueueState::active;
  std::optional<std::string> queue_state_reason;

  friend bool operator==(const TryAgainResponse&, const TryAgainResponse&) = default;
};

/// "The result is ready but large": poll again with allow_metadata_only = false.
class FutureMetadataResponse {
 public:
  FutureMetadataResponse() = default;
  explicit FutureMetadataResponse(std::int64_t response_payload_size_)
      : response_payload_size(response_payload_size_) {}

  std::int64_t response_payload_size = 0;

  friend bool operator==(const FutureMetadataResponse&, const FutureMetadataResponse&) = default;
};

/// A completed future that failed (spec 4.2).
class RequestFailedResponse {
 public:
  RequestFailedResponse() = default;
  RequestFailedResponse(std::string error_, RequestErrorCategory category_)
      : error(std::move(error_)), category(category_) {}

  std::string error;
  RequestErrorCategory category = RequestErrorCategory::unknown;

  friend bool operator==(const RequestFailedResponse&, const RequestFailedResponse&) = default;
};

TINKER_DECLARE_PRINTABLE(UntypedAPIFuture);
TINKER_DECLARE_PRINTABLE(RetrieveFutureRequest);
TINKER_DECLARE_PRINTABLE(TryAgainResponse);
TINKER_DECLARE_PRINTABLE(FutureMetadataResponse);
TINKER_DECLARE_PRINTABLE(RequestFailedResponse);

}  // namespace tinker
