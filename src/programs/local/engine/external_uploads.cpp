// External-weights uploads of tinker-local (doc/local.md#external-weights): start checks the base
// model and LoRA config and opens an upload of the two PEFT files, each PUT to its capability URL
// with the upload's token header; finish checks that both arrived and that they are a PEFT adapter
// fitting the base model and rank (names, shapes, the layers of the LoRA config, read by the same
// code as `tinker-local --adapter`), then registers an external checkpoint
// tinker://upload-<id>/external_weights/adapter. A failed check names the file and registers
// nothing; a repeated finish of a finished upload answers the same path.
#include "programs/local/engine/engine_impl.hpp"
#include "programs/local/model_dir/model_dir.hpp"

#include <algorithm>
#include <fstream>
#include <system_error>

namespace tinker::local {

using engine_detail::CheckpointMeta;
using engine_detail::ModelRecord;
using engine_detail::UploadRecord;

namespace {
constexpr std::chrono::hours upload_lifetime{1};
constexpr std::int64_t max_upload_rank = 1024;  // as create_model
constexpr const char* uploaded_checkpoint_name = "adapter";
const std::vector<std::string> upload_files{"adapter_config.json", "adapter_model.safetensors"};

// The caller's live upload, or HttpError 404.
UploadRecord& find_upload(std::map<std::string, UploadRecord>& uploads, std::string_view id,
                          std::chrono::system_clock::time_point now) {
  auto it = uploads.find(std::string(id));
  if (it == uploads.end() || it->second.expires <= now) {
    if (it != uploads.end()) uploads.erase(it);
    throw HttpError(404, "upload " + std::string(id) + " not found (unknown or expired)");
  }
  return it->second;
}

// Messages of the adapter reader name the scratch directory; the client knows only file names.
std::string without_directory(std::string message, const std::filesystem::path& dir) {
  const std::string prefix = dir.string() + "/";
  for (std::size_t at = message.find(prefix); at != std::string::npos; at = message.find(prefix)) {
    message.erase(at, prefix.size());
  }
  return message;
}

// A scratch directory holding the received files while they are checked; removed on every path.
class UploadScratch {
 public:
  UploadScratch(std::filesystem::path dir, const UploadRecord& upload) : dir_(std::move(dir)) {
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    for (const auto& [name, bytes] : upload.received) {
      std::ofstream out(dir_ / name, std::ios::binary | std::ios::trunc);
      out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      if (!out) throw HttpError(500, "cannot write the received " + name);
    }
  }
  ~UploadScratch() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  UploadScratch(const UploadScratch&) = delete;
  UploadScratch& operator=(const UploadScratch&) = delete;
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

// The layers the LoRA config trains must be the layers the adapter holds.
void check_layers(const model::LoraSettings& found, const LoraConfig& asked) {
  auto check = [](bool has, bool wanted, const char* field) {
    if (has == wanted) return;
    throw HttpError(400, std::string("adapter_model.safetensors: ") + (has ? "has" : "has no") + " adapters for " +
                             field + ", but the upload was started with lora_config." + field + " " +
                             (wanted ? "true" : "false"));
  };
  check(found.train_attn, asked.train_attn, "train_attn");
  check(found.train_mlp, asked.train_mlp, "train_mlp");
  check(found.train_unembed, asked.train_unembed, "train_unembed");
}
}  // namespace

ExternalUploadStart Engine::external_upload_start(const ExternalWeightsUploadStartRequest& request,
                                                  const Principal& who) {
  Impl& impl = *impl_;
  if (impl.find_base(request.base_model) == nullptr)
    throw HttpError(400, impl.unknown_model_message(request.base_model));
  const LoraConfig& lora = request.lora_config;
  if (lora.rank < 1 || lora.rank > max_upload_rank) {
    throw HttpError(400, "lora_config.rank: must be between 1 and " + std::to_string(max_upload_rank) + ", got " +
                             std::to_string(lora.rank));
  }
  if (!lora.train_mlp && !lora.train_attn && !lora.train_unembed) {
    throw HttpError(400, "lora_config: at least one of train_mlp, train_attn, train_unembed must be true");
  }
  const auto now = impl.clock.now();
  std::erase_if(impl.uploads, [now](const auto& entry) { return entry.second.expires <= now; });
  UploadRecord upload;
  upload.id = "upload-" + impl.ids.token();
  upload.owner = who.user_id;
  upload.secret = impl.ids.token();
  upload.base_model = request.base_model;
  upload.lora = lora;
  upload.expires = now + upload_lifetime;
  ExternalUploadStart start{upload.id, upload.secret, upload_files, upload.expires};
  impl.uploads[upload.id] = std::move(upload);
  return start;
}

void Engine::external_upload_put(std::string_view upload_id, std::string_view file, std::string_view token,
                                 std::string body) {
  Impl& impl = *impl_;
  UploadRecord& upload = find_upload(impl.uploads, upload_id, impl.clock.now());
  // The token is compared, never logged or echoed.
  if (token.empty() || token != upload.secret) {
    throw HttpError(403, "missing or wrong X-Tinker-Upload-Token for upload " + upload.id);
  }
  if (upload.finished_path) throw HttpError(409, "upload " + upload.id + " is already finished");
  if (std::find(upload_files.begin(), upload_files.end(), file) == upload_files.end()) {
    throw HttpError(404, "upload " + upload.id + " has no file " + std::string(file));
  }
  upload.received[std::string(file)] = std::move(body);
}

ExternalWeightsUploadFinishResponse Engine::external_upload_finish(const ExternalWeightsUploadFinishRequest& request,
                                                                   const Principal& who) {
  Impl& impl = *impl_;
  UploadRecord& upload = find_upload(impl.uploads, request.upload_id, impl.clock.now());
  if (upload.owner != who.user_id) throw HttpError(404, "upload " + request.upload_id + " not found");
  if (upload.finished_path) return ExternalWeightsUploadFinishResponse(*upload.finished_path);
  for (const std::string& file : upload_files) {
    if (upload.received.count(file) == 0) {
      throw HttpError(400, file + ": was not uploaded (PUT every file before finishing); nothing was registered");
    }
  }
  const CatalogueEntry* entry = impl.find_base(upload.base_model);
  if (entry == nullptr) throw HttpError(400, impl.unknown_model_message(upload.base_model));

  std::unique_ptr<engine_detail::ModelState> state;
  {
    const UploadScratch scratch(impl.data_dir / "uploads" / upload.id, upload);
    hf_dir::AdapterFiles adapter;
    try {
      adapter = hf_dir::read_peft_adapter(scratch.dir());
    } catch (const std::exception& e) {
      throw HttpError(400, without_directory(e.what(), scratch.dir()) + "; nothing was registered");
    }
    if (adapter.rank != upload.lora.rank) {
      throw HttpError(400, "adapter_config.json: r is " + std::to_string(adapter.rank) +
                               ", but the upload was started for rank " + std::to_string(upload.lora.rank) +
                               "; nothing was registered");
    }
    try {
      state = impl.backend->import_adapter(*entry, adapter.rank, adapter.tensors, adapter.lora_alpha);
    } catch (const UserError& e) {
      throw HttpError(400, "adapter_model.safetensors: " + std::string(e.what()) + " (base model " + entry->name +
                               "); nothing was registered");
    }
  }
  check_layers(state->settings(), upload.lora);

  CheckpointMeta meta;
  meta.run_id = upload.id;
  meta.type = CheckpointType::external;
  meta.name = uploaded_checkpoint_name;
  meta.owner = upload.owner;
  meta.base_model = upload.base_model;
  meta.lora = upload.lora;
  meta.created = impl.now_ts();
  for (const auto& [name, bytes] : upload.received) meta.size_bytes += static_cast<std::int64_t>(bytes.size());
  try {
    for (const auto& [name, bytes] : upload.received) impl.store.write_file(meta, name, bytes);
    impl.store.write(meta, impl.backend->serialize(*state, false));  // meta.json last
  } catch (const std::exception& e) {
    impl.store.remove(meta);
    throw HttpError(500, "cannot store the uploaded adapter: " + engine_detail::exception_message(e));
  }
  ModelRecord& run = impl.add_model(meta.run_id, nullptr, meta.owner, meta.base_model, meta.lora, std::nullopt);
  run.status = engine_detail::ModelStatus::detached;
  run.created = meta.created;
  run.last_request_time = meta.created;
  impl.index_checkpoint(meta);
  impl.audit_event(meta.owner, "checkpoint.upload", meta.run_id, meta.tinker_path());
  upload.finished_path = meta.tinker_path();
  upload.received.clear();
  return ExternalWeightsUploadFinishResponse(*upload.finished_path);
}

}  // namespace tinker::local
