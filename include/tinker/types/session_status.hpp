/// \file
/// Where a session stands (`doc/service.md#session-status`), finishing a session, and searching
/// sessions (`doc/rest.md#search-sessions`).
///
/// Every union here is a `type`-tagged JSON object on the wire. The service adds variants over
/// time, so decoding is tolerant: a `type` this SDK does not know becomes the `unknown` kind,
/// keeping the type string and the whole object as received, never an error.
#pragma once

#include <tinker/types/common.hpp>
#include <tinker/types/search.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tinker {

/// Why a client finished its session: `{"type": "success" | "errored" | "interrupted"}`.
class ClientSessionFinishReason {
 public:
  /// The reasons the SDK can send, and `unknown` for one a newer server reports.
  enum class Kind {
    success,      ///< the program did what it meant to
    errored,      ///< the program failed (e.g. the client was destroyed by an exception)
    interrupted,  ///< the program was stopped (e.g. by a signal)
    unknown,      ///< a reason this SDK does not know: see `type_name`
  };

  /// success.
  ClientSessionFinishReason() = default;
  /// One of the known reasons.
  explicit ClientSessionFinishReason(Kind kind_) : kind(kind_) {}

  Kind kind = Kind::success;  ///< which reason
  /// The wire `type` of an unknown reason (empty for the known ones).
  std::string type_name;

  /// Equal when every field is equal.
  friend bool operator==(const ClientSessionFinishReason&, const ClientSessionFinishReason&) = default;
};

/// The wire name of a known reason ("success", "errored", "interrupted"), or the kept type of an
/// unknown one.
std::string to_string(const ClientSessionFinishReason& reason);

/// Parses "success", "errored" or "interrupted". Throws tinker::error (invalid_argument) naming
/// the value otherwise.
ClientSessionFinishReason parse_finish_reason(std::string_view text);

/// What failed a session: `{"type": "request" | "training_run" | "sampling_session" | "session", ...}`.
class SessionFailedReason {
 public:
  /// Which part of the session failed it.
  enum class Kind {
    request,           ///< one request: `request_id`, `request_type`
    training_run,      ///< one training run: `training_run_id`
    sampling_session,  ///< one sampling session: `sampling_session_id`
    session,           ///< the session as a whole
    unknown,           ///< a reason this SDK does not know: `type_name`, `raw`
  };

  /// The session as a whole.
  SessionFailedReason() = default;
  /// A failure by the training run `run_id`.
  static SessionFailedReason training_run(std::string run_id);
  /// A failure by the request `request_id_` of type `request_type_`.
  static SessionFailedReason request(std::string request_id_, std::string request_type_);
  /// A failure by the sampling session `sampling_session_id_`.
  static SessionFailedReason sampling_session(std::string sampling_session_id_);

  Kind kind = Kind::session;        ///< which part failed the session
  std::string request_id;           ///< Kind::request
  std::string request_type;         ///< Kind::request
  std::string training_run_id;      ///< Kind::training_run
  std::string sampling_session_id;  ///< Kind::sampling_session
  std::string type_name;            ///< Kind::unknown: the wire `type`
  RawJson raw;                      ///< Kind::unknown: the object as received

  /// Equal when every field is equal.
  friend bool operator==(const SessionFailedReason&, const SessionFailedReason&) = default;
};

/// Who caused a session failure: "user" or "internal" (any other value is kept as `unknown`).
class SessionFailureCategory {
 public:
  /// The two categories, and `unknown` for another value.
  enum class Kind {
    user,      ///< the caller's input or program
    internal,  ///< the service
    unknown,   ///< `value` holds what the server sent
  };

  /// user.
  SessionFailureCategory() = default;
  /// One of the known categories.
  explicit SessionFailureCategory(Kind kind_) : kind(kind_) {}

  Kind kind = Kind::user;  ///< which category
  std::string value;       ///< Kind::unknown: the wire value

