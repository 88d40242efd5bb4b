// Base models as Hugging Face directories (export_model, model_dir_entry, load_base_model) and PEFT
// adapter directories (read_peft_adapter, ServerOptions::adapters): the layout written, exact f32
// round trips, bf16 rounding, and every bad directory refused with the file and tensor named.
#include "programs/local/model_dir/model_dir.hpp"
#include "programs/local/model/tiny_lm_internal.hpp"
#include "programs/local/tokenizer/tokenizer_store.hpp"
#include "unit/programs/local/model/model_test_support.hpp"
#include "unit/programs/local/support/local_server.hpp"

#include <tinker/error.hpp>
#include <tinker/local/model_dir.hpp>
#include <tinker/safetensors.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>

namespace tinker::local {
namespace {

namespace fs = std::filesystem;
namespace st = tinker::safetensors;
using ::testing::AllOf;
using ::testing::HasSubstr;

std::string read_dir_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return std::move(bytes).str();
}

void write_dir_file(const fs::path& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

// The message of the tinker::error `call` throws (with its code), or "no error".
std::string tinker_error_of(const std::function<void()>& call, errc* code = nullptr) {
  try {
    call();
  } catch (const tinker::error& e) {
    if (code != nullptr) *code = static_cast<errc>(e.code().value());
    return e.diag().message.empty() ? e.what() : e.diag().message;
  }
  return "no error";
}

std::vector<float> base_forward_logprobs(const model::BaseModel& base, int vocab) {
  const ForwardBackwardInput batch = model::testing::sft_batch(vocab, 2, 14);
  const ForwardBackwardOutput out = model::forward_base(base, batch);
  std::vector<float> all;
  for (std::size_t i = 0; i < out.loss_fn_outputs.size(); ++i) {
    const auto lp = model::testing::logprobs_of(out, i);
    all.insert(all.end(), lp.begin(), lp.end());
  }
  return all;
}

class ModelDirTest : public ::testing::Test {
 protected:
  ModelDirTest() { options.hf_hub_cache = test::shared_hf_hub_cache(); }

  // The directory `model` exported as `dtype` (once per test).
  fs::path exported(st::Dtype dtype = st::Dtype::f32, std::string_view model = "tinker-local/tiny-lm") {
    const fs::path dir = temp / ("export-" + std::string(st::to_string(dtype)));
    if (!fs::exists(dir)) export_model(options, model, dir, dtype);
    return dir;
  }

  // A copy of the f32 export whose model.safetensors `edit` rewrote from its tensors.
  fs::path edited(const std::string& name, const std::function<void(std::vector<st::OwnedTensor>&)>& edit) {
    const fs::path dir = temp / name;
    fs::copy(exported(), dir);
    std::vector<st::OwnedTensor> tensors;
    {
      const st::SafetensorsFile file = st::SafetensorsFile::open(dir / "model.safetensors");
      for (const st::TensorInfo& info : file.tensors()) {
        tensors.push_back(st::make_tensor(info.name, info.shape, file.read_f32(info)));
      }
    }
    edit(tensors);
    fs::remove(dir / "model.safetensors");
    st::write_file(dir / "model.safetensors", tensors);
    return dir;
  }

  std::shared_ptr<const model::BaseModel> load(const fs::path& dir, std::string name = "local/copy") {
    return hf_dir::load_base_model(model_dir_entry(std::move(name), dir), test::tiny_vocab_size());
  }

  std::string load_error(const fs::path& dir, errc* code = nullptr) {
    return tinker_error_of([&] { load(dir); }, code);
  }

  model::Architecture tiny_arch() const {
    model::Architecture arch;
    arch.vocab_size = test::tiny_vocab_size();
    return arch;
  }

  ServerOptions options;
  test::TempDir temp{"tinker-model-dir"};
};

TEST_F(ModelDirTest, ExportIsAHuggingFaceModelDirectory) {
  const fs::path dir = exported();
  const auto config = boost::json::parse(read_dir_file(dir / "config.json")).as_object();
  EXPECT_EQ(config.at("model_type"), "tinker_local_tiny");
  EXPECT_EQ(config.at("architectures"), boost::json::array{"TinkerLocalTinyForCausalLM"});
  EXPECT_EQ(config.at("vocab_size").as_int64(), test::tiny_vocab_size());
  EXPECT_EQ(config.at("hidden_size").as_int64(), 32);
  EXPECT_EQ(config.at("intermediate_size").as_int64(), 64);
  EXPECT_EQ(config.at("num_hidden_layers").as_int64(), 1);
  EXPECT_EQ(config.at("max_position_embeddings").as_int64(), 2048);
  EXPECT_EQ(config.at("tie_word_embeddings"), false);
  EXPECT_EQ(config.at("torch_dtype"), "float32");
  EXPECT_EQ(config.at("vision"), false);
  EXPECT_EQ(config.at("tinker_local_tokenizer"), "byte_level_bpe");
  EXPECT_EQ(config.at("tinker_local_tokenizer_id"), "tinker-local/tiny-bpe-1k");

  const st::SafetensorsFile weights = st::SafetensorsFile::open(dir / "model.safetensors");
  EXPECT_EQ(weights.metadata().at("format"), "pt");
  const auto specs = model::BaseModel::weight_specs(tiny_arch());
  ASSERT_EQ(weights.tensors().size(), specs.size());
  for (const model::WeightSpec& spec : specs) {
    const st::TensorInfo* info = weights.find(spec.name);
    ASSERT_NE(info, nullptr) << spec.name;
    EXPECT_EQ(info->shape, spec.shape) << spec.name;
    EXPECT_EQ(info->dtype, st::Dtype::f32) << spec.name;
  }
  // The tokenizer's files, byte for byte those the server serves.
  const auto tokenizer = ensure_tiny_tokenizer(test::shared_hf_hub_cache(), TinyTokenizer::byte_level_bpe);
  EXPECT_EQ(read_dir_file(dir / "tokenizer.json"), read_dir_file(tokenizer->model_file()));
  EXPECT_TRUE(fs::exists(dir / "tokenizer_config.json"));
}

TEST_F(ModelDirTest, F32ExportLoadsBackBitIdentical) {
  const CatalogueEntry entry = model_dir_entry("local/copy", exported());
  EXPECT_EQ(entry.name, "local/copy");
  EXPECT_EQ(entry.max_context_length, 2048);
  EXPECT_EQ(entry.tokenizer, TinyTokenizer::byte_level_bpe);
  EXPECT_EQ(entry.d_model, 32);
  EXPECT_EQ(entry.d_mlp, 64);
  EXPECT_FALSE(entry.vision);
  EXPECT_EQ(entry.model_dir, exported());

  const auto loaded = hf_dir::load_base_model(entry, test::tiny_vocab_size());
  model::Architecture arch = tiny_arch();
  const model::BaseModel builtin("tinker-local/tiny-lm", arch);
  EXPECT_EQ(base_forward_logprobs(*loaded, arch.vocab_size), base_forward_logprobs(builtin, arch.vocab_size));
  // Not merely close: every weight is the built-in one.
  const auto a = loaded->export_weights();
  const auto b = builtin.export_weights();
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].values, b[i].values) << a[i].name;
}

