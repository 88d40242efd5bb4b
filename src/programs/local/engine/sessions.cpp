// Sessions (doc/local.md#what-it-serves), their expiry, the periodic sweep and telemetry.
//
// Expiry (a choice: the protocol does not say when a silent session ends,
// doc/protocol.md#choices-where-the-protocol-was-open): a session expires when neither a heartbeat
// nor any other request naming it (or one of its models or samplers) arrived for
// options.session_expiry. It is checked lazily on every access and by a sweep every second. Later
// requests naming it, its models or its samplers get HttpError 404 ("session ... expired"); 404
// rather than 410 because a 410 on a submit would make the Python SDK's retry layers resubmit into
// a session that no longer exists. Its pending futures fail with {"error": "session expired",
// "category": "server"}.
#include "programs/local/engine/engine_impl.hpp"

namespace tinker::local {

using engine_detail::SessionRecord;

namespace {
constexpr std::chrono::seconds sweep_interval{1};
constexpr std::size_t telemetry_batches_kept = 1000;
}  // namespace

SessionRecord& Engine::Impl::live_session(std::string_view session_id, const Principal& who) {
  auto it = sessions.find(std::string(session_id));
  if (it == sessions.end() || it->second->owner != who.user_id) {
    throw HttpError(404, "unknown session_id " + std::string(session_id));
  }
  SessionRecord& session = *it->second;
  if (check_expiry(session)) throw HttpError(404, "session " + session.id + " expired");
  // 400, not 409 or 410: the SDKs' retry layers resend those, and an ended session stays ended.
  if (session.ended) throw HttpError(400, "session " + session.id + " has ended: " + describe(*session.ended));
  session.last_seen = clock.now();
  return session;
}

bool Engine::Impl::check_expiry(SessionRecord& session) {
  if (!session.expired && clock.now() - session.last_seen > options.session_expiry) expire(session);
  return session.expired;
}

void Engine::Impl::expire(SessionRecord& session) {
  session.expired = true;
  for (const std::string& model_id : session.model_ids) {
    if (ModelRecord* model = find_model(model_id)) model->held.clear();  // their futures fail below
  }
  std::vector<FuturePtr> pending(session.incomplete.begin(), session.incomplete.end());
  for (const FuturePtr& future : pending) {
    complete(future, Failure{"session expired", RequestErrorCategory::server});
  }
  session.incomplete.clear();
}

void Engine::Impl::sweep() {
  for (SessionRecord* session : session_order) check_expiry(*session);
  evict_old_results();
  purge_expired_checkpoints();
  auto now = clock.now();
  std::erase_if(downloads, [&](const auto& entry) { return entry.second.expires <= now; });
}

void Engine::Impl::schedule_sweep() {
  if (shutting_down) return;
  sweep_timer.expires_after(sweep_interval);
  std::weak_ptr<int> token = alive;
  sweep_timer.async_wait([this, token](boost::system::error_code ec) {
    if (ec || token.expired() || shutting_down) return;
    sweep();
    schedule_sweep();
  });
}

CreateSessionResponse Engine::create_session(const CreateSessionRequest& request, const Principal& who) {
  auto session = std::make_unique<SessionRecord>();
  session->id = impl_->ids.next();
  session->owner = who.user_id;
  session->tags = request.tags;
  session->user_metadata = request.user_metadata;
  session->sdk_version = request.sdk_version;
  session->project_id = request.project_id;
  session->display_name = request.display_name;
  session->created = impl_->now_ts();
  session->last_seen = impl_->clock.now();
  CreateSessionResponse response(session->id);
  impl_->audit_event(who.user_id, "session.create", std::nullopt, std::nullopt);
  impl_->session_order.push_back(session.get());
  impl_->sessions.emplace(session->id, std::move(session));
  return response;
}

SessionHeartbeatResponse Engine::heartbeat(const SessionHeartbeatRequest& request, const Principal& who) {
  impl_->live_session(request.session_id, who);
  return SessionHeartbeatResponse();
}

TelemetryResponse Engine::telemetry(const TelemetryRequest& request, std::string_view body, const Principal&) {
  impl_->telemetry_events += request.events.size();
  impl_->telemetry_batches.emplace_back(body);
  if (impl_->telemetry_batches.size() > telemetry_batches_kept) impl_->telemetry_batches.pop_front();
  return TelemetryResponse();
}

std::vector<std::string> Engine::telemetry_batches() const {
  return std::vector<std::string>(impl_->telemetry_batches.begin(), impl_->telemetry_batches.end());
}

ListSessionsResponse Engine::list_sessions(std::int64_t limit, std::int64_t offset, const Principal& who) const {
  if (limit < 1) throw HttpError(400, "limit: must be at least 1");
  if (offset < 0) throw HttpError(400, "offset: must not be negative");
  ListSessionsResponse response;
  std::int64_t index = 0;
  // Newest first.
  for (auto it = impl_->session_order.rbegin(); it != impl_->session_order.rend(); ++it) {
    if ((*it)->owner != who.user_id) continue;
    if (index++ < offset) continue;
    if (static_cast<std::int64_t>(response.sessions.size()) >= limit) break;
    response.sessions.push_back((*it)->id);
  }
  return response;
}

GetSessionResponse Engine::get_session(std::string_view session_id, const Principal& who) const {
  auto it = impl_->sessions.find(std::string(session_id));
  if (it == impl_->sessions.end() || it->second->owner != who.user_id) {
    throw HttpError(404, "unknown session_id " + std::string(session_id));
  }
  return GetSessionResponse(it->second->model_ids, it->second->sampler_ids);
}

void Engine::assign_session_project(std::string_view session_id, const AssignSessionProjectRequest& request,
                                    const Principal& who) {
  if (request.project_id.empty()) throw HttpError(400, "project_id: required");
  auto it = impl_->sessions.find(std::string(session_id));
  if (it == impl_->sessions.end() || it->second->owner != who.user_id) {
    throw HttpError(404, "unknown session_id " + std::string(session_id));
  }
  // Runs and samplers belong to the session, so they move with it.
  it->second->project_id = request.project_id;
}

}  // namespace tinker::local
