// build_merged_model end to end (src/weights/merge_engine.cpp, merge_stream.cpp) on a tiny
// Llama-shaped model in two shards with an index, tokenizer files and a config: adapted tensors
// equal bf16/f16/f32(W + scale B A) rounded by the library's encoder, bit for bit; every other
// tensor byte-identical; every other file identical; the same bytes with 1 or 2 threads and any
// chunk size; and no output at all when anything fails.
//
// The values are dyadic (base k/8, LoRA factors j/16, scale 2), so W + scale B A is exact in f32
// and in double whatever the order of the sums: the expected bits need no tolerance.
#include "weights/merge_engine.hpp"
#include "support/expect_error.hpp"
#include "support/temp_files.hpp"

#include <tinker/safetensors.hpp>
#include <tinker/weights.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <random>
#include <set>

namespace tinker::weights::detail {
namespace merge_engine_test {

using test::expect_tinker_error;
using test::read_file;
namespace fs = std::filesystem;
namespace st = tinker::safetensors;

constexpr std::int64_t hidden = 16;
constexpr std::int64_t kv = 8;
constexpr std::int64_t intermediate = 24;
constexpr std::int64_t vocab = 32;
constexpr std::int64_t rank = 2;
constexpr float scale = 2.0F;  // lora_alpha 4 / r 2

struct Tensor {
  std::string name;
  std::vector<std::int64_t> shape;
  std::vector<float> values;
};

std::vector<float> dyadic_values(std::int64_t count, int denominator, int range, std::mt19937& random) {
  std::uniform_int_distribution<int> pick(-range, range);
  std::vector<float> values(static_cast<std::size_t>(count));
  for (auto& value : values) value = static_cast<float>(pick(random)) / static_cast<float>(denominator);
  return values;
}

Tensor base_tensor(std::string name, std::vector<std::int64_t> shape, std::mt19937& random) {
  std::int64_t count = 1;
  for (const auto dim : shape) count *= dim;
  return {std::move(name), std::move(shape), dyadic_values(count, 8, 120, random)};
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

struct LoraModule {
  std::string base_name;  // the base tensor it adapts
  std::string adapter_name;
  std::vector<float> a;  // [rank, in]
  std::vector<float> b;  // [out, rank]
};

// A Llama-shaped base of two layers in two shards, and a rank-2 adapter on q, v, down and the
// unembedding (lm_head).
class TinyModel {
 public:
  explicit TinyModel(st::Dtype dtype, std::uint32_t seed = 1) : dtype_(dtype), random_(seed) {
    shards_.resize(2);
    shards_[0].push_back(base_tensor("model.embed_tokens.weight", {vocab, hidden}, random_));
    add_layer(0, shards_[0]);
    add_layer(1, shards_[1]);
    shards_[1].push_back(base_tensor("model.norm.weight", {hidden}, random_));
    shards_[1].push_back(base_tensor("lm_head.weight", {vocab, hidden}, random_));
    for (const auto* module :
         {"model.layers.0.self_attn.q_proj", "model.layers.0.self_attn.v_proj", "model.layers.0.mlp.down_proj",
          "model.layers.1.self_attn.q_proj", "model.layers.1.mlp.down_proj"}) {
      add_module(std::string(module) + ".weight", "base_model.model." + std::string(module));
    }
    add_module("lm_head.weight", "base_model.model.model.unembed_tokens");
  }

  void write(const fs::path& base_dir, const fs::path& adapter_dir) const {
    fs::create_directories(base_dir);
    std::map<std::string, std::string> weight_map;
    std::uint64_t total = 0;
    for (std::size_t s = 0; s < shards_.size(); ++s) {
      const std::string file = shard_name(s);
      std::vector<st::OwnedTensor> owned;
      for (const auto& tensor : shards_[s]) {
        owned.push_back(st::make_tensor(tensor.name, tensor.shape, tensor.values, dtype_));
        weight_map[tensor.name] = file;
        total += owned.back().bytes.size();
      }
      st::write_file(base_dir / file, owned, {{"format", "pt"}});
    }
    write_text(base_dir / "model.safetensors.index.json", st::make_index_json(total, weight_map));
    write_text(base_dir / "config.json",
               R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 16,
                   "num_hidden_layers": 2, "vocab_size": 32, "tie_word_embeddings": false})");
    write_text(base_dir / "generation_config.json", R"({"bos_token_id": 1, "eos_token_id": 2})");
    // As in a Hugging Face cache snapshot: a link to a blob elsewhere, copied as the file it names.
    fs::create_directories(base_dir.parent_path() / "blobs");
    write_text(base_dir.parent_path() / "blobs" / "tokenizer", R"({"version": "1.0", "model": {"type": "BPE"}})");
    fs::create_symlink(base_dir.parent_path() / "blobs" / "tokenizer", base_dir / "tokenizer.json");
    write_text(base_dir / "tokenizer_config.json", R"({"model_max_length": 8})");
    write_text(base_dir / "chat_template.jinja", "{{ messages }}");
    write_text(base_dir / ".gitattributes", "*.safetensors filter=lfs\n");
    // Left out of a merge: the unmerged weights in other forms, and subdirectories.
    write_text(base_dir / "pytorch_model.bin", "unmerged weights");
    write_text(base_dir / "pytorch_model.bin.index.json", "{}");
    fs::create_directories(base_dir / "original");
    write_text(base_dir / "original" / "consolidated.00.pth", "unmerged weights");

    fs::create_directories(adapter_dir);
    std::vector<st::OwnedTensor> adapter;
    for (const auto& module : modules_) {
      const auto in = static_cast<std::int64_t>(module.a.size()) / rank;
      const auto out = static_cast<std::int64_t>(module.b.size()) / rank;
      adapter.push_back(st::make_tensor(module.adapter_name + ".lora_A.weight", {rank, in}, module.a));
      adapter.push_back(st::make_tensor(module.adapter_name + ".lora_B.weight", {out, rank}, module.b));
    }
    st::write_file(adapter_dir / "adapter_model.safetensors", adapter);
    write_text(adapter_dir / "adapter_config.json", R"({"lora_alpha": 4, "r": 2, "peft_type": "LORA"})");
  }

  static std::string shard_name(std::size_t shard) {
    return "model-0000" + std::to_string(shard + 1) + "-of-00002.safetensors";
  }
  const std::vector<std::vector<Tensor>>& shards() const { return shards_; }
  const LoraModule* module_for(const std::string& base_name) const {
    for (const auto& module : modules_) {
      if (module.base_name == base_name) return &module;
    }
    return nullptr;
  }

  // The expected bytes of a tensor: W + scale B A in double (exact here), encoded to the dtype.
  std::vector<std::byte> expected_bytes(const Tensor& tensor) const {
    std::vector<float> values = tensor.values;
    if (const LoraModule* module = module_for(tensor.name)) {
      const std::int64_t out = tensor.shape[0], in = tensor.shape[1];
      for (std::int64_t o = 0; o < out; ++o) {
        for (std::int64_t i = 0; i < in; ++i) {
          double delta = 0;
          for (std::int64_t k = 0; k < rank; ++k) {
            delta += scale * static_cast<double>(module->b[static_cast<std::size_t>(o * rank + k)]) *
                     module->a[static_cast<std::size_t>(k * in + i)];
          }
          auto& value = values[static_cast<std::size_t>(o * in + i)];
          value = static_cast<float>(static_cast<double>(value) + delta);
        }
      }
    }
    std::vector<std::byte> bytes(values.size() * st::dtype_size(dtype_));
    st::from_f32(dtype_, values, bytes);
    return bytes;
  }

 private:
  void add_layer(int layer, std::vector<Tensor>& into) {
    const std::string prefix = "model.layers." + std::to_string(layer) + ".";
    // Not in name order: the output must keep the base's order, whatever it is.
    into.push_back(base_tensor(prefix + "self_attn.q_proj.weight", {hidden, hidden}, random_));
    into.push_back(base_tensor(prefix + "self_attn.k_proj.weight", {kv, hidden}, random_));
    into.push_back(base_tensor(prefix + "self_attn.v_proj.weight", {kv, hidden}, random_));
    into.push_back(base_tensor(prefix + "self_attn.o_proj.weight", {hidden, hidden}, random_));
    into.push_back(base_tensor(prefix + "mlp.gate_proj.weight", {intermediate, hidden}, random_));
    into.push_back(base_tensor(prefix + "mlp.up_proj.weight", {intermediate, hidden}, random_));
    into.push_back(base_tensor(prefix + "mlp.down_proj.weight", {hidden, intermediate}, random_));
    into.push_back(base_tensor(prefix + "input_layernorm.weight", {hidden}, random_));
    into.push_back(base_tensor(prefix + "post_attention_layernorm.weight", {hidden}, random_));
  }

  void add_module(const std::string& base_name, const std::string& adapter_name) {
    const Tensor* target = nullptr;
    for (const auto& shard : shards_) {
      for (const auto& tensor : shard) {
        if (tensor.name == base_name) target = &tensor;
      }
    }
    ASSERT_NE(target, nullptr) << base_name;
    modules_.push_back({base_name, adapter_name, dyadic_values(rank * target->shape[1], 16, 16, random_),
                        dyadic_values(target->shape[0] * rank, 16, 16, random_)});
  }

  st::Dtype dtype_;
  std::mt19937 random_;
  std::vector<std::vector<Tensor>> shards_;
  std::vector<LoraModule> modules_;
};

class MergeEngine : public ::testing::Test {
 protected:
  fs::path base() const { return dir_ / "base"; }
  fs::path adapter() const { return dir_ / "adapter"; }
  fs::path out(const std::string& name = "merged") const { return dir_ / name; }