TEST_F(ModelDirTest, ReducedPrecisionExportsRoundEachWeightToNearestEven) {
  const model::BaseModel builtin("tinker-local/tiny-lm", tiny_arch());
  const auto reference = builtin.export_weights();
  for (const st::Dtype dtype : {st::Dtype::bf16, st::Dtype::f16}) {
    const fs::path dir = exported(dtype);
    const auto config = boost::json::parse(read_dir_file(dir / "config.json")).as_object();
    EXPECT_EQ(config.at("torch_dtype"), dtype == st::Dtype::bf16 ? "bfloat16" : "float16");
    const st::SafetensorsFile file = st::SafetensorsFile::open(dir / "model.safetensors");
    for (const st::TensorInfo& info : file.tensors()) EXPECT_EQ(info.dtype, dtype) << info.name;
    const auto loaded = load(dir)->export_weights();
    for (std::size_t i = 0; i < reference.size(); ++i) {
      std::vector<std::byte> narrow(reference[i].values.size() * st::dtype_size(dtype));
      st::from_f32(dtype, reference[i].values, narrow);
      std::vector<float> widened(reference[i].values.size());
      st::to_f32(dtype, narrow, widened);
      EXPECT_EQ(loaded[i].values, widened) << loaded[i].name;
      EXPECT_NE(loaded[i].values, reference[i].values) << loaded[i].name << " was not rounded at all";
    }
  }
}

