// build_gguf_adapter against tiny synthetic Llama 3 and Qwen3 models (config.json and safetensors
// with the families' real weight names) and Tinker adapters, the output read back by Hugging Face's
// @huggingface/gguf: llama.cpp's metadata, tensor names, ggml shapes, types and values, Llama's
// rotary row order; and the refusals (unsupported family, tied unembedding, existing output).
#include "weights/gguf_export.hpp"
#include "weights/gguf_names.hpp"

#include "support/expect_error.hpp"
#include "support/temp_files.hpp"
#include "unit/weights/gguf_reference.hpp"
#include "unit/weights/safetensors_bytes.hpp"

#include <tinker/safetensors.hpp>
#include <tinker/weights.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

// A named namespace, not an anonymous one: unity builds compile several test files together.
namespace tinker::weights::detail::gguf_export_tests {

namespace fs = std::filesystem;
using test::TempDir;

constexpr std::int64_t rank = 2;
constexpr int layers = 2;
constexpr std::int64_t hidden = 8;
constexpr std::int64_t head_dim = 4;  // 2 query heads, 1 key-value head
constexpr std::int64_t kv_dim = 4;
constexpr std::int64_t intermediate = 12;
constexpr std::int64_t vocab = 16;

struct Module {
  std::string hf;  // after "model.layers.<n>."
  std::int64_t out;
  std::int64_t in;
};

const std::vector<Module>& layer_modules() {
  static const std::vector<Module> modules{
      {"self_attn.q_proj", hidden, hidden},    {"self_attn.k_proj", kv_dim, hidden},
      {"self_attn.v_proj", kv_dim, hidden},    {"self_attn.o_proj", hidden, hidden},
      {"mlp.gate_proj", intermediate, hidden}, {"mlp.up_proj", intermediate, hidden},
      {"mlp.down_proj", hidden, intermediate},
  };
  return modules;
}

// Multiples of 1/64 below 1 in magnitude: exact in f32, f16 and bf16, so every output type can be
// compared exactly.
std::vector<float> pattern(std::int64_t count, int seed) {
  std::vector<float> values(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<float>((static_cast<int>(i) + seed * 7) % 61 - 30) / 64.0F;
  }
  return values;
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

struct BaseSpec {
  std::string architecture = "LlamaForCausalLM";
  std::string model_type = "llama";
  bool qk_norms = false;  // Qwen3
  bool tied = false;      // no lm_head.weight
};

void write_base(const fs::path& dir, const BaseSpec& spec) {
  fs::create_directories(dir);
  write_text(dir / "config.json",
             R"({"architectures": [")" + spec.architecture + R"("], "model_type": ")" + spec.model_type +
                 R"(", "hidden_size": 8, "head_dim": 4, "intermediate_size": 12, "num_attention_heads": 2,)"
                 R"( "num_key_value_heads": 1, "num_hidden_layers": 2, "vocab_size": 16, "tie_word_embeddings": )" +
                 (spec.tied ? "true" : "false") + "}");
  std::vector<safetensors::OwnedTensor> tensors;
  const auto add = [&](const std::string& name, std::vector<std::int64_t> shape) {
    std::int64_t count = 1;
    for (const std::int64_t dim : shape) count *= dim;
    const std::vector<float> zeros(static_cast<std::size_t>(count));
    tensors.push_back(safetensors::make_tensor(name, std::move(shape), zeros, safetensors::Dtype::bf16));
  };
  add("model.embed_tokens.weight", {vocab, hidden});
  for (int layer = 0; layer < layers; ++layer) {
    const std::string prefix = "model.layers." + std::to_string(layer) + ".";
    for (const Module& module : layer_modules()) add(prefix + module.hf + ".weight", {module.out, module.in});
    add(prefix + "input_layernorm.weight", {hidden});
    add(prefix + "post_attention_layernorm.weight", {hidden});
    if (spec.qk_norms) {
      add(prefix + "self_attn.q_norm.weight", {head_dim});
      add(prefix + "self_attn.k_norm.weight", {head_dim});
    }
  }
  add("model.norm.weight", {hidden});
  if (!spec.tied) add("lm_head.weight", {vocab, hidden});
  safetensors::write_file(dir / "model.safetensors", tensors);
}

