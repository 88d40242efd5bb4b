// ServerOptions::adapters (`tinker-local --adapter`, doc/local.md#model-directories): PEFT adapter
// directories served as sampler checkpoints tinker://local-imports/sampler_weights/<name>.
//
// Choice: an import is written into the checkpoint store like a saved checkpoint (public, owned by
// no user) before the store is scanned, so everything that reads checkpoints (sampling by
// model_path, load_weights, weights_info, archives) serves it with no path of its own. The run is
// rewritten at every start (a kept data directory's earlier imports are removed first), so the
// adapters given now are exactly what is served.
#include "programs/local/engine/engine_impl.hpp"
#include "programs/local/model_dir/model_dir.hpp"

#include <set>

namespace tinker::local {
namespace {
constexpr const char* imports_run_id = "local-imports";
// Not a user id any API key maps to (those are "tml:organization_user:<hex>"): nobody owns them.
constexpr const char* imports_owner = "local-imports";
}  // namespace

void Engine::Impl::import_adapters() {
  CheckpointMeta run;
  run.run_id = imports_run_id;
  run.name = "x";
  std::error_code ignored;
  std::filesystem::remove_all(store.directory(run).parent_path().parent_path(), ignored);
  std::set<std::string> names;
  for (const AdapterImport& import : options.adapters) {
    const std::string label = "adapter " + import.name + " (" + import.directory.string() + ")";
    if (!engine_detail::valid_checkpoint_name(import.name)) {
      throw error(errc::invalid_configuration,
                  label + ": invalid name (use 1-128 characters from A-Z a-z 0-9 . _ -, not . or ..)");
    }
    if (!names.insert(import.name).second) throw error(errc::invalid_configuration, label + ": name given twice");
    const CatalogueEntry* entry = find_base(import.base_model);
    if (entry == nullptr)
      throw error(errc::invalid_configuration, label + ": " + unknown_model_message(import.base_model));

    hf_dir::AdapterFiles files = hf_dir::read_peft_adapter(import.directory);
    std::unique_ptr<engine_detail::ModelState> state;
    try {
      state = backend->import_adapter(*entry, files.rank, files.tensors, files.lora_alpha);
    } catch (const UserError& e) {
      throw error(errc::invalid_argument,
                  files.weights_file.string() + ": " + e.what() + " (base model " + entry->name + ")");
    }
    const model::LoraSettings settings = state->settings();
    CheckpointMeta meta;
    meta.run_id = imports_run_id;
    meta.type = CheckpointType::sampler;
    meta.name = import.name;
    meta.owner = imports_owner;
    meta.base_model = entry->name;
    meta.lora = LoraConfig(settings.rank);
    meta.lora.train_attn = settings.train_attn;
    meta.lora.train_mlp = settings.train_mlp;
    meta.lora.train_unembed = settings.train_unembed;
    meta.created = now_ts();
    meta.is_public = true;
    const std::string bytes = backend->serialize(*state, false);
    meta.size_bytes = static_cast<std::int64_t>(bytes.size());
    try {
      store.write(meta, bytes);
    } catch (const std::exception& e) {
      throw error(errc::io_error, label + ": " + e.what());
    }
  }
}

}  // namespace tinker::local