TEST_F(ModelDirTest, VisionModelCarriesItsImageProjection) {
  const fs::path dir = temp / "vision";
  export_model(options, "tinker-local/tiny-vl", dir);
  const CatalogueEntry entry = model_dir_entry("local/vl", dir);
  EXPECT_TRUE(entry.vision);
  EXPECT_EQ(entry.tokenizer, TinyTokenizer::byte_level_bpe_vl);
  const st::SafetensorsFile file = st::SafetensorsFile::open(dir / "model.safetensors");
  ASSERT_NE(file.find("model.image_projection.weight"), nullptr);
  const auto tokenizer = ensure_tiny_tokenizer(test::shared_hf_hub_cache(), TinyTokenizer::byte_level_bpe_vl);
  const auto vocab =
      static_cast<int>(boost::json::parse(read_dir_file(dir / "config.json")).as_object().at("vocab_size").as_int64());
  const auto loaded = hf_dir::load_base_model(entry, vocab);
  model::Architecture arch = tiny_arch();
  arch.vocab_size = vocab;
  arch.vision = true;
  const model::BaseModel builtin("tinker-local/tiny-vl", arch);
  EXPECT_EQ(loaded->weights().image_projection.values, builtin.weights().image_projection.values);
  EXPECT_EQ(vocab, tokenizer->vocab_size());
  EXPECT_EQ(read_dir_file(dir / "tokenizer.json"), read_dir_file(tokenizer->model_file()));
}

TEST_F(ModelDirTest, ExportRefusesWhatItCannotWriteAndLeavesNothing) {
  errc code{};
  EXPECT_THAT(tinker_error_of([&] { export_model(options, "no/such-model", temp / "x"); }, &code),
              HasSubstr("no base model \"no/such-model\""));
  EXPECT_EQ(code, errc::invalid_argument);
  EXPECT_THAT(
      tinker_error_of([&] { export_model(options, "tinker-local/tiny-lm", temp / "x", st::Dtype::f64); }, &code),
      HasSubstr("F64"));
  EXPECT_EQ(code, errc::invalid_argument);
  fs::create_directories(temp / "exists");
  tinker_error_of([&] { export_model(options, "tinker-local/tiny-lm", temp / "exists"); }, &code);
  EXPECT_EQ(code, errc::invalid_argument);
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(temp.path())) left.push_back(entry.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{"exists"});
  EXPECT_TRUE(fs::is_empty(temp / "exists"));
}

TEST_F(ModelDirTest, ShardedDirectoryLoadsLikeTheSingleFile) {
  const fs::path dir = temp / "sharded";
  fs::copy(exported(), dir);
  std::vector<st::OwnedTensor> tensors;
  {
    const st::SafetensorsFile file = st::SafetensorsFile::open(dir / "model.safetensors");
    for (const st::TensorInfo& info : file.tensors()) {
      tensors.push_back(st::make_tensor(info.name, info.shape, file.read_f32(info)));
    }
  }
  fs::remove(dir / "model.safetensors");
  const std::size_t half = tensors.size() / 2;
  const std::vector<st::OwnedTensor> first(tensors.begin(), tensors.begin() + static_cast<std::ptrdiff_t>(half));
  const std::vector<st::OwnedTensor> second(tensors.begin() + static_cast<std::ptrdiff_t>(half), tensors.end());
  st::write_file(dir / "model-00001-of-00002.safetensors", first);
  st::write_file(dir / "model-00002-of-00002.safetensors", second);
  std::map<std::string, std::string> weight_map;
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    weight_map[tensors[i].name] = i < half ? "model-00001-of-00002.safetensors" : "model-00002-of-00002.safetensors";
    total += tensors[i].bytes.size();
  }
  write_dir_file(dir / "model.safetensors.index.json", st::make_index_json(total, weight_map));
  const model::BaseModel builtin("tinker-local/tiny-lm", tiny_arch());
  EXPECT_EQ(base_forward_logprobs(*load(dir), tiny_arch().vocab_size),
            base_forward_logprobs(builtin, tiny_arch().vocab_size));

  // A tensor the index promises but no shard has is named with the index.
  weight_map.erase("lm_head.weight");
  write_dir_file(dir / "model.safetensors.index.json", st::make_index_json(total, weight_map));
  fs::remove(dir / "model-00002-of-00002.safetensors");
  std::vector<st::OwnedTensor> without_head = second;
  without_head.pop_back();
  st::write_file(dir / "model-00002-of-00002.safetensors", without_head);
  EXPECT_THAT(load_error(dir), AllOf(HasSubstr((dir / "model.safetensors.index.json").string()),
                                     HasSubstr("tensor 'lm_head.weight' is missing")));
}