// A Tinker adapter: every layer module, and the unembedding when `unembed`; lora_A of module i holds
// pattern(., 2 i), lora_B pattern(., 2 i + 1), in the order of adapter_modules().
struct AdapterModule {
  std::string tinker;  // "model.layers.0.self_attn.q_proj" or "model.unembed_tokens"
  std::int64_t out;
  std::int64_t in;
};

std::vector<AdapterModule> adapter_modules(bool unembed) {
  std::vector<AdapterModule> modules;
  for (int layer = 0; layer < layers; ++layer) {
    for (const Module& module : layer_modules()) {
      modules.push_back({"model.layers." + std::to_string(layer) + "." + module.hf, module.out, module.in});
    }
  }
  if (unembed) modules.push_back({"model.unembed_tokens", vocab, hidden});
  return modules;
}

std::vector<float> lora_a_values(const AdapterModule& module, int index) {
  return pattern(rank * module.in, 2 * index);
}

std::vector<float> lora_b_values(const AdapterModule& module, int index) {
  return pattern(module.out * rank, 2 * index + 1);
}

void write_adapter(const fs::path& dir, bool unembed) {
  fs::create_directories(dir);
  write_text(dir / "adapter_config.json", R"({"r": 2, "lora_alpha": 16, "target_modules": ["q_proj"]})");
  std::vector<safetensors::OwnedTensor> tensors;
  const std::vector<AdapterModule> modules = adapter_modules(unembed);
  for (std::size_t i = 0; i < modules.size(); ++i) {
    const AdapterModule& module = modules[i];
    const std::string key = "base_model.model." + module.tinker;
    tensors.push_back(safetensors::make_tensor(key + ".lora_A.weight", {rank, module.in},
                                               lora_a_values(module, static_cast<int>(i))));
    tensors.push_back(safetensors::make_tensor(key + ".lora_B.weight", {module.out, rank},
                                               lora_b_values(module, static_cast<int>(i))));
  }
  safetensors::write_file(dir / "adapter_model.safetensors", tensors);
}

// The rows of a [rows, rank] matrix in the order `rows`.
std::vector<float> rows_in_order(const std::vector<float>& values, const std::vector<int>& rows) {
  std::vector<float> out;
  for (const int row : rows) {
    out.insert(out.end(), values.begin() + row * rank, values.begin() + (row + 1) * rank);
  }
  return out;
}

struct Exported {
  ExportSummary summary;
  boost::json::value reading;
};

class GgufExport : public ::testing::Test {
 protected:
  Exported export_with(const BaseSpec& spec, bool unembed, const std::string& out_type) {
    write_base(dir_ / "base", spec);
    write_adapter(dir_ / "adapter", unembed);
    GgufAdapterOptions options;
    options.adapter_dir = dir_ / "adapter";
    options.base_model_dir = dir_ / "base";
    options.output_file = output();
    options.out_type = out_type;
    options.base_model_name = "org/tiny";
    options.progress = [this](const ExportProgress& progress) { stages_.insert(std::string(progress.stage)); };
    Exported exported;
    exported.summary = build_gguf_adapter(options);
    exported.reading = test::read_gguf_with_reference(output());
    return exported;
  }

  fs::path output() const { return dir_ / "adapter.gguf"; }

  GgufAdapterOptions plain_options() const {
    GgufAdapterOptions options;
    options.adapter_dir = dir_ / "adapter";
    options.base_model_dir = dir_ / "base";
    options.output_file = output();
    return options;
  }

