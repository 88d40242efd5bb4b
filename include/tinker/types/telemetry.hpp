// Telemetry, audit log, billing usage and whoami (spec 8.11, 8.12.16-8.12.18, 15).
#pragma once

#include <tinker/types/common.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace tinker {

enum class TelemetryEventKind { session_start, session_end, unhandled_exception, generic_event };
enum class Severity { debug, info, warning, error, critical };
const char* to_string(TelemetryEventKind kind) noexcept;  ///< SESSION_START, ...
const char* to_string(Severity severity) noexcept;        ///< DEBUG, INFO, ...

/// One telemetry event: the common envelope plus the fields of its kind.
class TelemetryEvent {
 public:
  TelemetryEvent() = default;
  TelemetryEvent(TelemetryEventKind event_, std::string event_id_, std::int64_t event_session_index_,
                 Severity severity_, Timestamp timestamp_)
      : event(event_),
        event_id(std::move(event_id_)),
        event_session_index(event_session_index_),
        severity(severity_),
        timestamp(timestamp_) {}

  TelemetryEventKind event = TelemetryEventKind::generic_event;
  std::string event_id;  ///< uuid4
  std::int64_t event_session_index = 0;
  Severity severity = Severity::info;
  Timestamp timestamp{};
  std::optional<std::string> duration;       ///< SESSION_END
  std::optional<std::string> error_type;     ///< UNHANDLED_EXCEPTION
  std::optional<std::string> error_message;  ///< UNHANDLED_EXCEPTION
  std::optional<std::string> traceback;      ///< UNHANDLED_EXCEPTION
  std::optional<std::string> event_name;     ///< GENERIC_EVENT
  std::optional<JsonObject> event_data;      ///< GENERIC_EVENT (values may be null)

  friend bool operator==(const TelemetryEvent&, const TelemetryEvent&) = default;
};

/// POST /api/v1/telemetry (no `type` field).
class TelemetryRequest {
 public:
  TelemetryRequest() = default;
  TelemetryRequest(std::vector<TelemetryEvent> events_, std::string platform_, std::string sdk_version_,
                   std::string session_id_, std::string process_uuid_)
      : events(std::move(events_)),
        platform(std::move(platform_)),
        sdk_version(std::move(sdk_version_)),
        session_id(std::move(session_id_)),
        process_uuid(std::move(process_uuid_)) {}

  std::vector<TelemetryEvent> events;
  std::string platform;
  std::string sdk_version;
  std::string session_id;
  std::string process_uuid;

  friend bool operator==(const TelemetryRequest&, const TelemetryRequest&) = default;
};

class TelemetryResponse {
 public:
  TelemetryResponse() = default;

  std::string status = "accepted";

  friend bool operator==(const TelemetryResponse&, const TelemetryResponse&) = default;
};

class AuditLogEntry {
 public:
  AuditLogEntry() = default;
  AuditLogEntry(Timestamp timestamp_, std::string event_) : timestamp(timestamp_), event(std::move(event_)) {}

  Timestamp timestamp{};
  std::string event;  ///< e.g. "checkpoint.delete"
  std::optional<std::string> model_id;
  std::optional<std::string> tinker_path;
  std::optional<std::string> purpose;

  friend bool operator==(const AuditLogEntry&, const AuditLogEntry&) = default;
};

/// GET /api/v1/audit.
class AuditLogResponse {
 public:
  AuditLogResponse() = default;
  explicit AuditLogResponse(std::vector<AuditLogEntry> entries_) : entries(std::move(entries_)) {}

  std::vector<AuditLogEntry> entries;

  friend bool operator==(const AuditLogResponse&, const AuditLogResponse&) = default;
};

