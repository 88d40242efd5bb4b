// Merged-model export (issue 28): build_merged_model on a synthetic dense BF16 model, next to `cat`
// reading the same shards. Goals: merge throughput >= 0.7 x cat's, and the merge's peak resident
// memory <= the largest shard + 256 MiB.
//
// The model is Llama-shaped (hidden 4096, intermediate 14336, 8 KV heads of 128; the vocabulary
// and the number of layers chosen to reach the size asked), random BF16 weights in equal-sized
// shards with an index, config and tokenizer files; the adapter is rank 32 (alpha 32) on every
// attention and MLP projection, f32 as Tinker saves it. Both are generated once under --dir and
// reused while they exist. cat and the merge then run alternately, each --runs times, every one
// a child process (the merge is this program re-run with --merge-child), whose wall time and peak
// RSS (getrusage of the child) are reported. The merge writes to --dir/merged, removed after
// each run.
//
// A third child copies the shards and flushes the copies (cp, sync): the disk's own ceiling for
// anything that writes the model, which the merge must do (it flushes each shard before renaming
// it into place). Every child starts after a sync, so no run's writes (nor the discards of their
// removal) slow the next one.
//
// The page cache cannot be dropped without privileges, but a file's own clean pages can: --cold
// evicts the shards (posix_fadvise DONTNEED) before every run, so both cat and the merge read
// from the disk; without it both read what the previous run left in the cache (with enough RAM,
// everything). The merge's output is flushed to disk (fsync) before it reports success; cat
// writes nothing.
//
// Usage: tinker-bench-weights-merge [--dir=/work/bench-data/merge] [--gb=8] [--shards=4]
//          [--rank=32] [--threads=0] [--runs=2] [--cold] [--clean]
#include <tinker/safetensors.hpp>
#include <tinker/weights.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace {

namespace fs = std::filesystem;
namespace st = tinker::safetensors;

constexpr std::int64_t hidden = 4096;
constexpr std::int64_t intermediate = 14336;
constexpr std::int64_t kv_width = 1024;
constexpr double gigabyte = 1e9;
constexpr double mebibyte = 1024.0 * 1024.0;

struct Options {
  fs::path dir = "/work/bench-data/merge";
  double gigabytes = 8;
  int shards = 4;
  int rank = 32;
  unsigned threads = 0;
  int runs = 2;
  bool cold = false;
  bool clean = false;
};

struct TensorSpec {
  std::string name;
  std::vector<std::int64_t> shape;
  std::uint64_t bytes() const {
    std::uint64_t count = 2;  // BF16
    for (const auto dim : shape) count *= static_cast<std::uint64_t>(dim);
    return count;
  }
};

struct ModelShape {
  std::int64_t vocab = 0;
  int layers = 0;
  std::vector<TensorSpec> tensors;  // in file order
};

const std::vector<std::pair<std::string, std::vector<std::int64_t>>>& projections() {
  static const std::vector<std::pair<std::string, std::vector<std::int64_t>>> list{
      {"self_attn.q_proj", {hidden, hidden}},    {"self_attn.k_proj", {kv_width, hidden}},
      {"self_attn.v_proj", {kv_width, hidden}},  {"self_attn.o_proj", {hidden, hidden}},
      {"mlp.gate_proj", {intermediate, hidden}}, {"mlp.up_proj", {intermediate, hidden}},
      {"mlp.down_proj", {hidden, intermediate}}};
  return list;
}

// An eighth of the bytes in the embedding and the unembedding, the rest in layers.
ModelShape model_shape(double gigabytes) {
  ModelShape shape;
  const double total = gigabytes * gigabyte;
  shape.vocab = std::max<std::int64_t>(64, static_cast<std::int64_t>(total / 16 / (2.0 * hidden)) / 64 * 64);
  double layer_bytes = 4.0 * hidden;  // two norms
  for (const auto& [name, dims] : projections()) layer_bytes += 2.0 * static_cast<double>(dims[0] * dims[1]);
  const double embeddings = 2.0 * 2.0 * static_cast<double>(shape.vocab * hidden);
  shape.layers = std::max(1, static_cast<int>((total - embeddings) / layer_bytes + 0.5));
  shape.tensors.push_back({"model.embed_tokens.weight", {shape.vocab, hidden}});
  for (int layer = 0; layer < shape.layers; ++layer) {
    const std::string prefix = "model.layers." + std::to_string(layer) + ".";
    shape.tensors.push_back({prefix + "input_layernorm.weight", {hidden}});
    for (const auto& [name, dims] : projections()) shape.tensors.push_back({prefix + name + ".weight", dims});
    shape.tensors.push_back({prefix + "post_attention_layernorm.weight", {hidden}});
  }
  shape.tensors.push_back({"model.norm.weight", {hidden}});
  shape.tensors.push_back({"lm_head.weight", {shape.vocab, hidden}});
  return shape;
}

