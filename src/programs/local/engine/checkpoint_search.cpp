// Checkpoint search, copy_weights and the current checkpoint storage usage
// (doc/local.md#checkpoint-search, doc/local.md#copying-weights, doc/local.md#checkpoint-storage-usage).
//
// Search: owner "own" = the caller's checkpoints, "accessible" = every checkpoint of this server
// (one tenant, as the session search), "user" = the checkpoints of the named owner URNs. A
// checkpoint's project is its run's session's (a run without a live session, or a session without
// one, is in the project "default"). Newest first (created, then the id, both descending); a
// checkpoint's uuid is its `tinker://` path, and the next page starts strictly after the cursor.
#include "programs/local/engine/engine_impl.hpp"
#include "programs/local/engine/ids.hpp"

#include <algorithm>

namespace tinker::local {

using engine_detail::CheckpointMeta;
using engine_detail::CheckpointRecord;
using engine_detail::ModelRecord;
using engine_detail::ModelStatus;

namespace {

constexpr std::int64_t max_checkpoint_search_limit = 200;
constexpr const char* checkpoint_default_project = "default";
constexpr std::int64_t min_copy_ttl_seconds = 3600;
constexpr std::int64_t max_copy_ttl_seconds = 10LL * 365 * 24 * 3600;
// A fixed storage rate, in USD per GB-month (doc/local.md#checkpoint-storage-usage).
constexpr double local_storage_rate_usd_per_gigabyte_month = 0.02;

bool checkpoint_owner_matches(const CheckpointMeta& meta, const SearchOwner& owner, const Principal& who) {
  switch (owner.kind) {
    case SearchOwner::Kind::own: return meta.owner == who.user_id;
    case SearchOwner::Kind::accessible: return true;
    case SearchOwner::Kind::user:
      return std::find(owner.owner_urns.begin(), owner.owner_urns.end(), meta.owner) != owner.owner_urns.end();
  }
  return false;
}

bool checkpoint_metadata_matches(const CheckpointMeta& meta, const std::map<std::string, std::string>& wanted) {
  for (const auto& [key, value] : wanted) {
    if (!meta.user_metadata) return false;
    auto it = meta.user_metadata->find(key);
    if (it == meta.user_metadata->end() || it->second != value) return false;
  }
  return true;
}

template <class Values>
bool listed_in(const std::optional<Values>& allowed, const std::string& value) {
  return !allowed || std::find(allowed->begin(), allowed->end(), value) != allowed->end();
}

// Newest first: later creation, then the larger path.
bool newer_checkpoint(const CheckpointMeta* a, const CheckpointMeta* b) {
  if (a->created != b->created) return a->created > b->created;
  return a->tinker_path() > b->tinker_path();
}

bool after_checkpoint_cursor(const CheckpointMeta& meta, const CheckpointSearchCursor& cursor) {
  if (meta.created != cursor.last_created_at) return meta.created < cursor.last_created_at;
  return meta.tinker_path() < cursor.last_checkpoint_uuid;
}

}  // namespace

std::string Engine::Impl::checkpoint_project(const CheckpointMeta& meta) const {
  const ModelRecord* run = find_model(meta.run_id);
  if (run == nullptr || run->session == nullptr || !run->session->project_id) return checkpoint_default_project;
  return *run->session->project_id;
}

CheckpointSearchResponse Engine::search_checkpoints(const CheckpointSearchRequest& request,
                                                    const Principal& who) const {
  if (request.limit < 1 || request.limit > max_checkpoint_search_limit) {
    throw HttpError(400, "limit: must be 1..200, got " + std::to_string(request.limit));
  }
  std::vector<const CheckpointMeta*> found;
  for (const auto& [path, record] : impl_->checkpoints) {
    const CheckpointMeta& meta = record.meta;
    if (!impl_->is_live(meta) || !checkpoint_owner_matches(meta, request.owner, who)) continue;
    if (request.checkpoint_type && meta.type != *request.checkpoint_type) continue;
    if (!listed_in(request.base_models, meta.base_model)) continue;  // an empty list matches nothing
    if (!listed_in(request.project_ids, impl_->checkpoint_project(meta))) continue;
    if (!checkpoint_metadata_matches(meta, request.user_metadata)) continue;
    if (request.cursor && !after_checkpoint_cursor(meta, *request.cursor)) continue;
    found.push_back(&meta);
  }
  std::sort(found.begin(), found.end(), newer_checkpoint);
  CheckpointSearchResponse response;
  const auto limit = static_cast<std::size_t>(request.limit);
  for (std::size_t i = 0; i < found.size() && i < limit; ++i) response.checkpoints.push_back(found[i]->to_checkpoint());
  if (found.size() > limit) {
    const CheckpointMeta& last = *found[limit - 1];
    response.next_cursor = CheckpointSearchCursor(last.created, last.tinker_path());
  }
  return response;
}

CopyWeightsResponse Engine::copy_weights(const CopyWeightsRequest& request, const Principal& who) {
  Impl& impl = *impl_;
  engine_detail::SessionRecord& session = impl.live_session(request.session_id, who);
  if (request.model_seq_id < 0) throw HttpError(400, "model_seq_id: must not be negative");
  if (request.ttl_seconds &&
      (*request.ttl_seconds < min_copy_ttl_seconds || *request.ttl_seconds > max_copy_ttl_seconds)) {
    throw HttpError(400, "ttl_seconds: must be 3600..315360000 (one hour to ten years), got " +
                             std::to_string(*request.ttl_seconds));
  }
  TinkerPath source_path;
  try {
    source_path = TinkerPath::parse(request.source_path);
  } catch (const std::exception& e) {
    throw HttpError(400, "source_path: " + engine_detail::exception_message(e));
  }
  const std::string run_id = session.id + ":train:" + std::to_string(request.model_seq_id);
  const TinkerPath copy_path(run_id, source_path.type, source_path.name);
  // A re-sent request (same session and model_seq_id) answers the copy it made.
  if (const ModelRecord* existing = impl.find_model(run_id)) {
    const CheckpointRecord* made = impl.find_checkpoint(copy_path.to_string());
    if (existing->holds_copy && made != nullptr && made->meta.copied_from == source_path.to_string()) {
      return CopyWeightsResponse(copy_path.to_string());
    }
    throw HttpError(409, "model_seq_id " + std::to_string(request.model_seq_id) + " of session " + session.id +
                             " is already in use");
  }
  if (session.model_tickets.count(request.model_seq_id) != 0) {
    throw HttpError(409, "model_seq_id " + std::to_string(request.model_seq_id) + " is already in use");
  }
  const CheckpointRecord* source = impl.find_checkpoint(source_path.to_string());
  bool readable = source != nullptr && impl.can_read(source->meta, who.user_id);
  if (source != nullptr && !readable && request.weights_access_token) {
    readable = source->meta.owner == engine_detail::user_id_for_key(*request.weights_access_token);
  }
  if (!readable) throw HttpError(404, "checkpoint " + request.source_path + " not found");

  CheckpointMeta copy = source->meta;
  copy.run_id = run_id;
  copy.owner = who.user_id;
  copy.created = impl.now_ts();
  copy.expires_at.reset();  // the source's expiry is not inherited
  if (request.ttl_seconds) copy.expires_at = copy.created + std::chrono::seconds(*request.ttl_seconds);
  copy.is_public = false;
  copy.copied_from = source_path.to_string();
  try {
    impl.store.write_copy(source->meta, copy);
  } catch (const std::exception& e) {
    throw HttpError(500, "cannot copy " + request.source_path + ": " + engine_detail::exception_message(e));
  }
  ModelRecord& run = impl.add_model(run_id, &session, who.user_id, copy.base_model, copy.lora, std::nullopt);
  run.status = ModelStatus::detached;
  run.holds_copy = true;
  impl.index_checkpoint(copy);
  impl.audit_event(who.user_id, "checkpoint.copy", run_id, copy.tinker_path());
  return CopyWeightsResponse(copy.tinker_path());
}

CheckpointStorageUsageResponse Engine::checkpoint_storage_usage(const std::optional<std::string>& project_id,
                                                                const Principal& who) const {
  if (project_id && project_id->empty()) throw HttpError(400, "project_id: must not be empty when given");
  // One row per (project, owner) of the live checkpoints; each checkpoint counts its own size
  // (a copy shares its bytes on disk but is billed like any checkpoint).
  std::map<std::pair<std::string, std::string>, CheckpointStorageUsageItem> rows;
  for (const auto& [path, record] : impl_->checkpoints) {
    const CheckpointMeta& meta = record.meta;
    if (!impl_->is_live(meta)) continue;
    std::string project = impl_->checkpoint_project(meta);
    if (project_id && project != *project_id) continue;
    CheckpointStorageUsageItem& row = rows[{project, meta.owner}];
    row.project_id = project;
    row.org_user_urn = meta.owner;
    if (meta.owner == who.user_id) row.user_email = who.email;
    row.checkpoint_count += 1;
    row.size_bytes += meta.size_bytes;
  }
  CheckpointStorageUsageResponse response;
  response.effective_rate_usd_per_gigabyte_month = local_storage_rate_usd_per_gigabyte_month;
  for (auto& [key, row] : rows) {
    row.size_gigabytes = static_cast<double>(row.size_bytes) / 1e9;
    row.estimated_monthly_cost_usd = row.size_gigabytes * local_storage_rate_usd_per_gigabyte_month;
    response.data.push_back(std::move(row));
  }
  return response;
}

}  // namespace tinker::local