  MergedModelOptions options(const std::string& name = "merged", unsigned threads = 2) const {
    MergedModelOptions merge;
    merge.adapter_dir = adapter();
    merge.base_model_dir = base();
    merge.output_dir = out(name);
    merge.threads = threads;
    return merge;
  }

  // What is in the test directory besides the base and the adapter: an output, or its leftovers.
  std::vector<std::string> outputs() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_.path())) {
      const auto name = entry.path().filename().string();
      if (name != "base" && name != "adapter" && name != "blobs") names.push_back(name);
    }
    return names;
  }

  test::TempDir dir_{"tinker-merge-engine"};
};

void expect_merged_model(const TinyModel& model, const fs::path& base, const fs::path& merged) {
  for (std::size_t s = 0; s < model.shards().size(); ++s) {
    const auto base_file = st::SafetensorsFile::open(base / TinyModel::shard_name(s));
    const auto merged_file = st::SafetensorsFile::open(merged / TinyModel::shard_name(s));
    ASSERT_EQ(merged_file.tensors().size(), base_file.tensors().size());
    EXPECT_EQ(merged_file.metadata(), base_file.metadata());
    for (std::size_t i = 0; i < base_file.tensors().size(); ++i) {
      const auto& expected = base_file.tensors()[i];
      const auto& got = merged_file.tensors()[i];
      SCOPED_TRACE(expected.name);
      EXPECT_EQ(got.name, expected.name);
      EXPECT_EQ(got.dtype, expected.dtype);
      EXPECT_EQ(got.shape, expected.shape);
      EXPECT_EQ(got.begin, expected.begin);
      const auto bytes = merged_file.data(got);
      const auto& tensor = model.shards()[s][i];
      ASSERT_EQ(tensor.name, expected.name);
      const auto want = model.expected_bytes(tensor);
      ASSERT_EQ(bytes.size(), want.size());
      EXPECT_EQ(0, std::memcmp(bytes.data(), want.data(), want.size()));
      const auto base_bytes = base_file.data(expected);
      const bool unchanged = std::memcmp(bytes.data(), base_bytes.data(), bytes.size()) == 0;
      EXPECT_EQ(unchanged, model.module_for(tensor.name) == nullptr);  // every adapted tensor changed
    }
  }
  for (const auto* name : {"config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
                           "chat_template.jinja", ".gitattributes", "model.safetensors.index.json"}) {
    EXPECT_EQ(read_file(merged / name), read_file(base / name)) << name;
  }
  EXPECT_FALSE(fs::is_symlink(merged / "tokenizer.json"));
  std::set<std::string> files;
  for (const auto& entry : fs::directory_iterator(merged)) files.insert(entry.path().filename().string());
  EXPECT_EQ(files,
            (std::set<std::string>{".gitattributes", "chat_template.jinja", "config.json", "generation_config.json",
                                   "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors",
                                   "model.safetensors.index.json", "tokenizer.json", "tokenizer_config.json"}));
}