// xorshift64*: four BF16 values per step, of magnitude 2^-7 .. 2^-5 and either sign.
struct Random {
  std::uint64_t state = 0x9e3779b97f4a7c15ULL;
  std::uint64_t next() {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545f4914f6cdd1dULL;
  }
  void fill_bf16(std::vector<std::byte>& bytes) {
    for (std::size_t i = 0; i + 8 <= bytes.size(); i += 8) {
      std::uint64_t bits = next();
      for (int lane = 0; lane < 4; ++lane) {
        const auto value = static_cast<std::uint16_t>(0x3c00U | ((bits >> (16 * lane)) & 0x80ffU));
        std::memcpy(bytes.data() + i + 2 * static_cast<std::size_t>(lane), &value, 2);
      }
    }
  }
  float uniform() { return static_cast<float>(next() >> 40) / static_cast<float>(1 << 24) - 0.5F; }
};

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

std::string shard_name(int shard, int shards) {
  char name[64];
  std::snprintf(name, sizeof name, "model-%05d-of-%05d.safetensors", shard + 1, shards);
  return name;
}

void generate_model(const fs::path& dir, const ModelShape& shape, int shards) {
  fs::create_directories(dir);
  std::uint64_t total = 0;
  for (const auto& tensor : shape.tensors) total += tensor.bytes();
  const std::uint64_t per_shard = (total + static_cast<std::uint64_t>(shards) - 1) / static_cast<std::uint64_t>(shards);
  // Tensors fill a shard until it passes its share, as transformers' sharding does.
  std::vector<std::vector<const TensorSpec*>> files(1);
  std::uint64_t in_file = 0;
  for (const auto& tensor : shape.tensors) {
    if (in_file >= per_shard && static_cast<int>(files.size()) < shards) {
      files.emplace_back();
      in_file = 0;
    }
    files.back().push_back(&tensor);
    in_file += tensor.bytes();
  }
  const int count = static_cast<int>(files.size());
  std::map<std::string, std::string> weight_map;
  Random random;
  std::vector<std::byte> buffer(std::size_t{64} << 20);
  for (int s = 0; s < count; ++s) {
    std::vector<st::TensorDecl> declarations;
    for (const auto* tensor : files[static_cast<std::size_t>(s)]) {
      declarations.push_back({tensor->name, st::Dtype::bf16, tensor->shape});
      weight_map[tensor->name] = shard_name(s, count);
    }
    st::SafetensorsWriter writer(dir / shard_name(s, count), declarations, {{"format", "pt"}});
    for (std::size_t i = 0; i < declarations.size(); ++i) {
      for (std::uint64_t offset = 0; offset < writer.byte_size(i); offset += buffer.size()) {
        const auto size =
            static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), writer.byte_size(i) - offset));
        random.fill_bf16(buffer);
        writer.write(i, std::span(buffer).first(size), offset);
      }
    }
    writer.finish();
    std::cout << "  wrote " << shard_name(s, count) << std::endl;
  }
  write_text(dir / "model.safetensors.index.json", st::make_index_json(total, weight_map));
  write_text(dir / "config.json", R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": )" +
                                      std::to_string(hidden) + R"(, "intermediate_size": )" +
                                      std::to_string(intermediate) + R"(, "num_hidden_layers": )" +
                                      std::to_string(shape.layers) + R"(, "num_attention_heads": 32, )" +
                                      R"("num_key_value_heads": 8, "vocab_size": )" + std::to_string(shape.vocab) +
                                      R"(, "tie_word_embeddings": false, "torch_dtype": "bfloat16"})");
  write_text(dir / "generation_config.json", R"({"bos_token_id": 1, "eos_token_id": 2})");
  write_text(dir / "tokenizer_config.json", R"({"model_max_length": 8192})");
  write_text(dir / "tokenizer.json", R"({"version": "1.0", "model": {"type": "BPE", "vocab": {}, "merges": []}})");
}

