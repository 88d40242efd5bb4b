// External (Hugging Face PEFT) weights of tinker-local (doc/local.md#external-weights):
// save_weights_external writes the adapter as adapter_model.safetensors + adapter_config.json
// beside the checkpoint's state (the same files as its archive), and external_weights_urls hands
// each file out as a download valid for 15 minutes.
//
// Choices: tinker-local cannot encrypt, so age recipients are refused at submission (400, nothing
// consumed of the model's seq_ids); the TTL must be 3600 s .. 10 years as the service documents
// (400); an existing external checkpoint of the same name is not replaced (the future fails,
// category user), because its files may be being downloaded.
#include "programs/local/engine/engine_impl.hpp"

namespace tinker::local {

using engine_detail::CheckpointMeta;
using engine_detail::CheckpointRecord;
using engine_detail::Failure;
using engine_detail::ModelRecord;
using engine_detail::OpResult;

namespace {
constexpr std::chrono::minutes external_url_lifetime{15};
constexpr std::int64_t min_external_ttl = 3600;
constexpr std::int64_t max_external_ttl = 10LL * 365 * 24 * 3600;
constexpr const char* peft_weights_file = "adapter_model.safetensors";
constexpr const char* peft_config_file = "adapter_config.json";
}  // namespace

void Engine::Impl::run_save_external(ModelRecord& model, std::int64_t seq_id, std::string name,
                                     std::optional<std::int64_t> ttl_seconds) {
  if (!engine_detail::valid_checkpoint_name(name)) {
    return finish_op(
        model, seq_id,
        Failure{"path: invalid checkpoint name '" + name + "' (use 1-128 characters from A-Z a-z 0-9 . _ -)",
                RequestErrorCategory::user});
  }
  auto meta = std::make_shared<CheckpointMeta>();
  meta->run_id = model.id;
  meta->type = CheckpointType::external;
  meta->name = name;
  meta->owner = model.owner;
  meta->base_model = model.base_model;
  meta->lora = model.lora_config;
  meta->created = now_ts();
  if (ttl_seconds) meta->expires_at = meta->created + std::chrono::seconds(*ttl_seconds);
  const std::string path = meta->tinker_path();
  if (find_checkpoint(path) != nullptr) {
    return finish_op(model, seq_id,
                     Failure{"checkpoint " + path + " already exists (external weights are not replaced)",
                             RequestErrorCategory::user});
  }
  auto work = [backend = backend, state = model.state, store = store, meta]() -> OpResult {
    const engine_detail::AdapterExport adapter = backend->export_adapters(*state);
    const std::string weights = write_safetensors(adapter.tensors);
    const std::string config = engine_detail::peft_adapter_config(*meta, adapter);
    meta->size_bytes = static_cast<std::int64_t>(weights.size() + config.size());
    store.write_file(*meta, peft_weights_file, weights);
    store.write_file(*meta, peft_config_file, config);
    store.write(*meta, backend->serialize(*state, false));  // meta.json last: the checkpoint is complete
    return engine_detail::JsonResult{};
  };
  compute(std::move(work), [this, &model, seq_id, meta, path](OpResult result) {
    if (!std::holds_alternative<Failure>(result)) {
      index_checkpoint(*meta);
      audit_event(model.owner, "checkpoint.save", model.id, path);
      SaveWeightsExternalResponse response(path);
      response.size_bytes = meta->size_bytes;
      result = engine_detail::JsonResult{to_json(response)};
    }
    finish_op(model, seq_id, std::move(result));
  });
}

UntypedAPIFuture Engine::save_weights_external(const SaveWeightsExternalRequest& request, const Principal& who) {
  Impl& impl = *impl_;
  if (request.age_encryption_recipients) {
    throw HttpError(400,
                    "age_encryption_recipients: tinker-local cannot encrypt exported weights; save without recipients");
  }
  if (request.ttl_seconds && (*request.ttl_seconds < min_external_ttl || *request.ttl_seconds > max_external_ttl)) {
    throw HttpError(400, "ttl_seconds: must be 3600..315360000 (one hour to ten years), got " +
                             std::to_string(*request.ttl_seconds));
  }
  ModelRecord& model = impl.model_for_submit(request.model_id, who);
  ModelRecord* target = &model;
  return impl.submit_ordered(model, request.seq_id, "save_weights_external", who.user_id,
                             [&impl, target, name = request.path, ttl = request.ttl_seconds](auto seq) {
                               impl.run_save_external(*target, seq, name, ttl);
                             });
}

ExternalWeightsLocation Engine::external_weights_urls(std::string_view run_id, std::string_view checkpoint_id,
                                                      const Principal& who) {
  Impl& impl = *impl_;
  if (!checkpoint_id.starts_with("external_weights/")) {
    throw HttpError(400, "checkpoint_id: expected external_weights/<name>, got " + std::string(checkpoint_id));
  }
  const std::string path = "tinker://" + std::string(run_id) + "/" + std::string(checkpoint_id);
  const CheckpointRecord* record = impl.find_checkpoint(path);
  if (record == nullptr || !impl.can_read(record->meta, who.user_id)) {
    throw HttpError(404, "checkpoint " + path + " not found");
  }
  ExternalWeightsLocation location;
  location.expires = impl.clock.now() + external_url_lifetime;
  for (const char* file : {peft_config_file, peft_weights_file}) {
    std::optional<std::string> bytes = impl.store.read_file_of(record->meta, file);
    if (!bytes) throw HttpError(500, "cannot read " + std::string(file) + " of " + path);
    std::string token = impl.ids.token();
    impl.downloads[token] =
        Download{"application/octet-stream", std::make_shared<const std::string>(std::move(*bytes)), location.expires};
    location.tokens[file] = std::move(token);
  }
  return location;
}

}  // namespace tinker::local