  void expect_refused(const BaseSpec& spec, bool unembed, std::string_view text) {
    write_base(dir_ / "base", spec);
    write_adapter(dir_ / "adapter", unembed);
    GgufAdapterOptions options = plain_options();
    test::expect_tinker_error(errc::invalid_argument, text, [&] { build_gguf_adapter(options); });
    EXPECT_FALSE(fs::exists(output()));
    EXPECT_EQ(std::distance(fs::directory_iterator(dir_.path()), fs::directory_iterator()), 2)
        << "nothing but the base and adapter directories";
  }

  TempDir dir_{"gguf-export"};
  std::set<std::string> stages_;
};

std::string metadata_string(const boost::json::value& reading, const char* key) {
  const boost::json::value& entry = reading.at("metadata").at(key);
  EXPECT_EQ(entry.at("type").to_number<int>(), 8) << key << " is a string";
  return std::string(entry.at("value").as_string());
}

std::set<std::string> tensor_names(const boost::json::value& reading) {
  std::set<std::string> names;
  for (const boost::json::value& tensor : reading.at("tensors").as_array()) {
    names.emplace(tensor.at("name").as_string());
  }
  return names;
}

// "<name>.lora_a" and "<name>.lora_b" of each name.
std::set<std::string> lora_names(const std::vector<std::string>& weights) {
  std::set<std::string> names;
  for (const std::string& weight : weights) {
    names.insert(weight + ".lora_a");
    names.insert(weight + ".lora_b");
  }
  return names;
}

const boost::json::object& tensor(const boost::json::value& reading, const std::string& name) {
  const boost::json::object* found = test::find_gguf_tensor(reading, name);
  if (found == nullptr) throw std::runtime_error("no tensor " + name + " in the GGUF file");
  return *found;
}