void generate_adapter(const fs::path& dir, const ModelShape& shape, int rank) {
  fs::create_directories(dir);
  Random random;
  std::vector<st::OwnedTensor> tensors;
  for (int layer = 0; layer < shape.layers; ++layer) {
    for (const auto& [name, dims] : projections()) {
      const std::string module = "base_model.model.model.layers." + std::to_string(layer) + "." + name;
      std::vector<float> a(static_cast<std::size_t>(rank * dims[1]));
      std::vector<float> b(static_cast<std::size_t>(dims[0] * rank));
      for (auto& value : a) value = random.uniform() * 0.02F;
      for (auto& value : b) value = random.uniform() * 0.02F;
      tensors.push_back(st::make_tensor(module + ".lora_A.weight", {rank, dims[1]}, a));
      tensors.push_back(st::make_tensor(module + ".lora_B.weight", {dims[0], rank}, b));
    }
  }
  st::write_file(dir / "adapter_model.safetensors", tensors);
  write_text(dir / "adapter_config.json", "{\"r\": " + std::to_string(rank) + ", \"lora_alpha\": " +
                                              std::to_string(rank) + ", \"peft_type\": \"LORA\"}");
}

std::vector<fs::path> shard_files(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".safetensors") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

void evict_from_page_cache(const std::vector<fs::path>& files) {
  for (const auto& file : files) {
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }
}

struct ChildRun {
  double seconds = 0;
  double peak_rss_mib = 0;
};

// Removes what a run wrote and waits until the file system has settled (the removal's discards and
// any dirty pages left written back), so that one run's writes do not slow the next child.
void remove_and_settle(const fs::path& path) {
  fs::remove_all(path);
  ::sync();
}

// Runs `argv` as a child with stdout at `stdout_path` and waits: wall time and peak RSS.
ChildRun run_child(const std::vector<std::string>& argv, const char* stdout_path) {
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, stdout_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  const int spawned = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) throw std::runtime_error("cannot run " + argv[0] + ": " + std::strerror(spawned));
  int status = 0;
  struct rusage usage {};
  if (::wait4(pid, &status, 0, &usage) != pid) throw std::runtime_error("wait4 failed");
  ChildRun run;
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.peak_rss_mib = static_cast<double>(usage.ru_maxrss) / 1024.0;  // KiB on Linux
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw std::runtime_error(argv[0] + " failed");
  return run;
}

int merge_child(char** argv) {
  tinker::weights::MergedModelOptions options;
  options.adapter_dir = argv[2];
  options.base_model_dir = argv[3];
  options.output_dir = argv[4];
  options.threads = static_cast<unsigned>(std::stoul(argv[5]));
  const auto summary = tinker::weights::build_merged_model(options);
  std::cout << summary.tensors_written << " tensors (" << summary.tensors_changed << " merged), "
            << summary.bytes_written / gigabyte << " GB written in " << summary.seconds << " s\n";
  return 0;
}

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&](const char* prefix) -> const char* {
      return arg.rfind(prefix, 0) == 0 ? arg.c_str() + std::strlen(prefix) : nullptr;
    };
    if (const char* v = value("--dir=")) {
      options.dir = v;
    } else if (const char* v = value("--gb=")) {
      options.gigabytes = std::stod(v);
    } else if (const char* v = value("--shards=")) {
      options.shards = std::stoi(v);
    } else if (const char* v = value("--rank=")) {
      options.rank = std::stoi(v);
    } else if (const char* v = value("--threads=")) {
      options.threads = static_cast<unsigned>(std::stoul(v));
    } else if (const char* v = value("--runs=")) {
      options.runs = std::stoi(v);
    } else if (arg == "--cold") {
      options.cold = true;
    } else if (arg == "--clean") {
      options.clean = true;
    } else {
      throw std::runtime_error("unknown argument " + arg + " (see the comment at the top of weights_merge.cpp)");
    }
  }
  return options;
}