TEST_F(ModelDirTest, MissingTensorIsNamedWithItsFile) {
  const fs::path dir = edited("missing", [](auto& tensors) { tensors.pop_back(); });
  errc code{};
  EXPECT_THAT(load_error(dir, &code),
              AllOf(HasSubstr((dir / "model.safetensors").string()), HasSubstr("tensor 'lm_head.weight' is missing")));
  EXPECT_EQ(code, errc::invalid_file);
}

TEST_F(ModelDirTest, WrongShapeIsNamedWithItsFile) {
  const fs::path dir = edited("shape", [](auto& tensors) {
    const std::vector<float> values(32 * 16, 0.25f);
    tensors[1] = st::make_tensor("model.layers.0.self_attn.q_proj.weight", {32, 16}, values);
  });
  EXPECT_THAT(load_error(dir), AllOf(HasSubstr((dir / "model.safetensors").string()),
                                     HasSubstr("tensor 'model.layers.0.self_attn.q_proj.weight': shape [32, 16], "
                                               "expected [32, 32]")));
}

TEST_F(ModelDirTest, UnexpectedNonFloatOrNonFiniteTensorsAreRefused) {
  const fs::path extra = edited("extra", [](auto& tensors) {
    const std::vector<float> ones(32, 1.0f);
    tensors.push_back(st::make_tensor("model.norm.weight", {32}, ones));
  });
  EXPECT_THAT(load_error(extra), HasSubstr("tensor 'model.norm.weight' is not a weight of tinker-local's model"));
  const fs::path integer = edited("integer", [](auto& tensors) {
    st::OwnedTensor& head = tensors.back();
    head.dtype = st::Dtype::i32;  // same byte size as f32
  });
  EXPECT_THAT(load_error(integer), HasSubstr("tensor 'lm_head.weight': dtype I32"));
  const fs::path nan = edited("nan", [](auto& tensors) {
    st::OwnedTensor& embed = tensors.front();
    const float value = std::nanf("");
    std::memcpy(embed.bytes.data(), &value, sizeof value);
  });
  EXPECT_THAT(load_error(nan), HasSubstr("tensor 'model.embed_tokens.weight': holds a value that is not finite"));
}

TEST_F(ModelDirTest, TruncatedWeightsFileIsNamed) {
  const fs::path dir = temp / "truncated";
  fs::copy(exported(), dir);
  const fs::path file = dir / "model.safetensors";
  fs::resize_file(file, fs::file_size(file) / 2);
  errc code{};
  EXPECT_THAT(load_error(dir, &code), AllOf(HasSubstr(file.string()), HasSubstr("tensor '")));
  EXPECT_EQ(code, errc::invalid_file);
}

TEST_F(ModelDirTest, BadConfigIsNamedWithItsKey) {
  auto with_config = [&](const std::string& name, const std::function<void(boost::json::object&)>& edit) {
    const fs::path dir = temp / name;
    fs::copy(exported(), dir);
    auto config = boost::json::parse(read_dir_file(dir / "config.json")).as_object();
    edit(config);
    write_dir_file(dir / "config.json", boost::json::serialize(config));
    return dir;
  };
  const fs::path qwen = with_config("qwen", [](auto& c) { c["model_type"] = "qwen3"; });
  EXPECT_THAT(tinker_error_of([&] { model_dir_entry("x", qwen); }),
              AllOf(HasSubstr((qwen / "config.json").string()), HasSubstr("key 'model_type'")));
  const fs::path no_width = with_config("no-width", [](auto& c) { c.erase("hidden_size"); });
  EXPECT_THAT(tinker_error_of([&] { model_dir_entry("x", no_width); }), HasSubstr("key 'hidden_size': missing"));
  const fs::path tied = with_config("tied", [](auto& c) { c["tie_word_embeddings"] = true; });
  EXPECT_THAT(tinker_error_of([&] { model_dir_entry("x", tied); }), HasSubstr("key 'tie_word_embeddings'"));
  const fs::path kind = with_config("kind", [](auto& c) { c["tinker_local_tokenizer"] = "tiktoken"; });
  EXPECT_THAT(tinker_error_of([&] { model_dir_entry("x", kind); }), HasSubstr("key 'tinker_local_tokenizer'"));
  // The config of another vocabulary than the tokenizer's, with weights to match: refused at load.
  const fs::path vocab = with_config("vocab", [](auto& c) { c["vocab_size"] = 1000; });
  EXPECT_THAT(load_error(vocab), AllOf(HasSubstr("key 'vocab_size': 1000"),
                                       HasSubstr("has " + std::to_string(test::tiny_vocab_size()) + " ids")));
  const fs::path empty = temp / "empty";
  fs::create_directories(empty);
  errc code{};
  EXPECT_THAT(tinker_error_of([&] { model_dir_entry("x", empty); }, &code),
              HasSubstr((empty / "config.json").string()));
  EXPECT_EQ(code, errc::io_error);
}