class MergeEngineDtypes : public MergeEngine, public ::testing::WithParamInterface<st::Dtype> {};

TEST_P(MergeEngineDtypes, MergedTensorsAreTheRoundedSumsAndEverythingElseIsCopied) {
  const TinyModel model(GetParam());
  model.write(base(), adapter());
  std::vector<ExportProgress> reports;
  auto merge = options();
  merge.progress = [&](const ExportProgress& progress) { reports.push_back(progress); };
  const ExportSummary summary = build_merged_model(merge);
  expect_merged_model(model, base(), out());

  EXPECT_EQ(summary.output, out());
  EXPECT_EQ(summary.family, "default");
  EXPECT_EQ(summary.tensors_written, 21U);
  EXPECT_EQ(summary.tensors_changed, 6U);
  const auto shard_bytes =
      fs::file_size(out() / TinyModel::shard_name(0)) + fs::file_size(out() / TinyModel::shard_name(1));
  EXPECT_GT(summary.bytes_written, shard_bytes);
  EXPECT_GT(summary.bytes_read, 0U);
  EXPECT_GE(summary.seconds, 0.0);
  std::size_t merging = 0;
  std::uint64_t last_bytes = 0;
  for (const auto& report : reports) {
    if (report.stage != "merging") continue;
    ++merging;
    EXPECT_GE(report.bytes_done, last_bytes);
    last_bytes = report.bytes_done;
    EXPECT_EQ(report.tensors_done, merging);
    EXPECT_EQ(report.tensors_total, 21U);
  }
  EXPECT_EQ(merging, 21U);
  ASSERT_FALSE(reports.empty());
  EXPECT_EQ(last_bytes, st::SafetensorsModel::open(base()).total_bytes());
  EXPECT_EQ(outputs(), std::vector<std::string>{"merged"});
}

