// JSON codecs of the session status unions, session search and finish_session
// (doc/service.md#session-status, doc/rest.md#search-sessions).
//
// The status unions are read tolerantly: the service adds variants (0.39.1 added the "session"
// failure reason), so an unknown `type` (or category value) is kept as the `unknown` kind with the
// type and the object as received, and written back unchanged. Known variants still need their
// required fields: a missing one is a decode error naming it.
//
// The search query types are requests: an unknown query type or finish reason there is an error
// (the server cannot search for a state it does not know).
#include "core/wire/json_api.hpp"

#include <tinker/error.hpp>

#include <algorithm>
#include <array>
#include <utility>

namespace tinker {

// --- described types (field order = wire order) ---------------------------------------------

template <class V>
void wire_fields(V& v, SessionSearchCursor& x) {
  v.req("last_created_at", x.last_created_at);
  v.req("last_session_id", x.last_session_id);
}

template <class V>
void wire_fields(V& v, SessionSearchRequest& x) {
  v.opt("session_id", x.session_id);
  v.opt("project_ids", x.project_ids);
  v.opt("user_metadata", x.user_metadata);
  v.opt("display_name", x.display_name);
  v.opt("owner", x.owner);
  v.opt("statuses", x.statuses);
  v.opt("limit", x.limit);
  v.opt("cursor", x.cursor);
}

template <class V>
void wire_fields(V& v, SessionSummary& x) {
  v.req("session_id", x.session_id);
  v.req("created_at", x.created_at);
  v.req("owner", x.owner);
  v.req("project_id", x.project_id);
  v.opt("status", x.status);
  v.req("checkpoints_count", x.checkpoints_count);
  v.opt("display_name", x.display_name);
  v.opt("user_metadata", x.user_metadata);
  v.opt("checkpoint_storage_bytes", x.checkpoint_storage_bytes);
}

template <class V>
void wire_fields(V& v, SessionSearchResponse& x) {
  v.req("sessions", x.sessions);
  v.opt("next_cursor", x.next_cursor);
}

template <class V>
void wire_fields(V& v, FinishSessionRequest& x) {
  v.req("session_id", x.session_id);
  v.req("reason", x.reason);
  v.opt("detail", x.detail);
}

}  // namespace tinker

