// Usage counters, billing usage events (GET billing/usage/events, doc/rest.md) and the audit log's
// event records.
//
// The engine counts, per UTC hour, per user, session and base model: training tokens (model
// input tokens of successful forward/backward ops), sampling prefill tokens (prompt tokens,
// never cached), sampled tokens, and checkpoints saved. Storage is reported per hour from the
// live checkpoints' sizes (a deleted checkpoint's past storage is no longer reported).
#include "programs/local/engine/engine_impl.hpp"

namespace tinker::local {

using engine_detail::UsageKey;
using engine_detail::UsageKind;

namespace {
constexpr std::chrono::hours bucket{1};
constexpr std::chrono::hours max_window{14 * 24};

Timestamp parse_bound(std::string_view text, const char* name) {
  if (text.empty()) throw HttpError(400, std::string(name) + ": required (an RFC 3339 datetime on a UTC hour)");
  Timestamp t;
  try {
    t = parse_timestamp(text);
  } catch (const std::exception& e) {
    throw HttpError(400, std::string(name) + ": not an RFC 3339 datetime: " + std::string(text));
  }
  if (t.time_since_epoch() % bucket != std::chrono::microseconds(0)) {
    throw HttpError(400, std::string(name) + ": must be aligned to a UTC hour, got " + std::string(text));
  }
  return t;
}

billing::EventInfo event_info(UsageKind kind, std::int64_t amount) {
  switch (kind) {
    case UsageKind::training_tokens: return billing::Training(amount);
    case UsageKind::sampling_prefill_tokens: return billing::SamplingPrefill(false, amount);
    case UsageKind::sampled_tokens: return billing::SamplingSample(amount);
    case UsageKind::checkpoints_saved: break;  // returned below, where the compiler wants a return
  }
  return billing::CheckpointEvent(amount);
}
}  // namespace

void Engine::Impl::add_usage(const std::string& user_id, const std::string& session_id, const std::string& base_model,
                             UsageKind kind, std::int64_t amount) {
  if (amount <= 0) return;
  UsageKey key;
  key.bucket_hour = std::chrono::floor<std::chrono::hours>(clock.now()).time_since_epoch().count();
  key.user_id = user_id;
  key.session_id = session_id;
  key.base_model = base_model;
  key.kind = kind;
  usage[key] += amount;
}

void Engine::Impl::audit_event(const std::string& owner, std::string event, std::optional<std::string> model_id,
                               std::optional<std::string> tinker_path) {
  AuditLogEntry entry(now_ts(), std::move(event));
  entry.model_id = std::move(model_id);
  entry.tinker_path = std::move(tinker_path);
  audit_entries.emplace_back(owner, std::move(entry));
}

BillingUsageResponse Engine::billing_usage(std::string_view start_time, std::string_view end_time,
                                           const Principal& who) const {
  Timestamp start = parse_bound(start_time, "starting_on");
  Timestamp end = parse_bound(end_time, "ending_before");
  if (end <= start) throw HttpError(400, "ending_before: must be after starting_on");
  if (end - start > max_window) throw HttpError(400, "the window from starting_on to ending_before exceeds 14 days");
  Timestamp now = impl_->now_ts();
  if (start > now) throw HttpError(400, "starting_on: must not be in the future");

  BillingUsageResponse response;
  auto add_session = [&](const std::string& session_id) {
    auto it = impl_->sessions.find(session_id);
    if (it != impl_->sessions.end()) response.sessions[session_id] = BillingSessionInfo(it->second->user_metadata);
  };
  for (const auto& [key, amount] : impl_->usage) {
    Timestamp bucket_start{std::chrono::hours(key.bucket_hour)};
    if (key.user_id != who.user_id || bucket_start < start || bucket_start >= end) continue;
    BillingUsageEntry entry(bucket_start, bucket_start + bucket, event_info(key.kind, amount));
    entry.base_model = key.base_model;
    entry.user_id = key.user_id;
    if (!key.session_id.empty()) {
      entry.session_id = key.session_id;
      auto session = impl_->sessions.find(key.session_id);
      if (session != impl_->sessions.end()) entry.project_id = session->second->project_id;
      add_session(key.session_id);
    }
    response.data.push_back(std::move(entry));
  }

  // Storage: gigabyte-hours of the caller's live checkpoints in each hour of the window.
  Timestamp storage_end = std::min(end, now);
  for (Timestamp hour = start; hour < storage_end; hour += bucket) {
    double gigabyte_hours = 0.0;
    Timestamp hour_end = std::min(hour + bucket, storage_end);
    for (const auto& [path, record] : impl_->checkpoints) {
      const auto& meta = record.meta;
      if (meta.owner != who.user_id || !impl_->is_live(meta)) continue;
      Timestamp from = std::max(hour, meta.created);
      Timestamp to = meta.expires_at ? std::min(hour_end, *meta.expires_at) : hour_end;
      if (to <= from) continue;
      double hours = std::chrono::duration<double, std::ratio<3600>>(to - from).count();
      gigabyte_hours += static_cast<double>(meta.size_bytes) / 1e9 * hours;
    }
    if (gigabyte_hours > 0.0) {
      BillingUsageEntry entry(hour, hour + bucket, billing::Storage(gigabyte_hours));
      entry.user_id = who.user_id;
      response.data.push_back(std::move(entry));
    }
  }
  return response;
}

}  // namespace tinker::local
