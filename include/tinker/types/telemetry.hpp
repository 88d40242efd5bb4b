/// \file
/// Telemetry, audit log, billing usage and whoami on the wire (`doc/protocol.md#telemetry`,
/// `doc/protocol.md#endpoints`).
#pragma once

#include <tinker/types/common.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace tinker {

/// What a telemetry event reports.
enum class TelemetryEventKind {
  session_start,        ///< a session began (`SESSION_START`)
  session_end,          ///< a session ended (`SESSION_END`, with its duration)
  unhandled_exception,  ///< an error escaped a public call (`UNHANDLED_EXCEPTION`)
  generic_event,        ///< anything else, named by `event_name` (`GENERIC_EVENT`)
};
/// How serious a telemetry event is.
enum class Severity {
  debug,     ///< `DEBUG`
  info,      ///< `INFO`
  warning,   ///< `WARNING`
  error,     ///< `ERROR`
  critical,  ///< `CRITICAL`
};
const char* to_string(TelemetryEventKind kind) noexcept;  ///< The wire name: SESSION_START, ...
const char* to_string(Severity severity) noexcept;        ///< The wire name: DEBUG, INFO, ...

/// One telemetry event: the common envelope plus the fields of its kind.
class TelemetryEvent {
 public:
  /// An empty generic event.
  TelemetryEvent() = default;
  /// An event of `event_` with the common envelope; set the fields of its kind afterwards.
  TelemetryEvent(TelemetryEventKind event_, std::string event_id_, std::int64_t event_session_index_,
                 Severity severity_, Timestamp timestamp_)
      : event(event_),
        event_id(std::move(event_id_)),
        event_session_index(event_session_index_),
        severity(severity_),
        timestamp(timestamp_) {}

  TelemetryEventKind event = TelemetryEventKind::generic_event;  ///< which kind
  std::string event_id;                                          ///< uuid4
  std::int64_t event_session_index = 0;                          ///< 0, 1, 2, ... per client
  Severity severity = Severity::info;                            ///< how serious
  Timestamp timestamp{};                                         ///< when it happened
  std::optional<std::string> duration;                           ///< SESSION_END: `H:MM:SS.ffffff`
  std::optional<std::string> error_type;                         ///< UNHANDLED_EXCEPTION
  std::optional<std::string> error_message;                      ///< UNHANDLED_EXCEPTION
  std::optional<std::string> traceback;                          ///< UNHANDLED_EXCEPTION
  std::optional<std::string> event_name;                         ///< GENERIC_EVENT
  std::optional<JsonObject> event_data;                          ///< GENERIC_EVENT (values may be null)

  /// Equal when every field is equal.
  friend bool operator==(const TelemetryEvent&, const TelemetryEvent&) = default;
};

/// What a client reports telemetry under (the Python SDK's `get_telemetry()`,
/// `doc/protocol.md#telemetry`): every client of one ServiceClient shares it.
class TelemetryInfo {
 public:
  /// Telemetry off.
  TelemetryInfo() = default;

  bool enabled = false;  ///< ClientOptions::telemetry_enabled (TINKER_TELEMETRY)
  /// The session id batches are sent under: the session once it exists, else
  /// "sessionless-<uuid4>" (REST-only use). Empty when telemetry is off.
  std::string session_id;
  std::string process_uuid;  ///< one UUID per process, sent with every batch; empty when off

  /// Equal when every field is equal.
  friend bool operator==(const TelemetryInfo&, const TelemetryInfo&) = default;
};

/// POST /api/v1/telemetry (no `type` field): one batch of at most 100 events.
class TelemetryRequest {
 public:
  /// An empty batch.
  TelemetryRequest() = default;
  /// A batch of `events_` from the given client.
  TelemetryRequest(std::vector<TelemetryEvent> events_, std::string platform_, std::string sdk_version_,
                   std::string session_id_, std::string process_uuid_)
      : events(std::move(events_)),
        platform(std::move(platform_)),
        sdk_version(std::move(sdk_version_)),
        session_id(std::move(session_id_)),
        process_uuid(std::move(process_uuid_)) {}