TEST_F(GgufExport, LlamaAdapterFollowsLlamaCppConventions) {
  const Exported exported = export_with(BaseSpec{}, true, "f32");
  const boost::json::value& reading = exported.reading;

  EXPECT_EQ(reading.at("version").to_number<int>(), 3);
  EXPECT_EQ(metadata_string(reading, "general.architecture"), "llama");
  EXPECT_EQ(metadata_string(reading, "general.type"), "adapter");
  EXPECT_EQ(metadata_string(reading, "adapter.type"), "lora");
  EXPECT_EQ(metadata_string(reading, "general.name"), "org/tiny LoRA");
  const boost::json::value& alpha = reading.at("metadata").at("adapter.lora.alpha");
  EXPECT_EQ(alpha.at("type").to_number<int>(), 6) << "float32";
  EXPECT_EQ(alpha.at("value").to_number<double>(), 16.0);

  EXPECT_EQ(tensor_names(reading),
            lora_names({"blk.0.attn_q.weight", "blk.0.attn_k.weight", "blk.0.attn_v.weight", "blk.0.attn_output.weight",
                        "blk.0.ffn_gate.weight", "blk.0.ffn_up.weight", "blk.0.ffn_down.weight", "blk.1.attn_q.weight",
                        "blk.1.attn_k.weight", "blk.1.attn_v.weight", "blk.1.attn_output.weight",
                        "blk.1.ffn_gate.weight", "blk.1.ffn_up.weight", "blk.1.ffn_down.weight", "output.weight"}));

  // ggml order: lora_a [in, r], lora_b [r, out]; llama.cpp checks these against the base's [in, out].
  EXPECT_EQ(test::json_ints(tensor(reading, "blk.0.attn_q.weight.lora_a").at("shape")),
            (std::vector<std::int64_t>{hidden, rank}));
  EXPECT_EQ(test::json_ints(tensor(reading, "blk.0.attn_k.weight.lora_b").at("shape")),
            (std::vector<std::int64_t>{rank, kv_dim}));
  EXPECT_EQ(test::json_ints(tensor(reading, "blk.1.ffn_down.weight.lora_a").at("shape")),
            (std::vector<std::int64_t>{intermediate, rank}));
  EXPECT_EQ(test::json_ints(tensor(reading, "blk.1.ffn_down.weight.lora_b").at("shape")),
            (std::vector<std::int64_t>{rank, hidden}));
  EXPECT_EQ(test::json_ints(tensor(reading, "output.weight.lora_b").at("shape")),
            (std::vector<std::int64_t>{rank, vocab}));
  for (const boost::json::value& info : reading.at("tensors").as_array()) {
    EXPECT_EQ(info.at("dtype").to_number<int>(), 0) << info.at("name").as_string() << " is F32";
  }

  const std::vector<AdapterModule> modules = adapter_modules(true);
  // Module 2 is layer 0's v_proj: copied as it is.
  EXPECT_EQ(test::json_floats(tensor(reading, "blk.0.attn_v.weight.lora_a").at("values")),
            lora_a_values(modules[2], 2));
  EXPECT_EQ(test::json_floats(tensor(reading, "blk.0.attn_v.weight.lora_b").at("values")),
            lora_b_values(modules[2], 2));
  // Module 7 is layer 1's q_proj: lora_A as it is; lora_B's rows reordered per head (2 heads of 4
  // rows: the rotary halves (0, 1 | 2, 3) interleaved to 0, 2, 1, 3).
  EXPECT_EQ(test::json_floats(tensor(reading, "blk.1.attn_q.weight.lora_a").at("values")),
            lora_a_values(modules[7], 7));
  EXPECT_EQ(test::json_floats(tensor(reading, "blk.1.attn_q.weight.lora_b").at("values")),
            rows_in_order(lora_b_values(modules[7], 7), {0, 2, 1, 3, 4, 6, 5, 7}));
  // Module 8 is layer 1's k_proj: one key-value head of 4 rows.
  EXPECT_EQ(test::json_floats(tensor(reading, "blk.1.attn_k.weight.lora_b").at("values")),
            rows_in_order(lora_b_values(modules[8], 8), {0, 2, 1, 3}));
  // Module 14 is the unembedding: lm_head -> output.
  EXPECT_EQ(test::json_floats(tensor(reading, "output.weight.lora_b").at("values")), lora_b_values(modules[14], 14));

  EXPECT_EQ(exported.summary.output, output());
  EXPECT_EQ(exported.summary.tensors_written, 30U);
  EXPECT_EQ(exported.summary.tensors_changed, 15U);
  EXPECT_EQ(exported.summary.bytes_written, fs::file_size(output()));
  EXPECT_GT(exported.summary.bytes_read, 0U);
  EXPECT_TRUE(stages_.count("writing")) << "progress was reported";
}

TEST_F(GgufExport, Qwen3AdapterInF16KeepsHuggingFaceRowOrder) {
  const Exported exported = export_with(BaseSpec{"Qwen3ForCausalLM", "qwen3", true, false}, true, "f16");
  const boost::json::value& reading = exported.reading;
  EXPECT_EQ(metadata_string(reading, "general.architecture"), "qwen3");
  EXPECT_EQ(reading.at("tensors").as_array().size(), 30U);
  for (const boost::json::value& info : reading.at("tensors").as_array()) {
    EXPECT_EQ(info.at("dtype").to_number<int>(), 1) << info.at("name").as_string() << " is F16";
  }
  const std::vector<AdapterModule> modules = adapter_modules(true);
  // Qwen's rotary embedding is the NEOX form in llama.cpp: no row permutation.
  EXPECT_EQ(test::json_floats(tensor(reading, "blk.0.attn_q.weight.lora_b").at("values")),
            lora_b_values(modules[0], 0));
  EXPECT_EQ(test::json_floats(tensor(reading, "blk.0.attn_k.weight.lora_b").at("values")),
            lora_b_values(modules[1], 1));
  EXPECT_EQ(test::json_floats(tensor(reading, "blk.1.ffn_up.weight.lora_a").at("values")),
            lora_a_values(modules[12], 12));
  EXPECT_EQ(test::json_ints(tensor(reading, "blk.1.ffn_up.weight.lora_b").at("shape")),
            (std::vector<std::int64_t>{rank, intermediate}));
}

