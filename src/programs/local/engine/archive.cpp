// Checkpoint archives (doc/rest.md#checkpoint-downloads, doc/local.md#checkpoints): a flat tar with
// the PEFT adapter of a checkpoint, served unauthenticated at /_downloads/<token> for 15 minutes.
//
// The first options.archive_building_polls requests per checkpoint answer 503 (a simulated
// build). The tar is built once per checkpoint (on the io thread: adapters of the tiny model are
// a few hundred kilobytes) and its token reused while valid.
#include "programs/local/engine/engine_impl.hpp"

#include <boost/json.hpp>

namespace tinker::local {

using engine_detail::CheckpointRecord;

namespace {
constexpr std::chrono::minutes archive_url_lifetime{15};
}  // namespace

std::string engine_detail::peft_adapter_config(const CheckpointMeta& meta, const AdapterExport& adapter) {
  boost::json::array modules;
  for (const auto& name : adapter.target_modules) modules.emplace_back(name);
  boost::json::object config;
  config["base_model_name_or_path"] = meta.base_model;
  config["peft_type"] = "LORA";
  config["task_type"] = "CAUSAL_LM";
  config["r"] = meta.lora.rank;
  // Integral in practice (the model's alpha); Boost.JSON writes integers exactly.
  config["lora_alpha"] = static_cast<std::int64_t>(adapter.lora_alpha);
  config["lora_dropout"] = 0;
  config["bias"] = "none";
  config["inference_mode"] = true;
  config["target_modules"] = std::move(modules);
  return boost::json::serialize(config);
}

ArchiveLocation Engine::checkpoint_archive(std::string_view run_id, std::string_view checkpoint_id,
                                           const Principal& who) {
  Impl& impl = *impl_;
  if (!checkpoint_id.starts_with("weights/") && !checkpoint_id.starts_with("sampler_weights/")) {
    throw HttpError(
        400, "checkpoint_id: expected weights/<name> or sampler_weights/<name>, got " + std::string(checkpoint_id));
  }
  std::string path = "tinker://" + std::string(run_id) + "/" + std::string(checkpoint_id);
  CheckpointRecord* record = impl.find_checkpoint(path);
  if (record == nullptr || !impl.can_read(record->meta, who.user_id)) {
    throw HttpError(404, "checkpoint " + path + " not found");
  }
  if (record->archive_requests < impl.options.archive_building_polls) {
    ++record->archive_requests;
    throw HttpError(503, "the archive of " + path + " is being built; retry later");
  }
  auto now = impl.clock.now();
  if (record->archive_token) {
    auto it = impl.downloads.find(*record->archive_token);
    if (it != impl.downloads.end() && it->second.expires > now) {
      return ArchiveLocation{*record->archive_token, it->second.expires};
    }
  }

  const auto& meta = record->meta;
  const CatalogueEntry* entry = impl.find_base(meta.base_model);
  if (entry == nullptr) throw HttpError(404, "base model " + meta.base_model + " is not in the catalogue");
  engine_detail::AdapterExport adapter;
  try {
    std::string bytes = impl.store.read_state(meta);
    auto state = impl.backend->deserialize(*entry, bytes, false);
    adapter = impl.backend->export_adapters(*state);
  } catch (const UserError& e) {
    throw HttpError(404, e.what());
  } catch (const std::exception& e) {
    throw HttpError(500, "cannot read " + path + ": " + engine_detail::exception_message(e));
  }
  std::vector<TarEntry> files;
  files.push_back(TarEntry{"adapter_config.json", engine_detail::peft_adapter_config(meta, adapter)});
  files.push_back(TarEntry{"adapter_model.safetensors", write_safetensors(adapter.tensors)});
  files.push_back(TarEntry{"checkpoint_complete", std::string()});
  std::string token = impl.ids.token() + ".tar";
  Download file{"application/x-tar", std::make_shared<const std::string>(write_tar(files)), now + archive_url_lifetime};
  impl.downloads[token] = std::move(file);
  record->archive_token = token;
  return ArchiveLocation{token, now + archive_url_lifetime};
}

void Engine::replace_checkpoint_archive(std::string_view tinker_path, std::string tar) {
  Impl& impl = *impl_;
  CheckpointRecord* record = impl.find_checkpoint(std::string(tinker_path));
  if (record == nullptr) throw HttpError(404, "checkpoint " + std::string(tinker_path) + " not found");
  const auto expires = impl.clock.now() + archive_url_lifetime;
  std::string token = impl.ids.token() + ".tar";
  impl.downloads[token] = Download{"application/x-tar", std::make_shared<const std::string>(std::move(tar)), expires};
  record->archive_token = std::move(token);
}

}  // namespace tinker::local
