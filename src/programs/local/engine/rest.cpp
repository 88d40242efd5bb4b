// REST listings of training runs, the audit log and session trace exports (doc/rest.md).
//
// Choices: listings are newest first (runs by last_request_time); limit must be >= 1 and offset
// >= 0 (else 400); access_scope "accessible" adds other users' runs that have at least one public
// checkpoint (and shows only those checkpoints); a trace export is "pending" for
// options.trace_export_pending_polls polls, then "ready" with a download URL valid for one hour
// serving a small Perfetto trace (one instant event per applied operation of the session).
#include "programs/local/engine/engine_impl.hpp"

#include <boost/json.hpp>

namespace tinker::local {

using engine_detail::CheckpointMeta;
using engine_detail::ModelRecord;
using engine_detail::ModelStatus;
using engine_detail::SessionRecord;

namespace {

constexpr std::chrono::hours trace_url_lifetime{1};

void check_scope(std::string_view access_scope) {
  if (access_scope != "owned" && access_scope != "accessible" && !access_scope.empty()) {
    throw HttpError(400, "access_scope: expected owned or accessible, got " + std::string(access_scope));
  }
}

void check_page(std::int64_t limit, std::int64_t offset) {
  if (limit < 1) throw HttpError(400, "limit: must be at least 1");
  if (offset < 0) throw HttpError(400, "offset: must not be negative");
}

std::map<std::string, std::string> string_metadata(const JsonObject& metadata) {
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : metadata) {
    if (value.is_string()) {
      boost::system::error_code ec;
      boost::json::value parsed = boost::json::parse(value.text(), ec);
      out[key] = !ec && parsed.is_string() ? std::string(parsed.get_string()) : value.text();
    } else {
      out[key] = value.text();
    }
  }
  return out;
}

// Minimal protobuf writer for the Perfetto trace (perfetto/trace/trace.proto).
void put_varint(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}
void put_tag(std::string& out, int field, int wire_type) {
  put_varint(out, static_cast<std::uint64_t>(field) << 3 | static_cast<std::uint64_t>(wire_type));
}
void put_bytes(std::string& out, int field, std::string_view bytes) {
  put_tag(out, field, 2);
  put_varint(out, bytes.size());
  out.append(bytes);
}
void put_uint(std::string& out, int field, std::uint64_t value) {
  put_tag(out, field, 0);
  put_varint(out, value);
}

}  // namespace

bool Engine::Impl::has_public_checkpoint(std::string_view run_id) const {
  for (const CheckpointMeta* meta : run_checkpoints(run_id)) {
    if (meta->is_public) return true;
  }
  return false;
}

TrainingRun Engine::Impl::training_run(const ModelRecord& model, bool owner_view) const {
  TrainingRun run(model.id, model.base_model, model.owner, true, model.last_request_time);
  run.lora_rank = model.lora_config.rank;
  run.corrupted = model.status == ModelStatus::failed;
  for (const CheckpointMeta* meta : run_checkpoints(model.id)) {
    if (!owner_view && !meta->is_public) continue;
    // External exports are neither the run's last training nor its last sampler checkpoint.
    if (meta->type == CheckpointType::external) continue;
    auto& slot = meta->type == CheckpointType::training ? run.last_checkpoint : run.last_sampler_checkpoint;
    if (!slot || slot->time <= meta->created) slot = meta->to_checkpoint();
  }
  if (model.user_metadata) run.user_metadata = string_metadata(*model.user_metadata);
  return run;
}

TrainingRunsResponse Engine::list_training_runs(std::int64_t limit, std::int64_t offset, std::string_view access_scope,
                                                const Principal& who) const {
  check_scope(access_scope);
  check_page(limit, offset);
  bool accessible = access_scope == "accessible";
  std::vector<const ModelRecord*> runs;
  for (const auto& [id, model] : impl_->models) {
    if (model->owner == who.user_id || (accessible && impl_->has_public_checkpoint(id))) runs.push_back(model.get());
  }
  std::stable_sort(runs.begin(), runs.end(), [](const ModelRecord* a, const ModelRecord* b) {
    return a->last_request_time > b->last_request_time;
  });
  TrainingRunsResponse response;
  auto total = static_cast<std::int64_t>(runs.size());
  for (std::int64_t i = offset; i < total && i < offset + limit; ++i) {
    const ModelRecord& model = *runs[static_cast<std::size_t>(i)];
    response.training_runs.push_back(impl_->training_run(model, model.owner == who.user_id));
  }
  response.cursor = Cursor(offset, limit, total);
  return response;
}