namespace tinker::wire {
namespace json = boost::json;

namespace {

using FinishKind = ClientSessionFinishReason::Kind;

constexpr std::array<std::pair<FinishKind, std::string_view>, 3> finish_names{
    {{FinishKind::success, "success"}, {FinishKind::errored, "errored"}, {FinishKind::interrupted, "interrupted"}}};

std::string_view finish_kind_name(FinishKind kind) {
  for (const auto& [k, name] : finish_names) {
    if (k == kind) return name;
  }
  return "";
}

std::optional<FinishKind> finish_kind_of(std::string_view name) {
  for (const auto& [k, known] : finish_names) {
    if (known == name) return k;
  }
  return std::nullopt;
}

// The object's `type`: required, a string.
std::string_view session_union_type(const json::value& v, const Path& p) {
  if (!v.is_object()) fail_type(p, "object", v);
  const json::value* type = v.get_object().if_contains("type");
  if (type == nullptr) fail_at(Path(p, "type"), "missing required field");
  if (!type->is_string()) fail_type(Path(p, "type"), "string", *type);
  return type->get_string();
}

// An unknown variant keeps its type and the whole object.
template <class Union>
void keep_unknown_variant(const json::value& v, const Path& p, std::string_view type, Union& out) {
  out.kind = Union::Kind::unknown;
  out.type_name = std::string(type);
  read_json(v, p, out.raw);
}

void write_type_only(JsonEncoder& e, std::string_view type) {
  e.writer().begin_object();
  e.tag("type", type);
  e.writer().end_object();
}

}  // namespace

void write_json(JsonEncoder& e, const ClientSessionFinishReason& value) {
  if (value.kind == FinishKind::unknown) {
    if (!e.lenient() && value.type_name.empty()) e.fail("an unknown finish reason needs its type_name");
    return write_type_only(e, value.type_name);
  }
  write_type_only(e, finish_kind_name(value.kind));
}

void read_json(const json::value& v, const Path& p, ClientSessionFinishReason& out) {
  const std::string_view type = session_union_type(v, p);
  out = ClientSessionFinishReason();
  if (const auto kind = finish_kind_of(type)) {
    out.kind = *kind;
  } else {
    out.kind = FinishKind::unknown;
    out.type_name = std::string(type);
  }
}

void write_json(JsonEncoder& e, const SessionFailureCategory& value) {
  using Kind = SessionFailureCategory::Kind;
  const std::string text = value.kind == Kind::user ? "user" : value.kind == Kind::internal ? "internal" : value.value;
  write_json(e, text);
}

void read_json(const json::value& v, const Path& p, SessionFailureCategory& out) {
  std::string text;
  read_json(v, p, text);
  out = SessionFailureCategory();
  if (text == "user") return;
  if (text == "internal") {
    out.kind = SessionFailureCategory::Kind::internal;
    return;
  }
  out.kind = SessionFailureCategory::Kind::unknown;
  out.value = std::move(text);
}

void write_json(JsonEncoder& e, const SessionFailedReason& value) {
  using Kind = SessionFailedReason::Kind;
  if (value.kind == Kind::unknown) return write_json(e, value.raw);
  e.writer().begin_object();
  switch (value.kind) {
    case Kind::request:
      e.tag("type", "request");
      e.req("request_id", value.request_id);
      e.req("request_type", value.request_type);
      break;
    case Kind::training_run:
      e.tag("type", "training_run");
      e.req("training_run_id", value.training_run_id);
      break;
    case Kind::sampling_session:
      e.tag("type", "sampling_session");
      e.req("sampling_session_id", value.sampling_session_id);
      break;
    case Kind::session:
    case Kind::unknown: e.tag("type", "session"); break;
  }
  e.writer().end_object();
}

void read_json(const json::value& v, const Path& p, SessionFailedReason& out) {
  using Kind = SessionFailedReason::Kind;
  const std::string_view type = session_union_type(v, p);
  out = SessionFailedReason();
  JsonDecoder d(v.get_object(), p);
  if (type == "request") {
    out.kind = Kind::request;
    d.req("request_id", out.request_id);
    d.req("request_type", out.request_type);
  } else if (type == "training_run") {
    out.kind = Kind::training_run;
    d.req("training_run_id", out.training_run_id);
  } else if (type == "sampling_session") {
    out.kind = Kind::sampling_session;
    d.req("sampling_session_id", out.sampling_session_id);
  } else if (type == "session") {
    out.kind = Kind::session;
  } else {
    keep_unknown_variant(v, p, type, out);
  }
}

void write_json(JsonEncoder& e, const SessionStatus& value) {
  using Kind = SessionStatus::Kind;
  if (value.kind == Kind::unknown) return write_json(e, value.raw);
  e.writer().begin_object();
  switch (value.kind) {
    case Kind::active: e.tag("type", "active"); break;
    case Kind::failed:
      e.tag("type", "failed");
      e.req("category", value.category);
      e.req("reason", value.failed_reason);
      e.req("message", value.message);
      break;
    case Kind::cancelled:
      e.tag("type", "cancelled");
      e.opt("detail", value.detail);
      break;
    case Kind::client_finished:
    case Kind::unknown:
      e.tag("type", "client_finished");
      e.req("reason", value.finish_reason);
      e.opt("detail", value.detail);
      break;
  }
  e.writer().end_object();
}

void read_json(const json::value& v, const Path& p, SessionStatus& out) {
  using Kind = SessionStatus::Kind;
  const std::string_view type = session_union_type(v, p);
  out = SessionStatus();
  JsonDecoder d(v.get_object(), p);
  if (type == "active") {
    out.kind = Kind::active;
  } else if (type == "failed") {
    out.kind = Kind::failed;
    d.req("category", out.category);
    d.req("reason", out.failed_reason);
    d.req("message", out.message);
  } else if (type == "cancelled") {
    out.kind = Kind::cancelled;
    d.opt("detail", out.detail);
  } else if (type == "client_finished") {
    out.kind = Kind::client_finished;
    d.req("reason", out.finish_reason);
    d.opt("detail", out.detail);
  } else {
    keep_unknown_variant(v, p, type, out);
  }
}

namespace {

constexpr std::array<std::pair<SessionStatusQuery::Kind, std::string_view>, 4> query_names{
    {{SessionStatusQuery::Kind::active, "active"},
     {SessionStatusQuery::Kind::failed, "failed"},
     {SessionStatusQuery::Kind::cancelled, "cancelled"},
     {SessionStatusQuery::Kind::client_finished, "client_finished"}}};

}  // namespace

void write_json(JsonEncoder& e, const SessionStatusQuery& value) {
  std::string_view type = "active";
  for (const auto& [kind, name] : query_names) {
    if (kind == value.kind) type = name;
  }
  if (!e.lenient() && value.reasons && value.kind != SessionStatusQuery::Kind::client_finished) {
    e.fail("reasons is only allowed with type \"client_finished\"");
  }
  e.writer().begin_object();
  e.tag("type", type);
  if (value.reasons) {
    e.writer().schema_key("reasons");
    e.push("reasons");
    e.writer().begin_array();
    for (std::size_t i = 0; i < value.reasons->size(); ++i) {
      const FinishKind kind = (*value.reasons)[i];
      if (kind == FinishKind::unknown && !e.lenient()) {
        e.push(i);
        e.fail("an unknown finish reason cannot be searched for");
      }
      write_json(e, std::string(finish_kind_name(kind)));
    }
    e.writer().end_array();
    e.pop();
  }
  e.writer().end_object();
}

void read_json(const json::value& v, const Path& p, SessionStatusQuery& out) {
  const std::string_view type = session_union_type(v, p);
  out = SessionStatusQuery();
  const auto known =
      std::find_if(query_names.begin(), query_names.end(), [&](const auto& entry) { return entry.second == type; });
  if (known == query_names.end()) {
    fail_at(Path(p, "type"),
            "unknown type \"" + std::string(type) + "\" (expected one of: active, failed, cancelled, client_finished)");
  }
  out.kind = known->first;
  const json::value* reasons = v.get_object().if_contains("reasons");
  if (reasons == nullptr || reasons->is_null()) return;
  const Path reasons_path(p, "reasons");
  if (out.kind != SessionStatusQuery::Kind::client_finished) {
    fail_at(reasons_path, "only allowed with type \"client_finished\"");
  }
  std::vector<std::string> names;
  read_json(*reasons, reasons_path, names);
  out.reasons.emplace();
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto kind = finish_kind_of(names[i]);
    if (!kind) {
      fail_at(Path(reasons_path, i),
              "unknown reason \"" + names[i] + "\" (expected one of: success, errored, interrupted)");
    }
    out.reasons->push_back(*kind);
  }
}

}  // namespace tinker::wire