int run(int argc, char** argv) {
  if (argc >= 6 && std::string(argv[1]) == "--merge-child") return merge_child(argv);
  const Options options = parse(argc, argv);
  const ModelShape shape = model_shape(options.gigabytes);
  char size_name[64];
  std::snprintf(size_name, sizeof size_name, "%gg-%dshards", options.gigabytes, options.shards);
  const fs::path base = options.dir / (std::string("base-") + size_name);
  const fs::path adapter = options.dir / (std::string("adapter-") + size_name + "-r" + std::to_string(options.rank));
  const fs::path base_done = options.dir / (std::string("base-") + size_name + ".complete");
  const fs::path adapter_done = adapter.string() + ".complete";
  const fs::path merged = options.dir / "merged";
  fs::remove_all(merged);
  if (!fs::exists(base_done)) {
    std::cout << "generating " << base << std::endl;
    fs::remove_all(base);
    generate_model(base, shape, options.shards);
    write_text(base_done, "");
  }
  if (!fs::exists(adapter_done)) {
    std::cout << "generating " << adapter << std::endl;
    fs::remove_all(adapter);
    generate_adapter(adapter, shape, options.rank);
    write_text(adapter_done, "");
  }
  const auto shards = shard_files(base);
  std::uint64_t total = 0, largest = 0;
  for (const auto& shard : shards) {
    total += fs::file_size(shard);
    largest = std::max<std::uint64_t>(largest, fs::file_size(shard));
  }
  std::printf(
      "model: %.2f GB in %zu shards (largest %.2f GB), %d layers, vocab %lld; adapter rank %d on %d modules "
      "(%.0f MB); %s cache\n",
      static_cast<double>(total) / gigabyte, shards.size(), static_cast<double>(largest) / gigabyte, shape.layers,
      static_cast<long long>(shape.vocab), options.rank, shape.layers * 7,
      static_cast<double>(fs::file_size(adapter / "adapter_model.safetensors")) / 1e6,
      options.cold ? "cold (shards evicted before each run)" : "warm");

  std::vector<std::string> cat_argv{"cat"};
  for (const auto& shard : shards) cat_argv.push_back(shard.string());
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  const std::vector<std::string> merge_argv{self,          "--merge-child", adapter.string(),
                                            base.string(), merged.string(), std::to_string(options.threads)};
  // The ceiling a disk sets on any merge: the shards copied and flushed (cp, then sync of the copies).
  const fs::path copy_dir = options.dir / "copy";
  std::vector<std::string> copy_argv{"sh", "-c", "mkdir -p \"$0\" && cp -- \"$@\" \"$0\" && sync \"$0\"/*",
                                     copy_dir.string()};
  for (const auto& shard : shards) copy_argv.push_back(shard.string());
  double best_cat = 1e300, best_merge = 1e300, best_copy = 1e300, peak_rss = 0;
  for (int i = 1; i <= options.runs; ++i) {
    if (options.cold) evict_from_page_cache(shards);
    const ChildRun cat = run_child(cat_argv, "/dev/null");
    if (options.cold) evict_from_page_cache(shards);
    const ChildRun copy = run_child(copy_argv, "/dev/null");
    remove_and_settle(copy_dir);
    best_copy = std::min(best_copy, copy.seconds);
    if (options.cold) evict_from_page_cache(shards);
    const fs::path log = options.dir / "merge.log";
    const ChildRun merge = run_child(merge_argv, log.c_str());
    remove_and_settle(merged);
    best_cat = std::min(best_cat, cat.seconds);
    best_merge = std::min(best_merge, merge.seconds);
    peak_rss = std::max(peak_rss, merge.peak_rss_mib);
    std::ifstream summary(log);
    std::string line;
    std::getline(summary, line);
    const auto rate = [&](double seconds) { return static_cast<double>(total) / gigabyte / seconds; };
    std::printf(
        "run %d: cat %.2f s (%.2f GB/s) | cp+sync %.2f s (%.2f GB/s) | merge %.2f s (%.2f GB/s, %.2f x cat), "
        "peak RSS %.0f MiB: %s\n",
        i, cat.seconds, rate(cat.seconds), copy.seconds, rate(copy.seconds), merge.seconds, rate(merge.seconds),
        cat.seconds / merge.seconds, merge.peak_rss_mib, line.c_str());
  }
  std::printf("throughput merge/(cp+sync) (best runs): %.2f\n", best_copy / best_merge);
  std::printf("throughput (cp+sync)/cat (best runs): %.2f (what writing the model durably allows here)\n",
              best_cat / best_copy);
  const double ratio = best_cat / best_merge;
  const double rss_goal = static_cast<double>(largest) / mebibyte + 256;
  std::printf("throughput merge/cat (best runs): %.2f (goal >= 0.7: %s)\n", ratio, ratio >= 0.7 ? "met" : "missed");
  std::printf("merge peak RSS %.0f MiB, largest shard + 256 MiB = %.0f MiB (goal: %s)\n", peak_rss, rss_goal,
              peak_rss <= rss_goal ? "met" : "missed");
  if (options.clean) {
    for (const auto& path : {base, adapter, base_done, adapter_done, options.dir / "merge.log"}) fs::remove_all(path);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "tinker-bench-weights-merge: " << e.what() << '\n';
    return 1;
  }
}