TrainingRun Engine::get_training_run(std::string_view run_id, std::string_view access_scope,
                                     const Principal& who) const {
  check_scope(access_scope);
  const ModelRecord* model = impl_->find_model(run_id);
  if (model == nullptr) throw HttpError(404, "unknown training run " + std::string(run_id));
  bool owner = model->owner == who.user_id;
  // A public checkpoint makes the run readable, whatever the scope asked for.
  if (!owner && !impl_->has_public_checkpoint(run_id)) {
    throw HttpError(404, "unknown training run " + std::string(run_id));
  }
  return impl_->training_run(*model, owner);
}

AuditLogResponse Engine::audit_log(std::int64_t limit, std::int64_t offset, const Principal& who) const {
  check_page(limit, offset);
  AuditLogResponse response;
  std::int64_t index = 0;
  for (auto it = impl_->audit_entries.rbegin(); it != impl_->audit_entries.rend(); ++it) {  // newest first
    if (it->first != who.user_id) continue;
    if (index++ < offset) continue;
    if (static_cast<std::int64_t>(response.entries.size()) >= limit) break;
    response.entries.push_back(it->second);
  }
  return response;
}

std::string Engine::Impl::trace_bytes(const SessionRecord& session) const {
  std::string trace;
  constexpr std::uint64_t sequence_id = 1;
  for (const std::string& model_id : session.model_ids) {
    const ModelRecord* model = find_model(model_id);
    if (model == nullptr) continue;
    for (std::size_t i = 0; i < model->applied_seq_ids.size(); ++i) {
      std::string event;
      put_uint(event, 9, 3);  // TrackEvent.type = TYPE_INSTANT
      put_bytes(event, 23,
                model_id + " seq " + std::to_string(model->applied_seq_ids[i]) + " " +
                    model->applied_ops[i]);  // TrackEvent.name
      std::string packet;
      auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(model->applied_times[i].time_since_epoch());
      put_uint(packet, 8, static_cast<std::uint64_t>(ns.count()));  // TracePacket.timestamp
      put_uint(packet, 10, sequence_id);                            // trusted_packet_sequence_id
      put_bytes(packet, 11, event);                                 // TracePacket.track_event
      put_bytes(trace, 1, packet);                                  // Trace.packet
    }
  }
  return trace;
}

TraceExportResponse Engine::trace_export(std::string_view session_id, std::string_view download_base,
                                         const Principal& who) {
  auto it = impl_->sessions.find(std::string(session_id));
  if (it == impl_->sessions.end() || it->second->owner != who.user_id) {
    throw HttpError(404, "unknown session_id " + std::string(session_id));
  }
  SessionRecord& session = *it->second;
  if (session.trace_polls < impl_->options.trace_export_pending_polls) {
    ++session.trace_polls;
    return TraceExportResponse(TraceExportStatus::pending);
  }
  auto now = impl_->clock.now();
  auto download = session.trace_token ? impl_->downloads.find(*session.trace_token) : impl_->downloads.end();
  if (download == impl_->downloads.end() || download->second.expires <= now) {
    std::string token = impl_->ids.token() + ".pftrace";
    Download file{"application/octet-stream", std::make_shared<const std::string>(impl_->trace_bytes(session)),
                  now + trace_url_lifetime};
    impl_->downloads[token] = std::move(file);
    session.trace_token = token;
  }
  TraceExportResponse response(TraceExportStatus::ready);
  response.url = std::string(download_base) + "/_downloads/" + *session.trace_token;
  return response;
}

std::optional<Download> Engine::download(std::string_view token) const {
  auto it = impl_->downloads.find(std::string(token));
  if (it == impl_->downloads.end() || it->second.expires <= impl_->clock.now()) return std::nullopt;
  return it->second;
}

}  // namespace tinker::local
