// tinker-local's base models as Hugging Face directories: export_model writes one, model_dir_entry
// and load_base_model read one back (doc/local.md#model-directories).
//
// Choices:
// - config.json says "model_type": "tinker_local_tiny" (no library has this architecture; the
//   exporters only need the weight names, which follow Llama/Qwen's) with the usual size keys, and
//   "tinker_local_tokenizer": the kind of tokenizer the model runs over. tinker-local serves a
//   loaded directory over its own tokenizer of that kind (built deterministically from its corpus,
//   so the same on every machine); the tokenizer files in the directory are for other stacks.
//   A merged model inherits config.json unchanged, and with it the tokenizer.
// - Loading is strict: every weight present with its shape and finite values, nothing else. A
//   directory that is not exactly this model is a mistake worth an error naming file and tensor.
#include "programs/local/model_dir/model_dir.hpp"
#include "core/files.hpp"

#include "programs/local/tokenizer/tokenizer_store.hpp"

#include <tinker/error.hpp>
#include <tinker/local/model_dir.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tinker::local {
namespace hf_dir {
namespace fs = std::filesystem;
namespace {

constexpr const char* config_file_name = "config.json";
constexpr const char* weights_file_name = "model.safetensors";
constexpr const char* index_file_name = "model.safetensors.index.json";
constexpr const char* tokenizer_key = "tinker_local_tokenizer";

std::string_view tokenizer_kind_name(TinyTokenizer kind) noexcept {
  switch (kind) {
    case TinyTokenizer::sentencepiece: return "sentencepiece";
    case TinyTokenizer::byte_level_bpe_vl: return "byte_level_bpe_vl";
    case TinyTokenizer::byte_level_bpe: break;
  }
  return "byte_level_bpe";
}

std::string_view torch_dtype_name(safetensors::Dtype dtype) noexcept {
  switch (dtype) {
    case safetensors::Dtype::bf16: return "bfloat16";
    case safetensors::Dtype::f16: return "float16";
    default: break;
  }
  return "float32";
}

void write_whole_file(const fs::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw error(errc::io_error, path.string() + ": cannot be created: " + std::strerror(errno));
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw error(errc::io_error, path.string() + ": write failed: " + std::strerror(errno));
}

// config.json's facts about the model.
struct ModelConfig {
  model::Architecture arch;
  TinyTokenizer tokenizer = TinyTokenizer::byte_level_bpe;
};

class ConfigReader {
 public:
  explicit ConfigReader(const fs::path& dir) : path_(dir / config_file_name) {
    boost::system::error_code ec;
    boost::json::value value = boost::json::parse(tinker::detail::read_whole_file(path_), ec);
    if (ec || !value.is_object()) fail("", "not a JSON object" + (ec ? " (" + ec.message() + ")" : std::string()));
    object_ = std::move(value.as_object());
  }

  [[noreturn]] void fail(std::string_view key, const std::string& problem) const {
    std::string where = path_.string();
    if (!key.empty()) where += ": key '" + std::string(key) + "'";
    throw error(errc::invalid_file, where + ": " + problem);
  }

  const boost::json::value* find(std::string_view key) const { return object_.if_contains(key); }

  int integer(std::string_view key, std::int64_t min_value, std::int64_t max_value) const {
    const boost::json::value* value = find(key);
    if (value == nullptr) fail(key, "missing");
    if (!value->is_int64() || value->as_int64() < min_value || value->as_int64() > max_value) {
      fail(key, "expected an integer in [" + std::to_string(min_value) + ", " + std::to_string(max_value) + "], got " +
                    boost::json::serialize(*value));
    }
    return static_cast<int>(value->as_int64());
  }

  std::string text(std::string_view key) const {
    const boost::json::value* value = find(key);
    if (value == nullptr) fail(key, "missing");
    if (!value->is_string()) fail(key, "expected a string, got " + boost::json::serialize(*value));
    return std::string(value->as_string());
  }

  bool flag(std::string_view key, bool absent) const {
    const boost::json::value* value = find(key);
    if (value == nullptr) return absent;
    if (!value->is_bool()) fail(key, "expected true or false, got " + boost::json::serialize(*value));
    return value->as_bool();
  }