TEST_F(GgufExport, Bf16OutputType) {
  const Exported exported = export_with(BaseSpec{"Qwen3ForCausalLM", "qwen3", true, false}, false, "bf16");
  const std::vector<AdapterModule> modules = adapter_modules(false);
  for (const boost::json::value& info : exported.reading.at("tensors").as_array()) {
    EXPECT_EQ(info.at("dtype").to_number<int>(), 30) << info.at("name").as_string() << " is BF16";
  }
  EXPECT_EQ(test::json_floats(tensor(exported.reading, "blk.0.attn_output.weight.lora_a").at("values")),
            lora_a_values(modules[3], 3));
  EXPECT_EQ(exported.summary.tensors_written, 28U);
}

TEST_F(GgufExport, TiedBaseWithoutUnembeddingAdapterExports) {
  const Exported exported = export_with(BaseSpec{"Qwen3ForCausalLM", "qwen3", true, true}, false, "f16");
  EXPECT_EQ(tensor_names(exported.reading).count("output.weight.lora_a"), 0U);
  EXPECT_EQ(exported.summary.tensors_changed, 14U);
}

TEST_F(GgufExport, RefusesAnUnembeddingAdapterOnATiedBase) {
  expect_refused(BaseSpec{"Qwen3ForCausalLM", "qwen3", true, true}, true, "ties to the token embeddings");
}

TEST_F(GgufExport, RefusesFamiliesLlamaCppHasNoDenseArchitectureFor) {
  expect_refused(BaseSpec{"Qwen3MoeForCausalLM", "qwen3_moe", true, false}, false,
                 "model_type 'qwen3_moe' (architecture Qwen3MoeForCausalLM) has no llama.cpp LoRA export; supported: "
                 "llama (Llama 3), qwen2 (Qwen2, Qwen2.5), qwen3 (dense Qwen3)");
}

TEST_F(GgufExport, RefusesAnExistingOutputAndABadOutType) {
  write_base(dir_ / "base", BaseSpec{});
  write_adapter(dir_ / "adapter", true);
  safetensors::test_files::write_bytes_file(output(), "mine");
  GgufAdapterOptions options = plain_options();
  test::expect_tinker_error(errc::invalid_argument, "already exists", [&] { build_gguf_adapter(options); });
  EXPECT_EQ(safetensors::test_files::read_bytes_file(output()), "mine");

  options.output_file = dir_ / "other.gguf";
  options.out_type = "q8_0";
  test::expect_tinker_error(errc::invalid_argument, "'q8_0' is not one of f32, f16, bf16",
                            [&] { build_gguf_adapter(options); });
  EXPECT_FALSE(fs::exists(options.output_file));
}

// plan_gguf_adapter on PEFT tensors built here, without the Tinker -> PEFT step.
ModelLayout llama_layout() {
  ModelLayout model;
  model.directory = "/models/llama";
  model.model_type = "llama";
  model.architectures = {"LlamaForCausalLM"};
  model.config_json = R"({"num_attention_heads": 4, "num_key_value_heads": 2})";
  model.tensors["model.layers.3.self_attn.k_proj.weight"] = {safetensors::Dtype::bf16, {8, 6}};
  model.tensors["model.layers.3.mlp.experts.0.up_proj.weight"] = {safetensors::Dtype::bf16, {4, 6}};
  return model;
}

std::shared_ptr<const FloatTensor> float_tensor(std::vector<std::int64_t> shape, int seed) {
  std::int64_t count = 1;
  for (const std::int64_t dim : shape) count *= dim;
  return std::make_shared<const FloatTensor>(FloatTensor{std::move(shape), pattern(count, seed)});
}