INSTANTIATE_TEST_SUITE_P(BaseDtypes, MergeEngineDtypes,
                         ::testing::Values(st::Dtype::bf16, st::Dtype::f16, st::Dtype::f32),
                         [](const auto& info) { return std::string(st::to_string(info.param)); });

TEST_F(MergeEngine, ThreadsAndChunkSizesGiveTheSameBytes) {
  const TinyModel model(st::Dtype::bf16, 2);
  model.write(base(), adapter());
  build_merged_model(options("default", 2));
  const TinkerAdapter loaded = load_tinker_adapter(adapter());
  const ModelLayout layout = read_model_layout(base());
  const MergePlan plan = plan_merge(loaded, layout);
  // 96-byte chunks: several per tensor, a row of 16 BF16 values at a time for the merged ones.
  for (const unsigned threads : {1U, 2U, 3U}) {
    const std::string name = "chunks-" + std::to_string(threads);
    merge_with_plan(plan, layout, options(name, threads), MergeEngineTuning{96});
    for (std::size_t s = 0; s < 2; ++s) {
      EXPECT_EQ(read_file(out(name) / TinyModel::shard_name(s)), read_file(out("default") / TinyModel::shard_name(s)))
          << threads << " threads, shard " << s;
    }
  }
  expect_merged_model(model, base(), out("default"));
}

TEST_F(MergeEngine, ATruncatedShardLeavesNothing) {
  TinyModel(st::Dtype::bf16).write(base(), adapter());
  const auto shard = base() / TinyModel::shard_name(1);
  fs::resize_file(shard, fs::file_size(shard) - 10);
  expect_tinker_error(errc::invalid_file, TinyModel::shard_name(1), [&] { build_merged_model(options()); });
  EXPECT_TRUE(outputs().empty());
}

TEST_F(MergeEngine, AShardTruncatedWhileBeingReadLeavesNothing) {
  TinyModel(st::Dtype::bf16).write(base(), adapter());
  const TinkerAdapter loaded = load_tinker_adapter(adapter());
  const ModelLayout layout = read_model_layout(base());
  const MergePlan plan = plan_merge(loaded, layout);
  auto merge = options("merged", 1);
  // The reader runs at most a few 32-byte chunks ahead of the writer, so when the first tensor is
  // written it is still far from the second shard, which then loses its end.
  bool truncated = false;
  merge.progress = [&](const ExportProgress&) {
    if (truncated) return;
    const auto shard = base() / TinyModel::shard_name(1);
    fs::resize_file(shard, fs::file_size(shard) - 100);
    truncated = true;
  };
  expect_tinker_error(errc::io_error, TinyModel::shard_name(1),
                      [&] { merge_with_plan(plan, layout, merge, MergeEngineTuning{32}); });
  EXPECT_TRUE(truncated);
  EXPECT_TRUE(outputs().empty());
}