  /// Equal when every field is equal.
  friend bool operator==(const SessionFailureCategory&, const SessionFailureCategory&) = default;
};

/// Where a session stands: `{"type": "active" | "failed" | "cancelled" | "client_finished", ...}`.
class SessionStatus {
 public:
  /// The states of a session.
  enum class Kind {
    active,           ///< running
    failed,           ///< failed by one of its parts: `category`, `failed_reason`, `message`
    cancelled,        ///< cancelled from the console: `detail`
    client_finished,  ///< its client reported it done: `finish_reason`, `detail`
    unknown,          ///< a state this SDK does not know: `type_name`, `raw`
  };

  /// active.
  SessionStatus() = default;
  /// A running session.
  static SessionStatus active() { return SessionStatus(); }
  /// A session failed by `reason_`.
  static SessionStatus failed(SessionFailureCategory category_, SessionFailedReason reason_, std::string message_);
  /// A session cancelled from the console.
  static SessionStatus cancelled(std::optional<std::string> detail_);
  /// A session its client finished.
  static SessionStatus client_finished(ClientSessionFinishReason reason_, std::optional<std::string> detail_);

  Kind kind = Kind::active;                 ///< which state
  SessionFailureCategory category;          ///< Kind::failed
  SessionFailedReason failed_reason;        ///< Kind::failed
  std::string message;                      ///< Kind::failed
  ClientSessionFinishReason finish_reason;  ///< Kind::client_finished
  std::optional<std::string> detail;        ///< Kind::cancelled and Kind::client_finished
  std::string type_name;                    ///< Kind::unknown: the wire `type`
  RawJson raw;                              ///< Kind::unknown: the object as received

  /// Equal when every field is equal.
  friend bool operator==(const SessionStatus&, const SessionStatus&) = default;
};

/// A one-line description: "active", "failed (internal, training_run run-1): message",
/// "cancelled: detail", "client_finished (success): detail", or the unknown type.
std::string describe(const SessionStatus& status);

/// One status a session search asks for: `{"type": "active" | "failed" | "cancelled" |
/// "client_finished", "reasons"?: [...]}`.
class SessionStatusQuery {
 public:
  /// The states a search can ask for.
  enum class Kind {
    active,           ///< running sessions
    failed,           ///< failed sessions
    cancelled,        ///< cancelled sessions
    client_finished,  ///< finished sessions, with one of `reasons` when given
  };

  /// active.
  SessionStatusQuery() = default;
  /// Sessions in state `kind_`.
  explicit SessionStatusQuery(Kind kind_) : kind(kind_) {}
  /// Finished sessions whose reason is one of `reasons_`.
  static SessionStatusQuery client_finished(std::vector<ClientSessionFinishReason::Kind> reasons_);

  Kind kind = Kind::active;  ///< which state
  /// Kind::client_finished only: the reasons that match (empty optional: any reason).
  std::optional<std::vector<ClientSessionFinishReason::Kind>> reasons;

  /// Equal when every field is equal.
  friend bool operator==(const SessionStatusQuery&, const SessionStatusQuery&) = default;
};

/// Where a session search goes on: pass it back unchanged for the next page.
class SessionSearchCursor {
 public:
  /// An empty cursor.
  SessionSearchCursor() = default;
  /// The cursor after the session `last_session_id_` created at `last_created_at_`.
  SessionSearchCursor(Timestamp last_created_at_, std::string last_session_id_)
      : last_created_at(last_created_at_), last_session_id(std::move(last_session_id_)) {}

  Timestamp last_created_at{};  ///< creation time of the page's last session
  std::string last_session_id;  ///< id of the page's last session

  /// Equal when every field is equal.
  friend bool operator==(const SessionSearchCursor&, const SessionSearchCursor&) = default;
};