// The rows of layer 3's k_proj lora_B [8, 1] after planning with `kv_heads` key-value heads.
std::vector<float> planned_key_rows(const std::shared_ptr<const FloatTensor>& b, int kv_heads) {
  ModelLayout model = llama_layout();
  model.config_json = R"({"num_attention_heads": 4, "num_key_value_heads": )" + std::to_string(kv_heads) + "}";
  PeftAdapter peft;
  peft.lora_alpha = 8;
  peft.rank = 1;
  const auto a = float_tensor({1, 6}, 0);
  peft.tensors = {{"base_model.model.model.layers.3.self_attn.k_proj.lora_A.weight", a},
                  {"base_model.model.model.layers.3.self_attn.k_proj.lora_B.weight", b}};
  const GgufAdapterPlan plan = plan_gguf_adapter(peft, model);
  EXPECT_EQ(plan.architecture, "llama");
  EXPECT_EQ(plan.pairs.size(), 1U);
  EXPECT_EQ(plan.pairs.at(0).name, "blk.3.attn_k.weight");
  EXPECT_EQ(plan.pairs.at(0).a->values, a->values);
  return plan.pairs.at(0).b->values;
}

TEST(GgufPlan, PermutesKeyRowsPerKeyValueHead) {
  const auto b = float_tensor({8, 1}, 1);
  const std::vector<float>& rows = b->values;
  // One head of 8 rows: the rotary halves (0 1 2 3 | 4 5 6 7) interleaved, as llama.cpp's converter
  // does (reshape to [heads, 2, 4], swap the last two axes).
  EXPECT_EQ(planned_key_rows(b, 1),
            (std::vector<float>{rows[0], rows[4], rows[1], rows[5], rows[2], rows[6], rows[3], rows[7]}));
  // Two key-value heads of 4 rows each (not the 4 query heads, whose 2-row heads would change nothing).
  EXPECT_EQ(planned_key_rows(b, 2),
            (std::vector<float>{rows[0], rows[2], rows[1], rows[3], rows[4], rows[6], rows[5], rows[7]}));
}

TEST(GgufPlan, RefusesWhatLlamaCppCannotLoad) {
  const ModelLayout model = llama_layout();
  const auto plan_of = [&](std::vector<std::pair<std::string, std::shared_ptr<const FloatTensor>>> tensors) {
    PeftAdapter peft;
    peft.lora_alpha = 8;
    peft.rank = 1;
    peft.tensors = std::move(tensors);
    return plan_gguf_adapter(peft, model);
  };
  const std::string k = "base_model.model.model.layers.3.self_attn.k_proj";
  test::expect_tinker_error(errc::invalid_argument, "has no lora_B partner", [&] {
    plan_of({{k + ".lora_A.weight", float_tensor({1, 6}, 0)}});
  });
  test::expect_tinker_error(errc::invalid_argument, "do not fit base tensor", [&] {
    plan_of({{k + ".lora_A.weight", float_tensor({1, 5}, 0)}, {k + ".lora_B.weight", float_tensor({8, 1}, 1)}});
  });
  const std::string expert = "base_model.model.model.layers.3.mlp.experts.0.up_proj";
  test::expect_tinker_error(errc::invalid_argument, "has no tensor for 'model.layers.3.mlp.experts.0.up_proj.weight'",
                            [&] {
                              plan_of({{expert + ".lora_A.weight", float_tensor({1, 6}, 0)},
                                       {expert + ".lora_B.weight", float_tensor({4, 1}, 1)}});
                            });
  const std::string v = "base_model.model.model.layers.3.self_attn.v_proj";
  test::expect_tinker_error(errc::invalid_argument, "is not in /models/llama", [&] {
    plan_of({{v + ".lora_A.weight", float_tensor({1, 6}, 0)}, {v + ".lora_B.weight", float_tensor({8, 1}, 1)}});
  });
}