TEST_F(MergeEngine, AnAdapterThatDoesNotFitLeavesNothing) {
  TinyModel(st::Dtype::bf16).write(base(), adapter());
  // The adapter of a model with a wider q_proj.
  std::vector<st::OwnedTensor> wrong;
  const std::vector<float> a(rank * 24, 0.5F), b(hidden * rank, 0.5F);
  wrong.push_back(st::make_tensor("base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight", {rank, 24}, a));
  wrong.push_back(st::make_tensor("base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight", {hidden, rank}, b));
  st::write_file(adapter() / "adapter_model.safetensors", wrong);
  expect_tinker_error(errc::invalid_argument, "q_proj", [&] { build_merged_model(options()); });
  EXPECT_TRUE(outputs().empty());
}

TEST_F(MergeEngine, TargetsTheStreamCannotMergeAreRefusedBeforeWriting) {
  TinyModel(st::Dtype::bf16).write(base(), adapter());
  const TinkerAdapter loaded = load_tinker_adapter(adapter());
  const ModelLayout layout = read_model_layout(base());
  MergePlan plan = plan_merge(loaded, layout);

  MergePlan missing = plan;
  missing.ops["model.layers.7.self_attn.q_proj.weight"] = plan.ops.begin()->second;
  expect_tinker_error(errc::invalid_argument, "base tensor 'model.layers.7.self_attn.q_proj.weight' is not in",
                      [&] { merge_with_plan(missing, layout, options()); });

  MergePlan misfit = plan;
  misfit.ops["model.layers.0.self_attn.k_proj.weight"] = plan.ops.at("model.layers.0.self_attn.q_proj.weight");
  expect_tinker_error(errc::invalid_argument, "base tensor 'model.layers.0.self_attn.k_proj.weight' [8, 16]",
                      [&] { merge_with_plan(misfit, layout, options()); });
  EXPECT_TRUE(outputs().empty());

  fs::create_directories(out());
  expect_tinker_error(errc::invalid_argument, "already exists", [&] { build_merged_model(options()); });
  expect_tinker_error(errc::invalid_argument, "merged", [&] { merge_with_plan(plan, layout, options()); });
  EXPECT_TRUE(fs::is_empty(out()));
}

TEST_F(MergeEngine, NonFloatTargetsAreRefused) {
  fs::create_directories(base());
  const std::vector<float> zeros(hidden * hidden, 0.0F);
  auto quantized = st::make_tensor("model.layers.0.self_attn.q_proj.weight", {hidden, hidden}, zeros);
  quantized.dtype = st::Dtype::f8_e4m3;
  quantized.bytes.resize(static_cast<std::size_t>(hidden * hidden));
  st::write_file(base() / "model.safetensors", {quantized});
  write_text(base() / "config.json", R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama"})");
  MergePlan plan;
  MergeOp op;
  op.target = "model.layers.0.self_attn.q_proj.weight";
  op.adapter_name = "base_model.model.model.layers.0.self_attn.q_proj.weight";
  auto a = std::make_shared<FloatTensor>(FloatTensor{{rank, hidden}, std::vector<float>(rank * hidden, 1.0F)});
  auto b = std::make_shared<FloatTensor>(FloatTensor{{hidden, rank}, std::vector<float>(hidden * rank, 1.0F)});
  op.a = a;
  op.b = b;
  plan.ops[op.target].push_back(op);
  ModelLayout layout;
  expect_tinker_error(errc::invalid_argument, "dtype F8_E4M3 cannot receive a LoRA delta",
                      [&] { merge_with_plan(plan, layout, options()); });
  EXPECT_TRUE(outputs().empty());
}

}  // namespace merge_engine_test
}  // namespace tinker::weights::detail