// An adapter directory of a trained LoraState over `base`, in Tinker's names (as an archive holds).
void write_adapter_dir(const fs::path& dir, const model::LoraState& lora, std::string extra_config = "") {
  fs::create_directories(dir);
  std::vector<st::OwnedTensor> tensors;
  for (const model::NamedTensor& t : lora.export_adapters())
    tensors.push_back(st::make_tensor(t.name, t.shape, t.values));
  st::write_file(dir / "adapter_model.safetensors", tensors);
  write_dir_file(dir / "adapter_config.json",
                 "{\"peft_type\": \"LORA\", \"r\": " + std::to_string(lora.settings().rank) +
                     ", \"lora_alpha\": " + std::to_string(lora.lora_alpha()) + extra_config + "}");
}

TEST_F(ModelDirTest, PeftAdapterDirectoryIsRead) {
  const model::BaseModel base("adapter-base", model::testing::small_arch(53));
  const model::LoraState lora(base, model::testing::lora_settings(4, 5));
  const fs::path dir = temp / "adapter";
  write_adapter_dir(dir, lora);
  const hf_dir::AdapterFiles files = hf_dir::read_peft_adapter(dir);
  EXPECT_EQ(files.rank, 4);
  EXPECT_EQ(files.lora_alpha, lora.lora_alpha());
  EXPECT_EQ(files.weights_file, dir / "adapter_model.safetensors");
  const auto expected = lora.export_adapters();
  ASSERT_EQ(files.tensors.size(), expected.size());
  for (const model::NamedTensor& tensor : expected) {
    const auto found = std::find_if(files.tensors.begin(), files.tensors.end(),
                                    [&](const model::NamedTensor& t) { return t.name == tensor.name; });
    ASSERT_NE(found, files.tensors.end()) << tensor.name;
    EXPECT_EQ(found->values, tensor.values);
  }
  const fs::path rslora = temp / "rslora";
  write_adapter_dir(rslora, lora, ", \"use_rslora\": true");
  EXPECT_DOUBLE_EQ(hf_dir::read_peft_adapter(rslora).lora_alpha, lora.lora_alpha() * 2.0);  // sqrt(4)
}

TEST_F(ModelDirTest, PeftAdapterDirectoryRefusals) {
  const model::BaseModel base("adapter-base", model::testing::small_arch(53));
  const model::LoraState lora(base, model::testing::lora_settings(4, 5));
  auto refused = [&](const std::string& name, const std::string& config) {
    const fs::path dir = temp / name;
    write_adapter_dir(dir, lora, config);
    return tinker_error_of([&] { hf_dir::read_peft_adapter(dir); });
  };
  EXPECT_THAT(refused("pattern", ", \"rank_pattern\": {\"q_proj\": 8}"), HasSubstr("key 'rank_pattern'"));
  EXPECT_THAT(refused("dora", ", \"use_dora\": true"), HasSubstr("key 'use_dora'"));
  const fs::path no_rank = temp / "no-rank";
  write_adapter_dir(no_rank, lora);
  write_dir_file(no_rank / "adapter_config.json", "{\"lora_alpha\": 16}");
  EXPECT_THAT(tinker_error_of([&] { hf_dir::read_peft_adapter(no_rank); }),
              AllOf(HasSubstr((no_rank / "adapter_config.json").string()), HasSubstr("key 'r'")));
  const fs::path cube = temp / "cube";
  write_adapter_dir(cube, lora);
  const std::vector<float> values(8, 0.0f);
  st::write_file(cube / "adapter_model.safetensors.new",
                 {st::make_tensor("base_model.model.model.layers.0.mlp.experts.w1.lora_A.weight", {2, 2, 2}, values)});
  fs::rename(cube / "adapter_model.safetensors.new", cube / "adapter_model.safetensors");
  EXPECT_THAT(tinker_error_of([&] { hf_dir::read_peft_adapter(cube); }),
              HasSubstr("tensor 'base_model.model.model.layers.0.mlp.experts.w1.lora_A.weight': 3-D"));
}