/// The `event_info` tagged union of billing usage (unknown fields are rejected, spec 1.5).
namespace billing {
class Training {
 public:
  Training() = default;
  explicit Training(std::int64_t token_count_) : token_count(token_count_) {}
  std::int64_t token_count = 0;
  friend bool operator==(const Training&, const Training&) = default;
};
class SamplingPrefill {
 public:
  SamplingPrefill() = default;
  SamplingPrefill(bool cached_, std::int64_t token_count_) : cached(cached_), token_count(token_count_) {}
  bool cached = false;
  std::int64_t token_count = 0;
  friend bool operator==(const SamplingPrefill&, const SamplingPrefill&) = default;
};
class SamplingSample {
 public:
  SamplingSample() = default;
  explicit SamplingSample(std::int64_t token_count_) : token_count(token_count_) {}
  std::int64_t token_count = 0;
  friend bool operator==(const SamplingSample&, const SamplingSample&) = default;
};
class CheckpointEvent {
 public:
  CheckpointEvent() = default;
  explicit CheckpointEvent(std::int64_t count_) : count(count_) {}
  std::int64_t count = 0;
  friend bool operator==(const CheckpointEvent&, const CheckpointEvent&) = default;
};
class Storage {
 public:
  Storage() = default;
  explicit Storage(double gigabyte_hours_) : gigabyte_hours(gigabyte_hours_) {}
  double gigabyte_hours = 0;
  friend bool operator==(const Storage&, const Storage&) = default;
};
using EventInfo = std::variant<Training, SamplingPrefill, SamplingSample, CheckpointEvent, Storage>;
}  // namespace billing

class BillingUsageEntry {
 public:
  BillingUsageEntry() = default;
  BillingUsageEntry(Timestamp bucket_start_, Timestamp bucket_end_, billing::EventInfo event_info_)
      : bucket_start(bucket_start_), bucket_end(bucket_end_), event_info(std::move(event_info_)) {}

  Timestamp bucket_start{};
  Timestamp bucket_end{};
  std::optional<std::string> base_model;
  std::optional<std::string> user_id;
  std::optional<std::string> user_name;
  std::optional<std::string> session_id;
  std::optional<std::string> project_id;
  billing::EventInfo event_info;

  friend bool operator==(const BillingUsageEntry&, const BillingUsageEntry&) = default;
};

class BillingSessionInfo {
 public:
  BillingSessionInfo() = default;
  explicit BillingSessionInfo(JsonObject user_metadata_) : user_metadata(std::move(user_metadata_)) {}

  std::optional<JsonObject> user_metadata;

  friend bool operator==(const BillingSessionInfo&, const BillingSessionInfo&) = default;
};

/// GET /api/v1/billing/usage/events.
class BillingUsageResponse {
 public:
  BillingUsageResponse() = default;
  explicit BillingUsageResponse(std::vector<BillingUsageEntry> data_) : data(std::move(data_)) {}

  std::vector<BillingUsageEntry> data;
  std::map<std::string, BillingSessionInfo> sessions;

  friend bool operator==(const BillingUsageResponse&, const BillingUsageResponse&) = default;
};

/// RestClient::whoami (decoded from the JWT; no endpoint).
class WhoamiResponse {
 public:
  WhoamiResponse() = default;
  explicit WhoamiResponse(std::string user_urn_, std::optional<std::string> email_ = std::nullopt)
      : user_urn(std::move(user_urn_)), email(std::move(email_)) {}

  std::string user_urn;
  std::optional<std::string> email;

  friend bool operator==(const WhoamiResponse&, const WhoamiResponse&) = default;
};

TINKER_DECLARE_PRINTABLE(TelemetryEvent);
TINKER_DECLARE_PRINTABLE(TelemetryRequest);
TINKER_DECLARE_PRINTABLE(TelemetryResponse);
TINKER_DECLARE_PRINTABLE(AuditLogEntry);
TINKER_DECLARE_PRINTABLE(AuditLogResponse);
TINKER_DECLARE_PRINTABLE(BillingUsageEntry);
TINKER_DECLARE_PRINTABLE(BillingUsageResponse);
TINKER_DECLARE_PRINTABLE(WhoamiResponse);

}  // namespace tinker