 private:
  fs::path path_;
  boost::json::object object_;
};

ModelConfig read_model_config(const fs::path& dir) {
  const ConfigReader config(dir);
  if (const std::string type = config.text("model_type"); type != model_type) {
    config.fail("model_type", "\"" + type + "\" is not tinker-local's model (\"" + std::string(model_type) + "\")");
  }
  ModelConfig result;
  result.arch.vocab_size = config.integer("vocab_size", 2, 1 << 24);
  result.arch.d_model = config.integer("hidden_size", 2, 1 << 16);
  result.arch.d_mlp = config.integer("intermediate_size", 1, 1 << 20);
  result.arch.max_context = config.integer("max_position_embeddings", 1, INT_MAX);
  config.integer("num_hidden_layers", 1, 1);  // the architecture has one layer
  if (config.flag("tie_word_embeddings", false)) config.fail("tie_word_embeddings", "must be false");
  result.arch.vision = config.flag("vision", false);
  const std::string kind = config.text(tokenizer_key);
  const auto known = std::find_if(all_tiny_tokenizers.begin(), all_tiny_tokenizers.end(),
                                  [&](TinyTokenizer k) { return tokenizer_kind_name(k) == kind; });
  if (known == all_tiny_tokenizers.end()) {
    config.fail(tokenizer_key, "\"" + kind + "\" is not byte_level_bpe, sentencepiece or byte_level_bpe_vl");
  }
  result.tokenizer = *known;
  return result;
}

std::string config_json(const CatalogueEntry& entry, const model::Architecture& arch, safetensors::Dtype dtype,
                        const std::string& tokenizer_id) {
  boost::json::object config;
  config["architectures"] = boost::json::array{"TinkerLocalTinyForCausalLM"};
  config["model_type"] = model_type;
  config["vocab_size"] = arch.vocab_size;
  config["hidden_size"] = arch.d_model;
  config["intermediate_size"] = arch.d_mlp;
  config["num_hidden_layers"] = 1;
  config["num_attention_heads"] = 1;
  config["num_key_value_heads"] = 1;
  config["head_dim"] = arch.d_model;
  config["hidden_act"] = "tanh";
  config["position_embedding_type"] = "sinusoidal";
  config["max_position_embeddings"] = arch.max_context;
  config["tie_word_embeddings"] = false;
  config["torch_dtype"] = torch_dtype_name(dtype);
  config["vision"] = arch.vision;
  config[tokenizer_key] = tokenizer_kind_name(entry.tokenizer);
  config["tinker_local_tokenizer_id"] = tokenizer_id;
  config["tinker_local_base_model"] = entry.name;
  return boost::json::serialize(config) + "\n";
}

// The file a missing tensor should have been in: the index of a sharded model, else its file.
fs::path weights_file_of(const safetensors::SafetensorsModel& weights) {
  if (weights.has_index()) return weights.directory() / index_file_name;
  if (weights.shards().size() == 1) return weights.shards().front().path();
  return weights.directory();
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i == 0 ? "" : ", ") + std::to_string(shape[i]);
  return text + "]";
}

model::NamedTensor read_weight(const safetensors::SafetensorsModel& weights, const model::WeightSpec& spec) {
  const safetensors::SafetensorsModel::Location where = weights.find(spec.name);
  if (where.file == nullptr) {
    throw error(errc::invalid_file, weights_file_of(weights).string() + ": tensor '" + spec.name + "' is missing");
  }
  const std::string label = where.file->path().string() + ": tensor '" + spec.name + "'";
  if (where.tensor->shape != spec.shape) {
    throw error(errc::invalid_file,
                label + ": shape " + shape_text(where.tensor->shape) + ", expected " + shape_text(spec.shape));
  }
  if (!safetensors::is_float(where.tensor->dtype)) {
    throw error(errc::invalid_file, label + ": dtype " + std::string(safetensors::to_string(where.tensor->dtype)) +
                                        ", expected F32, BF16 or F16");
  }
  model::NamedTensor tensor{spec.name, spec.shape, where.file->read_f32(*where.tensor)};
  if (!std::all_of(tensor.values.begin(), tensor.values.end(), [](float v) { return std::isfinite(v); })) {
    throw error(errc::invalid_file, label + ": holds a value that is not finite");
  }
  return tensor;
}

model::Architecture architecture_of(const CatalogueEntry& entry, int vocab_size) {
  model::Architecture arch;
  arch.vocab_size = vocab_size;
  arch.d_model = entry.d_model;
  arch.d_mlp = entry.d_mlp;
  arch.max_context = static_cast<int>(std::clamp<std::int64_t>(entry.max_context_length, 1, INT_MAX));
  arch.vision = entry.vision;
  return arch;
}

}  // namespace