  std::vector<TelemetryEvent> events;  ///< the events, oldest first
  std::string platform;                ///< host OS name, e.g. "Linux"
  std::string sdk_version;             ///< the protocol version the client speaks
  std::string session_id;              ///< the session, or `sessionless-<uuid4>` for a REST-only client
  std::string process_uuid;            ///< one UUID per process

  /// Equal when every field is equal.
  friend bool operator==(const TelemetryRequest&, const TelemetryRequest&) = default;
};

/// Answer of POST /api/v1/telemetry.
class TelemetryResponse {
 public:
  /// An accepting answer.
  TelemetryResponse() = default;

  /// "accepted".
  std::string status = "accepted";

  /// Equal when every field is equal.
  friend bool operator==(const TelemetryResponse&, const TelemetryResponse&) = default;
};

/// One entry of the audit log.
class AuditLogEntry {
 public:
  /// An empty entry.
  AuditLogEntry() = default;
  /// `event_` at `timestamp_`.
  AuditLogEntry(Timestamp timestamp_, std::string event_) : timestamp(timestamp_), event(std::move(event_)) {}

  Timestamp timestamp{};                   ///< when it happened
  std::string event;                       ///< e.g. "checkpoint.delete"
  std::optional<std::string> model_id;     ///< the model concerned, if any
  std::optional<std::string> tinker_path;  ///< the checkpoint concerned, if any
  std::optional<std::string> purpose;      ///< why, as recorded by the server

  /// Equal when every field is equal.
  friend bool operator==(const AuditLogEntry&, const AuditLogEntry&) = default;
};

/// GET /api/v1/audit.
class AuditLogResponse {
 public:
  /// An empty log.
  AuditLogResponse() = default;
  /// A log of `entries_`.
  explicit AuditLogResponse(std::vector<AuditLogEntry> entries_) : entries(std::move(entries_)) {}

  /// The day's entries.
  std::vector<AuditLogEntry> entries;

  /// Equal when every field is equal.
  friend bool operator==(const AuditLogResponse&, const AuditLogResponse&) = default;
};

/// The `event_info` tagged union of billing usage (`type` on the wire). Unlike every other
/// response, unknown fields in these objects are an error (errc::decode_error).
namespace billing {
/// Training tokens (`"type": "training"`).
class Training {
 public:
  /// Zero tokens.
  Training() = default;
  /// `token_count_` tokens.
  explicit Training(std::int64_t token_count_) : token_count(token_count_) {}
  std::int64_t token_count = 0;  ///< tokens trained on
  /// Equal when every field is equal.
  friend bool operator==(const Training&, const Training&) = default;
};
/// Prompt tokens read by the sampler (`"type": "sampling_prefill"`).
class SamplingPrefill {
 public:
  /// Zero uncached tokens.
  SamplingPrefill() = default;
  /// `token_count_` tokens, served from the prefix cache or not.
  SamplingPrefill(bool cached_, std::int64_t token_count_) : cached(cached_), token_count(token_count_) {}
  bool cached = false;           ///< served from the prefix cache
  std::int64_t token_count = 0;  ///< prompt tokens
  /// Equal when every field is equal.
  friend bool operator==(const SamplingPrefill&, const SamplingPrefill&) = default;
};
/// Tokens generated by the sampler (`"type": "sampling_sample"`).
class SamplingSample {
 public:
  /// Zero tokens.
  SamplingSample() = default;
  /// `token_count_` tokens.
  explicit SamplingSample(std::int64_t token_count_) : token_count(token_count_) {}
  std::int64_t token_count = 0;  ///< generated tokens
  /// Equal when every field is equal.
  friend bool operator==(const SamplingSample&, const SamplingSample&) = default;
};
/// Checkpoints saved (`"type": "checkpoint"`).
class CheckpointEvent {
 public:
  /// Zero checkpoints.
  CheckpointEvent() = default;
  /// `count_` checkpoints.
  explicit CheckpointEvent(std::int64_t count_) : count(count_) {}
  std::int64_t count = 0;  ///< checkpoints
  /// Equal when every field is equal.
  friend bool operator==(const CheckpointEvent&, const CheckpointEvent&) = default;
};
/// Checkpoint storage used (`"type": "storage"`).
class Storage {
 public:
  /// Nothing stored.
  Storage() = default;
  /// `gigabyte_hours_` of storage.
  explicit Storage(double gigabyte_hours_) : gigabyte_hours(gigabyte_hours_) {}
  double gigabyte_hours = 0;  ///< storage in gigabyte-hours
  /// Equal when every field is equal.
  friend bool operator==(const Storage&, const Storage&) = default;
};
/// What one usage entry counts.
using EventInfo = std::variant<Training, SamplingPrefill, SamplingSample, CheckpointEvent, Storage>;
}  // namespace billing