/// The body of a session search (RestClient::async_search_sessions). Every filter given must
/// hold; an empty one filters nothing.
class SessionSearchRequest {
 public:
  /// The caller's own sessions, newest first, 20 per page.
  SessionSearchRequest() = default;

  /// Exact id. Given with `display_name`, a session matching either one matches.
  std::optional<std::string> session_id;
  /// Only sessions of these projects (empty optional: every project the caller may list).
  std::optional<std::vector<std::string>> project_ids;
  std::map<std::string, std::string> user_metadata;  ///< exact pairs, all must hold
  /// Case-insensitive substring of the display name; with several words, each must appear.
  std::optional<std::string> display_name;
  SearchOwner owner;                                        ///< whose sessions (default: the caller's own)
  std::optional<std::vector<SessionStatusQuery>> statuses;  ///< any of these states (empty optional: any state)
  std::int64_t limit = 20;                                  ///< sessions per page, 1..200
  std::optional<SessionSearchCursor> cursor;                ///< the previous page's next_cursor

  /// Equal when every field is equal.
  friend bool operator==(const SessionSearchRequest&, const SessionSearchRequest&) = default;
};

/// One session found by a search.
class SessionSummary {
 public:
  /// An empty summary.
  SessionSummary() = default;

  std::string session_id;                                           ///< the session's id
  Timestamp created_at{};                                           ///< when it was created
  std::string owner;                                                ///< the owner's URN
  std::string project_id;                                           ///< its project
  std::optional<SessionStatus> status;                              ///< empty: neither finished nor known to be running
  std::int64_t checkpoints_count = 0;                               ///< checkpoints saved by its training runs
  std::optional<std::string> display_name;                          ///< ServiceClientOptions::display_name
  std::optional<std::map<std::string, std::string>> user_metadata;  ///< ServiceClientOptions::user_metadata
  std::optional<std::int64_t> checkpoint_storage_bytes;             ///< bytes its checkpoints occupy

  /// Equal when every field is equal.
  friend bool operator==(const SessionSummary&, const SessionSummary&) = default;
};

/// One page of a session search, newest first.
class SessionSearchResponse {
 public:
  /// An empty page.
  SessionSearchResponse() = default;

  std::vector<SessionSummary> sessions;            ///< the page
  std::optional<SessionSearchCursor> next_cursor;  ///< empty: this was the last page

  /// Equal when every field is equal.
  friend bool operator==(const SessionSearchResponse&, const SessionSearchResponse&) = default;
};

/// POST /api/v1/finish_session: the client reports its session done (`doc/protocol.md`).
class FinishSessionRequest {
 public:
  /// An empty request.
  FinishSessionRequest() = default;
  /// Finishes `session_id_` for `reason_`.
  FinishSessionRequest(std::string session_id_, ClientSessionFinishReason reason_,
                       std::optional<std::string> detail_ = std::nullopt)
      : session_id(std::move(session_id_)), reason(std::move(reason_)), detail(std::move(detail_)) {}

  std::string session_id;             ///< the session finished
  ClientSessionFinishReason reason;   ///< why
  std::optional<std::string> detail;  ///< free text shown with the status; omitted when empty

  /// Equal when every field is equal.
  friend bool operator==(const FinishSessionRequest&, const FinishSessionRequest&) = default;
};

TINKER_DECLARE_PRINTABLE(ClientSessionFinishReason);
TINKER_DECLARE_PRINTABLE(SessionFailedReason);
TINKER_DECLARE_PRINTABLE(SessionStatus);
TINKER_DECLARE_PRINTABLE(SessionStatusQuery);
TINKER_DECLARE_PRINTABLE(SessionSearchCursor);
TINKER_DECLARE_PRINTABLE(SessionSearchRequest);
TINKER_DECLARE_PRINTABLE(SessionSummary);
TINKER_DECLARE_PRINTABLE(SessionSearchResponse);
TINKER_DECLARE_PRINTABLE(FinishSessionRequest);

}  // namespace tinker