// An import is a public sampler checkpoint of the run "local-imports" holding the adapter's own
// matrices; a restart without it (same data directory) no longer serves it.
TEST_F(ModelDirTest, ImportsAreCheckpointsRewrittenAtEveryStart) {
  const model::BaseModel base("tinker-local/tiny-lm", tiny_arch());
  model::LoraState lora(base, model::testing::lora_settings(4, 8));
  const ForwardBackwardInput batch = model::testing::sft_batch(tiny_arch().vocab_size, 2, 10);
  model::forward_backward(base, lora, batch, false);
  model::optim_step(lora, AdamParams(1e-3));
  const fs::path adapter = temp / "trained-adapter";
  write_adapter_dir(adapter, lora);

  ServerOptions with_import = test::fast_test_options();
  with_import.data_dir = temp / "data";
  with_import.adapters.emplace_back("tuned", adapter, "tinker-local/tiny-lm");
  const fs::path stored = with_import.data_dir / "checkpoints" / "local-imports" / "sampler_weights" / "tuned";
  {
    Server server(with_import);
    server.start();
    const auto meta = boost::json::parse(read_dir_file(stored / "meta.json")).as_object();
    EXPECT_EQ(meta.at("public"), true);
    EXPECT_EQ(meta.at("base_model"), "tinker-local/tiny-lm");
    const model::LoraState served = model::LoraState::deserialize(base, read_dir_file(stored / "state.bin"), false);
    EXPECT_EQ(served.impl().params, lora.impl().params);
  }
  ServerOptions without = with_import;
  without.adapters.clear();
  Server server(without);
  server.start();
  EXPECT_FALSE(fs::exists(stored));
}

// The server reads model directories and adapters when it starts, and refuses bad ones there.
TEST_F(ModelDirTest, ServerStartChecksModelDirectoriesAndAdapters) {
  ServerOptions bad_model = test::fast_test_options();
  bad_model.catalogue.push_back(
      model_dir_entry("local/broken", edited("broken", [](auto& tensors) { tensors.erase(tensors.begin() + 2); })));
  Server broken(bad_model);
  EXPECT_THAT(tinker_error_of([&] { broken.start(); }),
              HasSubstr("tensor 'model.layers.0.self_attn.k_proj.weight' is missing"));

  // An adapter trained over a model of another width does not fit tiny-lm.
  model::Architecture narrow = tiny_arch();
  narrow.d_model = 16;
  const model::BaseModel other("other", narrow);
  const fs::path adapter = temp / "narrow-adapter";
  write_adapter_dir(adapter, model::LoraState(other, model::testing::lora_settings(4, 1)));
  ServerOptions bad_adapter = test::fast_test_options();
  bad_adapter.adapters.emplace_back("narrow", adapter, "tinker-local/tiny-lm");
  Server misfit(bad_adapter);
  errc code{};
  EXPECT_THAT(tinker_error_of([&] { misfit.start(); }, &code),
              AllOf(HasSubstr((adapter / "adapter_model.safetensors").string()),
                    HasSubstr("tensor 'base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight': shape [4, 16]"),
                    HasSubstr("base model tinker-local/tiny-lm")));
  EXPECT_EQ(code, errc::invalid_argument);

  ServerOptions unknown_base = test::fast_test_options();
  unknown_base.adapters.emplace_back("narrow", adapter, "no/such-model");
  Server unknown(unknown_base);
  EXPECT_THAT(tinker_error_of([&] { unknown.start(); }), HasSubstr("unknown model no/such-model"));
}

}  // namespace
}  // namespace tinker::local
