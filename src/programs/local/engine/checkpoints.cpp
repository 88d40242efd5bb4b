// The checkpoint index: what is on disk (rescanned at start so checkpoints survive a restart),
// expiry, access rules, and the REST endpoints on single checkpoints (doc/rest.md,
// doc/local.md#checkpoints).
//
// Access (choice): the run's owner may do everything; anybody may read (list, load, sample,
// weights_info, archive) a public checkpoint; a load_weights weights_access_token reads the
// checkpoints of the account whose API key it is. Everything else answers 404, as for a
// checkpoint that does not exist.
#include "programs/local/engine/engine_impl.hpp"

namespace tinker::local {

using engine_detail::CheckpointMeta;
using engine_detail::CheckpointRecord;
using engine_detail::ModelRecord;
using engine_detail::ModelStatus;

void Engine::Impl::rescan_checkpoints() {
  for (CheckpointMeta& meta : store.scan()) {
    if (!is_live(meta)) {
      store.remove(meta);
      continue;
    }
    ModelRecord* run = find_model(meta.run_id);
    if (run == nullptr) {
      run = &add_model(meta.run_id, nullptr, meta.owner, meta.base_model, meta.lora, std::nullopt);
      run->status = ModelStatus::detached;
      run->created = meta.created;
      run->last_request_time = meta.created;
    }
    if (meta.copied_from) run->holds_copy = true;
    run->created = std::min(run->created, meta.created);
    run->last_request_time = std::max(run->last_request_time, meta.created);
    std::string path = meta.tinker_path();
    checkpoints[path] = CheckpointRecord{std::move(meta), 0, std::nullopt};
  }
}

bool Engine::Impl::is_live(const CheckpointMeta& meta) const {
  return !meta.expires_at || *meta.expires_at > now_ts();
}

bool Engine::Impl::can_read(const CheckpointMeta& meta, const std::string& user_id) const {
  return meta.owner == user_id || meta.is_public;
}

CheckpointRecord* Engine::Impl::find_checkpoint(const std::string& tinker_path) {
  auto it = checkpoints.find(tinker_path);
  return it == checkpoints.end() || !is_live(it->second.meta) ? nullptr : &it->second;
}

const CheckpointRecord* Engine::Impl::find_checkpoint(const std::string& tinker_path) const {
  auto it = checkpoints.find(tinker_path);
  return it == checkpoints.end() || !is_live(it->second.meta) ? nullptr : &it->second;
}

void Engine::Impl::index_checkpoint(const CheckpointMeta& meta) {
  checkpoints[meta.tinker_path()] = CheckpointRecord{meta, 0, std::nullopt};
}

void Engine::Impl::purge_expired_checkpoints() {
  for (auto it = checkpoints.begin(); it != checkpoints.end();) {
    if (is_live(it->second.meta)) {
      ++it;
      continue;
    }
    store.remove(it->second.meta);
    it = checkpoints.erase(it);
  }
}

std::vector<const CheckpointMeta*> Engine::Impl::run_checkpoints(std::string_view run_id) const {
  std::string prefix = "tinker://" + std::string(run_id) + "/";
  std::vector<const CheckpointMeta*> found;
  for (auto it = checkpoints.lower_bound(prefix); it != checkpoints.end() && it->first.starts_with(prefix); ++it) {
    if (is_live(it->second.meta)) found.push_back(&it->second.meta);
  }
  return found;
}

CheckpointRecord& Engine::Impl::owned_checkpoint(std::string_view run_id, std::string_view checkpoint_id,
                                                 const Principal& who) {
  if (!checkpoint_id.starts_with("weights/") && !checkpoint_id.starts_with("sampler_weights/") &&
      !checkpoint_id.starts_with("external_weights/")) {
    throw HttpError(400,
                    "checkpoint_id: expected weights/<name>, sampler_weights/<name> or external_weights/<name>, got " +
                        std::string(checkpoint_id));
  }
  std::string path = "tinker://" + std::string(run_id) + "/" + std::string(checkpoint_id);
  CheckpointRecord* record = find_checkpoint(path);
  if (record == nullptr || record->meta.owner != who.user_id) throw HttpError(404, "checkpoint " + path + " not found");
  return *record;
}

std::shared_ptr<const engine_detail::ModelState> Engine::Impl::load_snapshot(const CheckpointMeta& meta) {
  const CatalogueEntry* entry = find_base(meta.base_model);
  if (entry == nullptr) {
    throw HttpError(404, "base model " + meta.base_model + " of " + meta.tinker_path() + " is not in the catalogue");
  }
  try {
    std::string bytes = store.read_state(meta);
    return std::shared_ptr<const ModelState>(backend->deserialize(*entry, bytes, false));
  } catch (const UserError& e) {
    throw HttpError(404, e.what());
  } catch (const std::exception& e) {
    throw HttpError(500, "cannot load " + meta.tinker_path() + ": " + engine_detail::exception_message(e));
  }
}

void Engine::delete_checkpoint(std::string_view run_id, std::string_view checkpoint_id, const Principal& who) {
  CheckpointRecord& record = impl_->owned_checkpoint(run_id, checkpoint_id, who);
  CheckpointMeta meta = record.meta;
  impl_->store.remove(meta);
  impl_->checkpoints.erase(meta.tinker_path());
  impl_->audit_event(who.user_id, "checkpoint.delete", meta.run_id, meta.tinker_path());
}

void Engine::publish_checkpoint(std::string_view run_id, std::string_view checkpoint_id, const Principal& who) {
  CheckpointRecord& record = impl_->owned_checkpoint(run_id, checkpoint_id, who);
  if (record.meta.is_public) throw HttpError(409, "checkpoint " + record.meta.tinker_path() + " is already public");
  record.meta.is_public = true;
  impl_->store.write_meta(record.meta);
  impl_->audit_event(who.user_id, "checkpoint.publish", record.meta.run_id, record.meta.tinker_path());
}

void Engine::unpublish_checkpoint(std::string_view run_id, std::string_view checkpoint_id, const Principal& who) {
  CheckpointRecord& record = impl_->owned_checkpoint(run_id, checkpoint_id, who);
  if (!record.meta.is_public) throw HttpError(409, "checkpoint " + record.meta.tinker_path() + " is already private");
  record.meta.is_public = false;
  impl_->store.write_meta(record.meta);
  impl_->audit_event(who.user_id, "checkpoint.unpublish", record.meta.run_id, record.meta.tinker_path());
}

void Engine::set_checkpoint_ttl(std::string_view run_id, std::string_view checkpoint_id,
                                const SetCheckpointTtlRequest& request, const Principal& who) {
  if (request.ttl_seconds && *request.ttl_seconds <= 0) {
    throw HttpError(400, "ttl_seconds: must be positive (or null to remove the expiry)");
  }
  CheckpointRecord& record = impl_->owned_checkpoint(run_id, checkpoint_id, who);
  if (request.ttl_seconds) {
    record.meta.expires_at = impl_->now_ts() + std::chrono::seconds(*request.ttl_seconds);
  } else {
    record.meta.expires_at.reset();
  }
  impl_->store.write_meta(record.meta);
  impl_->audit_event(who.user_id, "checkpoint.set_ttl", record.meta.run_id, record.meta.tinker_path());
}

WeightsInfoResponse Engine::weights_info(const WeightsInfoRequest& request, const Principal& who) const {
  TinkerPath path;
  try {
    path = TinkerPath::parse(request.tinker_path);
  } catch (const std::exception& e) {
    throw HttpError(400, "tinker_path: " + engine_detail::exception_message(e));
  }
  const CheckpointRecord* record = impl_->find_checkpoint(path.to_string());
  if (record == nullptr || !impl_->can_read(record->meta, who.user_id)) {
    throw HttpError(404, "checkpoint " + request.tinker_path + " not found");
  }
  const LoraConfig& lora = record->meta.lora;
  WeightsInfoResponse response(record->meta.base_model, true);
  response.lora_rank = lora.rank;
  response.train_unembed = lora.train_unembed;
  response.train_mlp = lora.train_mlp;
  response.train_attn = lora.train_attn;
  // Said only for another optimizer than AdamW, so 0.25-era bodies stay as they were.
  if (record->meta.has_optimizer && record->meta.optimizer_type != "adamw") {
    response.optimizer_config = engine_detail::checkpoint_optimizer(record->meta);
  }
  return response;
}

CheckpointsListResponse Engine::list_run_checkpoints(std::string_view run_id, const Principal& who) const {
  const ModelRecord* run = impl_->find_model(run_id);
  bool owner = run != nullptr && run->owner == who.user_id;
  std::vector<Checkpoint> listed;
  for (const CheckpointMeta* meta : impl_->run_checkpoints(run_id)) {
    if (owner || meta->is_public) listed.push_back(meta->to_checkpoint());
  }
  if (!owner && listed.empty()) throw HttpError(404, "unknown training run " + std::string(run_id));
  // Newest first, like the user-wide listing.
  std::stable_sort(listed.begin(), listed.end(),
                   [](const Checkpoint& a, const Checkpoint& b) { return a.time > b.time; });
  return CheckpointsListResponse(std::move(listed));
}

CheckpointsListResponse Engine::list_user_checkpoints(std::int64_t limit, std::int64_t offset,
                                                      const Principal& who) const {
  if (limit < 1) throw HttpError(400, "limit: must be at least 1");
  if (offset < 0) throw HttpError(400, "offset: must not be negative");
  std::vector<Checkpoint> all;
  for (const auto& [path, record] : impl_->checkpoints) {
    if (record.meta.owner == who.user_id && impl_->is_live(record.meta)) all.push_back(record.meta.to_checkpoint());
  }
  std::stable_sort(all.begin(), all.end(), [](const Checkpoint& a, const Checkpoint& b) { return a.time > b.time; });
  auto total = static_cast<std::int64_t>(all.size());
  std::vector<Checkpoint> page;
  for (std::int64_t i = offset; i < total && i < offset + limit; ++i) page.push_back(all[static_cast<std::size_t>(i)]);
  return CheckpointsListResponse(std::move(page), Cursor(offset, limit, total));
}

}  // namespace tinker::local