TEST(GgufNames, HuggingFaceToGgufTensorNames) {
  EXPECT_EQ(gguf_tensor_name("llama", "model.layers.0.self_attn.q_proj.weight"), "blk.0.attn_q.weight");
  EXPECT_EQ(gguf_tensor_name("llama", "model.layers.12.self_attn.k_proj.weight"), "blk.12.attn_k.weight");
  EXPECT_EQ(gguf_tensor_name("qwen2", "model.layers.1.self_attn.v_proj.bias"), "blk.1.attn_v.bias");
  EXPECT_EQ(gguf_tensor_name("qwen3", "model.layers.7.self_attn.o_proj.weight"), "blk.7.attn_output.weight");
  EXPECT_EQ(gguf_tensor_name("llama", "model.layers.2.mlp.gate_proj.weight"), "blk.2.ffn_gate.weight");
  EXPECT_EQ(gguf_tensor_name("llama", "model.layers.2.mlp.up_proj.weight"), "blk.2.ffn_up.weight");
  EXPECT_EQ(gguf_tensor_name("llama", "model.layers.2.mlp.down_proj.weight"), "blk.2.ffn_down.weight");
  EXPECT_EQ(gguf_tensor_name("llama", "model.layers.2.input_layernorm.weight"), "blk.2.attn_norm.weight");
  EXPECT_EQ(gguf_tensor_name("llama", "model.layers.2.post_attention_layernorm.weight"), "blk.2.ffn_norm.weight");
  EXPECT_EQ(gguf_tensor_name("qwen3", "model.layers.4.self_attn.q_norm.weight"), "blk.4.attn_q_norm.weight");
  EXPECT_EQ(gguf_tensor_name("qwen3", "model.layers.4.self_attn.k_norm.weight"), "blk.4.attn_k_norm.weight");
  EXPECT_EQ(gguf_tensor_name("llama", "model.embed_tokens.weight"), "token_embd.weight");
  EXPECT_EQ(gguf_tensor_name("qwen2", "model.norm.weight"), "output_norm.weight");
  EXPECT_EQ(gguf_tensor_name("qwen3", "lm_head.weight"), "output.weight");

  EXPECT_EQ(gguf_tensor_name("llama", "model.layers.4.self_attn.q_norm.weight"), std::nullopt) << "Qwen3 only";
  EXPECT_EQ(gguf_tensor_name("llama", "model.layers.01.mlp.up_proj.weight"), std::nullopt);
  EXPECT_EQ(gguf_tensor_name("llama", "model.layers.x.mlp.up_proj.weight"), std::nullopt);
  EXPECT_EQ(gguf_tensor_name("llama", "model.layers.0.mlp.up_proj"), std::nullopt);
  EXPECT_EQ(gguf_tensor_name("llama", "model.layers.0.mlp.experts.0.up_proj.weight"), std::nullopt);
  EXPECT_EQ(gguf_tensor_name("qwen3moe", "model.layers.0.mlp.up_proj.weight"), std::nullopt);
}

TEST(GgufNames, ArchitectureFromConfig) {
  const auto architecture = [](std::vector<std::string> architectures, std::string model_type) {
    ModelLayout model;
    model.architectures = std::move(architectures);
    model.model_type = std::move(model_type);
    return gguf_architecture_for(model);
  };
  EXPECT_EQ(architecture({"LlamaForCausalLM"}, "llama"), "llama");
  EXPECT_EQ(architecture({"Qwen2ForCausalLM"}, "qwen2"), "qwen2");
  EXPECT_EQ(architecture({"Qwen3ForCausalLM"}, "qwen3"), "qwen3");
  EXPECT_EQ(architecture({}, "qwen3"), "qwen3") << "model_type when no architecture is listed";
  EXPECT_EQ(architecture({"Qwen3MoeForCausalLM"}, "qwen3_moe"), "");
  EXPECT_EQ(architecture({"Qwen3VLForConditionalGeneration"}, "qwen3_vl"), "");
  EXPECT_EQ(architecture({"GptOssForCausalLM"}, "gpt_oss"), "");
  EXPECT_EQ(architecture({"DeepseekV3ForCausalLM"}, "deepseek_v3"), "");
  EXPECT_EQ(architecture({}, "qwen3_moe"), "");
}

}  // namespace tinker::weights::detail::gguf_export_tests