std::shared_ptr<const model::BaseModel> load_base_model(const CatalogueEntry& entry, int tokenizer_vocab) {
  const fs::path& dir = entry.model_dir;
  const ModelConfig config = read_model_config(dir);
  if (config.arch.vocab_size != tokenizer_vocab) {
    throw error(errc::invalid_file, (dir / config_file_name).string() +
                                        ": key 'vocab_size': " + std::to_string(config.arch.vocab_size) +
                                        ", but its tokenizer (" + std::string(tokenizer_kind_name(config.tokenizer)) +
                                        ") has " + std::to_string(tokenizer_vocab) + " ids");
  }
  model::Architecture arch = config.arch;
  arch.max_context = static_cast<int>(std::clamp<std::int64_t>(entry.max_context_length, 1, INT_MAX));
  const safetensors::SafetensorsModel weights = safetensors::SafetensorsModel::open(dir);
  const std::vector<model::WeightSpec> specs = model::BaseModel::weight_specs(arch);
  for (const std::string& name : weights.tensor_names()) {
    if (std::none_of(specs.begin(), specs.end(), [&](const model::WeightSpec& s) { return s.name == name; })) {
      throw error(errc::invalid_file, weights.find(name).file->path().string() + ": tensor '" + name +
                                          "' is not a weight of tinker-local's model");
    }
  }
  std::vector<model::NamedTensor> tensors;
  for (const model::WeightSpec& spec : specs) tensors.push_back(read_weight(weights, spec));
  return std::make_shared<const model::BaseModel>(entry.name, arch, tensors);
}

}  // namespace hf_dir

CatalogueEntry model_dir_entry(std::string name, const std::filesystem::path& dir) {
  const hf_dir::ModelConfig config = hf_dir::read_model_config(dir);
  CatalogueEntry entry(std::move(name), config.arch.max_context, config.tokenizer);
  entry.d_model = config.arch.d_model;
  entry.d_mlp = config.arch.d_mlp;
  entry.vision = config.arch.vision;
  entry.model_dir = dir;
  return entry;
}

void export_model(const ServerOptions& options, std::string_view model, const std::filesystem::path& output_dir,
                  safetensors::Dtype dtype) {
  namespace fs = std::filesystem;
  const auto entry = std::find_if(options.catalogue.begin(), options.catalogue.end(),
                                  [&](const CatalogueEntry& e) { return e.name == model; });
  if (entry == options.catalogue.end()) {
    throw error(errc::invalid_argument, "export_model: the catalogue has no base model \"" + std::string(model) + "\"");
  }
  if (dtype != safetensors::Dtype::f32 && dtype != safetensors::Dtype::bf16 && dtype != safetensors::Dtype::f16) {
    throw error(errc::invalid_argument,
                "export_model: dtype " + std::string(safetensors::to_string(dtype)) + " is not one of F32, BF16, F16");
  }
  safetensors::StagedDirectory staged(output_dir);  // refuses an existing output before any work
  const fs::path hub = options.hf_hub_cache.empty() ? default_hf_hub_cache() : options.hf_hub_cache;
  const std::string& tokenizer_id = tokenizer_id_of(options, entry->tokenizer);
  const std::shared_ptr<const LocalTokenizer> tokenizer = ensure_tiny_tokenizer(hub, entry->tokenizer, tokenizer_id);
  std::shared_ptr<const model::BaseModel> base =
      entry->model_dir.empty() ? std::make_shared<const model::BaseModel>(
                                     entry->name, hf_dir::architecture_of(*entry, tokenizer->vocab_size()))
                               : hf_dir::load_base_model(*entry, tokenizer->vocab_size());

  std::vector<safetensors::OwnedTensor> tensors;
  for (const model::NamedTensor& weight : base->export_weights()) {
    tensors.push_back(safetensors::make_tensor(weight.name, weight.shape, weight.values, dtype));
  }
  const fs::path& out = staged.staging_path();
  safetensors::write_file(out / hf_dir::weights_file_name, tensors, {{"format", "pt"}});
  hf_dir::write_whole_file(out / hf_dir::config_file_name,
                           hf_dir::config_json(*entry, base->arch(), dtype, tokenizer_id));
  // The tokenizer's files as the cache holds them (tokenizer.json or tokenizer.model, its config),
  // so the directory is a complete Hugging Face model.
  const fs::path snapshot = tokenizer->model_file().parent_path();
  std::error_code ec;
  for (const fs::directory_entry& file : fs::directory_iterator(snapshot, ec)) {
    if (!file.is_regular_file()) continue;
    fs::copy_file(file.path(), out / file.path().filename(), ec);
    if (ec) break;
  }
  if (ec) throw error(errc::io_error, snapshot.string() + ": copying the tokenizer files failed: " + ec.message());
  staged.commit();
}

}  // namespace tinker::local