namespace tinker {

TINKER_INSTANTIATE_JSON(ClientSessionFinishReason);
TINKER_INSTANTIATE_JSON(SessionFailedReason);
TINKER_INSTANTIATE_JSON(SessionStatus);
TINKER_INSTANTIATE_JSON(SessionStatusQuery);
TINKER_INSTANTIATE_JSON(SessionSearchCursor);
TINKER_INSTANTIATE_JSON(SessionSearchRequest);
TINKER_INSTANTIATE_JSON(SessionSummary);
TINKER_INSTANTIATE_JSON(SessionSearchResponse);
TINKER_INSTANTIATE_JSON(FinishSessionRequest);

std::string to_string(const ClientSessionFinishReason& reason) {
  if (reason.kind == ClientSessionFinishReason::Kind::unknown) return reason.type_name;
  return std::string(wire::finish_kind_name(reason.kind));
}

ClientSessionFinishReason parse_finish_reason(std::string_view text) {
  if (const auto kind = wire::finish_kind_of(text)) return ClientSessionFinishReason(*kind);
  throw error(errc::invalid_argument,
              "reason: expected success, errored or interrupted, got \"" + std::string(text) + "\"");
}

SessionFailedReason SessionFailedReason::training_run(std::string run_id) {
  SessionFailedReason reason;
  reason.kind = Kind::training_run;
  reason.training_run_id = std::move(run_id);
  return reason;
}

SessionFailedReason SessionFailedReason::request(std::string request_id_, std::string request_type_) {
  SessionFailedReason reason;
  reason.kind = Kind::request;
  reason.request_id = std::move(request_id_);
  reason.request_type = std::move(request_type_);
  return reason;
}

SessionFailedReason SessionFailedReason::sampling_session(std::string sampling_session_id_) {
  SessionFailedReason reason;
  reason.kind = Kind::sampling_session;
  reason.sampling_session_id = std::move(sampling_session_id_);
  return reason;
}

SessionStatus SessionStatus::failed(SessionFailureCategory category_, SessionFailedReason reason_,
                                    std::string message_) {
  SessionStatus status;
  status.kind = Kind::failed;
  status.category = std::move(category_);
  status.failed_reason = std::move(reason_);
  status.message = std::move(message_);
  return status;
}

SessionStatus SessionStatus::cancelled(std::optional<std::string> detail_) {
  SessionStatus status;
  status.kind = Kind::cancelled;
  status.detail = std::move(detail_);
  return status;
}

SessionStatus SessionStatus::client_finished(ClientSessionFinishReason reason_, std::optional<std::string> detail_) {
  SessionStatus status;
  status.kind = Kind::client_finished;
  status.finish_reason = std::move(reason_);
  status.detail = std::move(detail_);
  return status;
}

SessionStatusQuery SessionStatusQuery::client_finished(std::vector<ClientSessionFinishReason::Kind> reasons_) {
  SessionStatusQuery query(Kind::client_finished);
  query.reasons = std::move(reasons_);
  return query;
}

namespace {

std::string describe_failed_reason(const SessionFailedReason& reason) {
  using Kind = SessionFailedReason::Kind;
  switch (reason.kind) {
    case Kind::request: return "request " + reason.request_id + " (" + reason.request_type + ")";
    case Kind::training_run: return "training_run " + reason.training_run_id;
    case Kind::sampling_session: return "sampling_session " + reason.sampling_session_id;
    case Kind::session: return "session";
    case Kind::unknown: return reason.type_name;
  }
  return "";
}

std::string describe_category(const SessionFailureCategory& category) {
  using Kind = SessionFailureCategory::Kind;
  if (category.kind == Kind::user) return "user";
  if (category.kind == Kind::internal) return "internal";
  return category.value;
}

}  // namespace

std::string describe(const SessionStatus& status) {
  using Kind = SessionStatus::Kind;
  const std::string detail = status.detail ? ": " + *status.detail : std::string();
  switch (status.kind) {
    case Kind::active: return "active";
    case Kind::failed:
      return "failed (" + describe_category(status.category) + ", " + describe_failed_reason(status.failed_reason) +
             "): " + status.message;
    case Kind::cancelled: return "cancelled" + detail;
    case Kind::client_finished: return "client_finished (" + to_string(status.finish_reason) + ")" + detail;
    case Kind::unknown: return status.type_name;
  }
  return "";
}

}  // namespace tinker