/// Usage of one kind in one time bucket (an hour).
class BillingUsageEntry {
 public:
  /// An empty entry.
  BillingUsageEntry() = default;
  /// `event_info_` used in [bucket_start_, bucket_end_).
  BillingUsageEntry(Timestamp bucket_start_, Timestamp bucket_end_, billing::EventInfo event_info_)
      : bucket_start(bucket_start_), bucket_end(bucket_end_), event_info(std::move(event_info_)) {}

  Timestamp bucket_start{};               ///< start of the bucket (inclusive)
  Timestamp bucket_end{};                 ///< end of the bucket (exclusive)
  std::optional<std::string> base_model;  ///< the model used, if any
  std::optional<std::string> user_id;     ///< e.g. "tml:organization_user:abc"
  std::optional<std::string> user_name;   ///< the user's display name
  std::optional<std::string> session_id;  ///< the session it belongs to
  std::optional<std::string> project_id;  ///< the session's project
  billing::EventInfo event_info;          ///< what was used, and how much

  /// Equal when every field is equal.
  friend bool operator==(const BillingUsageEntry&, const BillingUsageEntry&) = default;
};

/// What billing usage tells about one session.
class BillingSessionInfo {
 public:
  /// No metadata.
  BillingSessionInfo() = default;
  /// A session with `user_metadata_`.
  explicit BillingSessionInfo(JsonObject user_metadata_) : user_metadata(std::move(user_metadata_)) {}

  /// The user metadata the session was created with.
  std::optional<JsonObject> user_metadata;

  /// Equal when every field is equal.
  friend bool operator==(const BillingSessionInfo&, const BillingSessionInfo&) = default;
};

/// GET /api/v1/billing/usage/events.
class BillingUsageResponse {
 public:
  /// No usage.
  BillingUsageResponse() = default;
  /// The usage entries `data_`.
  explicit BillingUsageResponse(std::vector<BillingUsageEntry> data_) : data(std::move(data_)) {}

  std::vector<BillingUsageEntry> data;                 ///< usage per bucket and kind
  std::map<std::string, BillingSessionInfo> sessions;  ///< by session id, for the sessions in `data`

  /// Equal when every field is equal.
  friend bool operator==(const BillingUsageResponse&, const BillingUsageResponse&) = default;
};

/// Who the credential belongs to, as the Python SDK's `whoami` reads it from the JWT
/// (RestClient::async_whoami; there is no endpoint).
class WhoamiResponse {
 public:
  /// An empty answer.
  WhoamiResponse() = default;
  /// The user `user_urn_`.
  explicit WhoamiResponse(std::string user_urn_, std::optional<std::string> email_ = std::nullopt)
      : user_urn(std::move(user_urn_)), email(std::move(email_)) {}

  std::string user_urn;              ///< the JWT's subject
  std::optional<std::string> email;  ///< the JWT's email claim, if any

  /// Equal when every field is equal.
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
