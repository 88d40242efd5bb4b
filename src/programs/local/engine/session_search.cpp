// Session status, finishing, cancelling and searching (doc/local.md#session-search).
//
// Status: an ended session (client_finished by finish_session, cancelled by the admin path) keeps
// that status; otherwise one of its training runs having failed (the runs GET training_runs shows
// as corrupted) makes it failed {user, training_run}; an expired session has no status (neither
// finished nor known to be running); else it is active.
//
// Search: owner "own" = the caller's sessions, "accessible" = every session of this server (one
// tenant), "user" = the sessions of the named owner URNs. A session without a project is in the
// project "default". Newest first (created_at, then id, both descending); the cursor names the
// page's last session and the next page starts strictly after it.
#include "programs/local/engine/engine_impl.hpp"

#include <boost/json/parse.hpp>

#include <algorithm>
#include <cctype>
#include <sstream>

namespace tinker::local {

using engine_detail::CheckpointMeta;
using engine_detail::ModelStatus;
using engine_detail::SessionRecord;

namespace {

constexpr std::int64_t max_search_limit = 200;
constexpr const char* default_project = "default";

std::string lowercase_ascii(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Every whitespace-separated word of `query` appears in `name`, ignoring ASCII case.
bool display_name_matches(const std::optional<std::string>& name, const std::string& query) {
  if (!name) return false;
  const std::string haystack = lowercase_ascii(*name);
  std::istringstream words(lowercase_ascii(query));
  std::string word;
  bool any = false;
  while (words >> word) {
    any = true;
    if (haystack.find(word) == std::string::npos) return false;
  }
  return any || query.empty();
}

bool status_matches(const std::optional<SessionStatus>& status, const SessionStatusQuery& query) {
  if (!status) return false;
  using Q = SessionStatusQuery::Kind;
  using S = SessionStatus::Kind;
  switch (query.kind) {
    case Q::active: return status->kind == S::active;
    case Q::failed: return status->kind == S::failed;
    case Q::cancelled: return status->kind == S::cancelled;
    case Q::client_finished:
      if (status->kind != S::client_finished) return false;
      return !query.reasons || std::find(query.reasons->begin(), query.reasons->end(), status->finish_reason.kind) !=
                                   query.reasons->end();
  }
  return false;
}

bool metadata_matches(const JsonObject& stored, const std::map<std::string, std::string>& wanted) {
  for (const auto& [key, value] : wanted) {
    auto it = stored.find(key);
    if (it == stored.end() || it->second != RawJson::string(value)) return false;
  }
  return true;
}

bool owner_matches(const SessionRecord& session, const SearchOwner& owner, const Principal& who) {
  switch (owner.kind) {
    case SearchOwner::Kind::own: return session.owner == who.user_id;
    case SearchOwner::Kind::accessible: return true;
    case SearchOwner::Kind::user:
      return std::find(owner.owner_urns.begin(), owner.owner_urns.end(), session.owner) != owner.owner_urns.end();
  }
  return false;
}

// Newest first: later created_at, then the larger id.
bool newer(const SessionRecord& a, const SessionRecord& b) {
  if (a.created != b.created) return a.created > b.created;
  return a.id > b.id;
}

bool after_cursor(const SessionRecord& session, const SessionSearchCursor& cursor) {
  if (session.created != cursor.last_created_at) return session.created < cursor.last_created_at;
  return session.id < cursor.last_session_id;
}

// Metadata as strings, as create_session received them (values that are not JSON strings keep their JSON text).
std::map<std::string, std::string> session_metadata_strings(const JsonObject& metadata) {
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : metadata) {
    std::string text = value.text();
    if (value.is_string()) {
      boost::system::error_code ec;
      const boost::json::value parsed = boost::json::parse(value.text(), ec);
      if (!ec && parsed.is_string()) text = std::string(parsed.get_string());
    }
    out[key] = std::move(text);
  }
  return out;
}

std::string project_of(const SessionRecord& session) {
  return session.project_id.value_or(default_project);
}

}  // namespace

std::optional<SessionStatus> Engine::Impl::session_status(const SessionRecord& session) const {
  if (session.ended) return session.ended;
  for (const std::string& model_id : session.model_ids) {
    const ModelRecord* model = find_model(model_id);
    if (model != nullptr && model->status == ModelStatus::failed) {
      return SessionStatus::failed(SessionFailureCategory(SessionFailureCategory::Kind::user),
                                   SessionFailedReason::training_run(model_id),
                                   "training run " + model_id + " failed and is corrupted");
    }
  }
  // Expiry is applied lazily (sessions.cpp): a session past its expiry counts as expired here too.
  if (session.expired || clock.now() - session.last_seen > options.session_expiry) return std::nullopt;
  return SessionStatus::active();
}

void Engine::finish_session(const FinishSessionRequest& request, const Principal& who) {
  if (request.reason.kind == ClientSessionFinishReason::Kind::unknown) {
    throw HttpError(400, "reason: unknown type \"" + request.reason.type_name +
                             "\" (expected one of: success, errored, interrupted)");
  }
  SessionRecord& session = impl_->live_session(request.session_id, who);  // 404 unknown/expired, 400 ended
  session.ended = SessionStatus::client_finished(request.reason, request.detail);
  impl_->audit_event(who.user_id, "session.finish", std::nullopt, std::nullopt);
}

void Engine::cancel_session(std::string_view session_id, std::optional<std::string> detail) {
  auto it = impl_->sessions.find(std::string(session_id));
  if (it == impl_->sessions.end()) throw HttpError(404, "unknown session_id " + std::string(session_id));
  SessionRecord& session = *it->second;
  if (session.ended) throw HttpError(400, "session " + session.id + " has ended: " + describe(*session.ended));
  session.ended = SessionStatus::cancelled(std::move(detail));
}

SessionSearchResponse Engine::search_sessions(const SessionSearchRequest& request, const Principal& who) const {
  if (request.limit < 1 || request.limit > max_search_limit) {
    throw HttpError(400, "limit: must be 1..200, got " + std::to_string(request.limit));
  }
  std::vector<const SessionRecord*> matches;
  for (const SessionRecord* session : impl_->session_order) {
    if (!owner_matches(*session, request.owner, who)) continue;
    // session_id and display_name: either one matching is enough when both are given.
    const bool by_id = request.session_id && session->id == *request.session_id;
    const bool by_name = request.display_name && display_name_matches(session->display_name, *request.display_name);
    if ((request.session_id || request.display_name) && !by_id && !by_name) continue;
    if (request.project_ids && std::find(request.project_ids->begin(), request.project_ids->end(),
                                         project_of(*session)) == request.project_ids->end()) {
      continue;
    }
    if (!metadata_matches(session->user_metadata, request.user_metadata)) continue;
    if (request.statuses) {
      const std::optional<SessionStatus> status = impl_->session_status(*session);
      const bool any = std::any_of(request.statuses->begin(), request.statuses->end(),
                                   [&](const SessionStatusQuery& query) { return status_matches(status, query); });
      if (!any) continue;
    }
    if (request.cursor && !after_cursor(*session, *request.cursor)) continue;
    matches.push_back(session);
  }
  std::sort(matches.begin(), matches.end(),
            [](const SessionRecord* a, const SessionRecord* b) { return newer(*a, *b); });

  SessionSearchResponse response;
  const auto limit = static_cast<std::size_t>(request.limit);
  for (std::size_t i = 0; i < matches.size() && i < limit; ++i) {
    const SessionRecord& session = *matches[i];
    SessionSummary summary;
    summary.session_id = session.id;
    summary.created_at = session.created;
    summary.owner = session.owner;
    summary.project_id = project_of(session);
    summary.status = impl_->session_status(session);
    summary.display_name = session.display_name;
    if (!session.user_metadata.empty()) summary.user_metadata = session_metadata_strings(session.user_metadata);
    std::int64_t count = 0;
    std::int64_t bytes = 0;
    for (const std::string& model_id : session.model_ids) {
      for (const CheckpointMeta* meta : impl_->run_checkpoints(model_id)) {
        ++count;
        bytes += meta->size_bytes;
      }
    }
    summary.checkpoints_count = count;
    summary.checkpoint_storage_bytes = bytes;
    response.sessions.push_back(std::move(summary));
  }
  if (matches.size() > limit) {
    const SessionRecord& last = *matches[limit - 1];
    response.next_cursor = SessionSearchCursor(last.created, last.id);
  }
  return response;
}

}  // namespace tinker::local
