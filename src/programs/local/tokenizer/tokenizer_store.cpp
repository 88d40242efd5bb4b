// Installing the tiny tokenizers in the Hugging Face hub cache layout.
//
//   <hub>/models--tinker-local--tiny-bpe-1k/refs/main              the revision, 40 hex digits, no newline
//   <hub>/models--tinker-local--tiny-bpe-1k/snapshots/<revision>/   tokenizer.json, tokenizer_config.json
//   <hub>/models--tinker-local--tiny-sp-1k/snapshots/<revision>/    tokenizer.model, tokenizer_config.json,
//                                                                    special_tokens_map.json
//   <hub>/models--tinker-local--tiny-bpe-vl/snapshots/<revision>/   tokenizer.json, tokenizer_config.json
//
// Choices:
// - The revision is the SHA-1 (40 hex digits, like a git commit id) of the snapshot's files, hashed
//   as "name\0size\0bytes" in name order, so any change to any file is a new revision and a
//   snapshot can be checked against its own name.
// - Snapshot files are regular files, not symlinks into blobs/ as huggingface_hub writes them;
//   readers of the cache (huggingface_hub, transformers) only resolve snapshots/<rev>/<file>.
// - tokenizer_config.json records the training fingerprint (trainer, options, corpus). An intact snapshot
//   with another fingerprint was trained from other inputs (an older build): a new snapshot is
//   installed beside it and refs/main moves to it. An install that does not match its own
//   revision is corrupt: that is an error naming the path, never silently repaired.
// - Concurrency: a snapshot is written into a unique temporary directory next to its final place
//   and renamed into place (atomic); refs/main is replaced by renaming a temporary file. A rename
//   that loses the race leaves the winner's identical files in place, which are then used.
#include "programs/local/tokenizer/tokenizer_store.hpp"

#include "programs/local/tokenizer/bpe_training.hpp"
#include "programs/local/tokenizer/tokenizer_training.hpp"
#include "text/hub_layout.hpp"

#include <tinker/error.hpp>

#include <boost/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>

namespace tinker::local {
namespace fs = std::filesystem;
namespace {

// The same snapshot is installed again under the names of the catalogue's tinker-local/ models,
// because a SamplingClient looks its tokenizer up by base model name with no tokenizer id. The
// stand-ins named like real models (Qwen/..., meta-llama/...) never get an alias, which would
// shadow the real tokenizers in the user's Hugging Face cache.
constexpr std::string_view alias_prefix = "tinker-local/";
constexpr std::string_view model_file_name = "tokenizer.model";
constexpr std::string_view json_file_name = "tokenizer.json";
constexpr std::string_view config_file_name = "tokenizer_config.json";
constexpr std::string_view special_tokens_file_name = "special_tokens_map.json";
constexpr std::string_view fingerprint_key = "tinker_local_training_fingerprint";

using detail::SnapshotFiles;

[[noreturn]] void fail(const fs::path& path, const std::string& problem) {
  throw tinker::error(errc::invalid_configuration, "tokenizer cache " + path.string() + ": " + problem);
}

std::string corrupt_hint(const fs::path& repo) {
  return " (corrupt or modified; delete " + repo.string() + " to reinstall)";
}

std::optional<std::string> env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

// Like Python's os.path.expanduser for the "~" and "~/..." forms huggingface_hub accepts.
fs::path expand_home(const std::string& value) {
  if (value == "~" || value.starts_with("~/")) {
    if (const auto home = env("HOME")) return fs::path(*home) / value.substr(value == "~" ? 1 : 2);
  }
  return fs::path(value);
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, std::string("cannot be read: ") + std::strerror(errno));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) fail(path, "read error");
  return std::move(bytes).str();
}

void write_file(const fs::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) fail(path, std::string("cannot be written: ") + std::strerror(errno));
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) fail(path, std::string("write failed: ") + std::strerror(errno));
}

// A name no other thread or process uses at the same time.
std::string unique_suffix() {
  static std::atomic<unsigned> counter{0};
  static const std::uint64_t process_random = std::random_device{}();
  return std::to_string(::getpid()) + "-" + std::to_string(process_random) + "-" + std::to_string(counter.fetch_add(1));
}

void make_directories(const fs::path& path) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) fail(path, "cannot create directory: " + ec.message());
}

bool is_revision(std::string_view text) {
  return text.size() == 40 && text.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

std::string sp_tokenizer_config_json(const std::string& fingerprint) {
  // Enough for transformers' LlamaTokenizer to load the snapshot offline. legacy=false with
  // add_prefix_space=false matches the model, which adds no dummy prefix.
  std::string json = R"({
  "add_bos_token": false,
  "add_eos_token": false,
  "add_prefix_space": false,
  "added_tokens_decoder": {
    "0": {"content": "<unk>", "lstrip": false, "normalized": false, "rstrip": false, "single_word": false, "special": true},
    "1": {"content": "<s>", "lstrip": false, "normalized": false, "rstrip": false, "single_word": false, "special": true},
    "2": {"content": "</s>", "lstrip": false, "normalized": false, "rstrip": false, "single_word": false, "special": true}
  },
  "bos_token": "<s>",
  "clean_up_tokenization_spaces": false,
  "eos_token": "</s>",
  "legacy": false,
  "model_max_length": 2048,
  "pad_token": null,
  "sp_model_kwargs": {},
  "spaces_between_special_tokens": false,
  "tokenizer_class": "LlamaTokenizer",
  ")";
  json += fingerprint_key;
  json += R"(": ")";
  json += fingerprint;
  json += R"(",
  "unk_token": "<unk>"
}
)";
  return json;
}

constexpr std::string_view special_tokens_map_json = R"({
  "bos_token": "<s>",
  "eos_token": "</s>",
  "unk_token": "<unk>"
}
)";

// The file the tokenizer is loaded from, and every file of its snapshot.
std::string_view tokenizer_file_name(TinyTokenizer kind) {
  return kind == TinyTokenizer::sentencepiece ? model_file_name : json_file_name;
}

std::vector<std::string_view> snapshot_file_names(TinyTokenizer kind) {
  if (kind == TinyTokenizer::sentencepiece) return {model_file_name, config_file_name, special_tokens_file_name};
  return {json_file_name, config_file_name};
}

std::string training_fingerprint(TinyTokenizer kind) {
  switch (kind) {
    case TinyTokenizer::sentencepiece: return detail::tiny_tokenizer_training_fingerprint();
    case TinyTokenizer::byte_level_bpe_vl: return detail::tiny_bpe_vl_training_fingerprint();
    case TinyTokenizer::byte_level_bpe: break;
  }
  return detail::tiny_bpe_training_fingerprint();
}

SnapshotFiles make_snapshot_files(TinyTokenizer kind, const std::string& fingerprint) {
  SnapshotFiles files;
  if (kind == TinyTokenizer::sentencepiece) {
    files.emplace(model_file_name, detail::tiny_sentencepiece_model());
    files.emplace(config_file_name, sp_tokenizer_config_json(fingerprint));
    files.emplace(special_tokens_file_name, special_tokens_map_json);
  } else {
    const detail::ByteLevelBpe& bpe =
        kind == TinyTokenizer::byte_level_bpe_vl ? detail::tiny_byte_level_bpe_vl() : detail::tiny_byte_level_bpe();
    files.emplace(json_file_name, detail::bpe_tokenizer_json(bpe));
    files.emplace(config_file_name, detail::bpe_tokenizer_config_json(bpe, fingerprint));
  }
  return files;
}

// Reads the snapshot `revision` and checks it against its name; throws if it is corrupt.
SnapshotFiles read_verified_snapshot(const fs::path& repo, const std::string& revision, TinyTokenizer kind) {
  const fs::path snapshot = repo / "snapshots" / revision;
  SnapshotFiles files;
  for (const std::string_view name : snapshot_file_names(kind)) {
    const fs::path file = snapshot / name;
    if (!fs::is_regular_file(file)) fail(file, "is missing" + corrupt_hint(repo));
    files.emplace(name, read_file(file));
  }
  if (detail::snapshot_revision(files) != revision)
    fail(snapshot, "files do not match the revision" + corrupt_hint(repo));
  return files;
}

std::string recorded_fingerprint(const fs::path& config_file, const std::string& config) {
  boost::system::error_code ec;
  const boost::json::value json = boost::json::parse(config, ec);
  if (ec || !json.is_object()) fail(config_file, "is not a JSON object");
  const auto* fingerprint = json.as_object().if_contains(fingerprint_key);
  if (fingerprint == nullptr || !fingerprint->is_string()) return {};
  return std::string(fingerprint->as_string());
}

// The revision refs/main names if its snapshot is intact and trained from `fingerprint`.
std::optional<std::string> installed_revision(const fs::path& repo, TinyTokenizer kind,
                                              const std::string& fingerprint) {
  const fs::path ref = repo / "refs" / "main";
  if (!fs::exists(ref)) return std::nullopt;
  std::string revision = read_file(ref);
  while (!revision.empty() && std::isspace(static_cast<unsigned char>(revision.back())))
    revision.pop_back();  // hand-edited
  if (!is_revision(revision)) fail(ref, "does not hold a 40-hex-digit revision" + corrupt_hint(repo));
  if (!fs::is_directory(repo / "snapshots" / revision)) return std::nullopt;  // deleted revision: reinstall
  const fs::path config_file = repo / "snapshots" / revision / config_file_name;
  if (!fs::is_regular_file(config_file)) fail(config_file, "is missing" + corrupt_hint(repo));
  // Built from other inputs, or another kind of tokenizer (a tinker-local/ alias that held the
  // SentencePiece snapshot before its model moved to byte-level BPE): replaced, not checked.
  if (recorded_fingerprint(config_file, read_file(config_file)) != fingerprint) return std::nullopt;
  read_verified_snapshot(repo, revision, kind);
  return revision;
}

// Puts snapshots/<revision> in place unless it already is.
void install_snapshot(const fs::path& repo, const std::string& revision, const SnapshotFiles& files) {
  const fs::path snapshots = repo / "snapshots";
  const fs::path target = snapshots / revision;
  if (fs::is_directory(target)) return;
  const fs::path temporary = snapshots / (".tmp-" + revision.substr(0, 12) + "-" + unique_suffix());
  std::error_code ec;
  if (!fs::create_directory(temporary, ec) || ec) fail(temporary, "cannot create directory: " + ec.message());
  try {
    for (const auto& [name, bytes] : files) write_file(temporary / name, bytes);
  } catch (...) {
    fs::remove_all(temporary, ec);
    throw;
  }
  fs::rename(temporary, target, ec);
  if (ec) {
    fs::remove_all(temporary, ec);
    // Lost the race to another installer: its snapshot (checked by the caller) is used.
    if (!fs::is_directory(target)) fail(target, "cannot rename the new snapshot into place");
  }
}

void point_main_at(const fs::path& repo, const std::string& revision) {
  const fs::path refs = repo / "refs";
  const fs::path temporary = refs / (".main.tmp-" + unique_suffix());
  write_file(temporary, revision);
  std::error_code ec;
  fs::rename(temporary, refs / "main", ec);  // atomic replace
  if (ec) {
    fs::remove(temporary, ec);
    fail(refs / "main", "cannot be replaced: " + ec.message());
  }
}

// Installs the snapshot under `repo` unless an intact one is there; returns its revision.
// `files` is made (the tokenizer trained) only when needed, at most once across repos.
std::string ensure_repo(const fs::path& repo, TinyTokenizer kind, const std::string& fingerprint,
                        std::optional<SnapshotFiles>& files) {
  if (const auto revision = installed_revision(repo, kind, fingerprint)) return *revision;
  make_directories(repo / "snapshots");
  make_directories(repo / "refs");
  if (!files) files = make_snapshot_files(kind, fingerprint);
  const std::string revision = detail::snapshot_revision(*files);
  install_snapshot(repo, revision, *files);
  read_verified_snapshot(repo, revision, kind);  // whoever wrote it, it must be intact
  point_main_at(repo, revision);
  return revision;
}

std::shared_ptr<const LocalTokenizer> ensure_installed(const fs::path& hub_cache, TinyTokenizer kind,
                                                       std::string_view id, std::span<const std::string> aliases) {
  const std::string fingerprint = training_fingerprint(kind);
  std::optional<SnapshotFiles> files;
  const fs::path repo = hub_cache / tokenizer_detail::hub_repo_folder(id);
  const std::string revision = ensure_repo(repo, kind, fingerprint, files);
  for (const std::string& alias : aliases) {
    if (alias == id) continue;
    if (!files) files = read_verified_snapshot(repo, revision, kind);
    ensure_repo(hub_cache / tokenizer_detail::hub_repo_folder(alias), kind, fingerprint, files);
  }
  return LocalTokenizer::load(std::string(id), repo / "snapshots" / revision / tokenizer_file_name(kind), kind);
}

}  // namespace

std::string detail::snapshot_revision(const SnapshotFiles& files) {
  std::string hashed;
  for (const auto& [name, bytes] : files) {
    hashed += name;
    hashed += '\0';
    hashed += std::to_string(bytes.size());
    hashed += '\0';
    hashed += bytes;
  }
  return sha1_hex(hashed);
}

std::string_view default_tokenizer_id(TinyTokenizer kind) noexcept {
  switch (kind) {
    case TinyTokenizer::sentencepiece: return tiny_sp_tokenizer_id;
    case TinyTokenizer::byte_level_bpe_vl: return tiny_vl_tokenizer_id;
    case TinyTokenizer::byte_level_bpe: break;
  }
  return tiny_bpe_tokenizer_id;
}

const std::string& tokenizer_id_of(const ServerOptions& options, TinyTokenizer kind) noexcept {
  switch (kind) {
    case TinyTokenizer::sentencepiece: return options.sp_tokenizer_id;
    case TinyTokenizer::byte_level_bpe_vl: return options.vl_tokenizer_id;
    case TinyTokenizer::byte_level_bpe: break;
  }
  return options.bpe_tokenizer_id;
}

std::vector<std::string> tokenizer_repos(const ServerOptions& options, TinyTokenizer kind) {
  std::vector<std::string> repos;
  for (const CatalogueEntry& entry : options.catalogue) {
    if (entry.tokenizer != kind) continue;
    if (repos.empty()) repos.push_back(tokenizer_id_of(options, kind));
    const bool alias = entry.name.starts_with(alias_prefix) &&
                       std::find(repos.begin(), repos.end(), entry.name) == repos.end() &&
                       entry.name != options.bpe_tokenizer_id && entry.name != options.sp_tokenizer_id &&
                       entry.name != options.vl_tokenizer_id;
    if (alias) repos.push_back(entry.name);
  }
  return repos;
}

LocalTokenizers ensure_catalogue_tokenizers(const fs::path& hub_cache, const ServerOptions& options) {
  LocalTokenizers tokenizers;
  for (const TinyTokenizer kind : all_tiny_tokenizers) {
    const std::vector<std::string> repos = tokenizer_repos(options, kind);
    if (repos.empty()) continue;
    tokenizers.of(kind) =
        ensure_tiny_tokenizer(hub_cache, kind, repos.front(), std::span<const std::string>(repos).subspan(1));
  }
  return tokenizers;
}

fs::path default_hf_hub_cache() {
  // huggingface_hub's order, including its legacy HUGGINGFACE_HUB_CACHE. Empty values count as
  // unset (huggingface_hub would use an empty path, which is never what anyone means).
  if (const auto hub = env("HF_HUB_CACHE")) return expand_home(*hub);
  if (const auto hub = env("HUGGINGFACE_HUB_CACHE")) return expand_home(*hub);
  if (const auto home = env("HF_HOME")) return expand_home(*home) / "hub";
  if (const auto xdg = env("XDG_CACHE_HOME")) return expand_home(*xdg) / "huggingface" / "hub";
  if (const auto home = env("HOME")) return fs::path(*home) / ".cache" / "huggingface" / "hub";
  throw tinker::error(
      errc::invalid_configuration,
      "cannot locate the Hugging Face cache: none of HF_HUB_CACHE, HF_HOME, XDG_CACHE_HOME, HOME is set");
}

std::shared_ptr<const LocalTokenizer> ensure_tiny_tokenizer(const fs::path& hub_cache, TinyTokenizer kind,
                                                            std::string_view tokenizer_id,
                                                            std::span<const std::string> aliases) {
  if (hub_cache.empty()) {
    throw tinker::error(errc::invalid_configuration, "the Hugging Face cache directory for the tokenizer is empty");
  }
  if (tokenizer_id.empty()) tokenizer_id = default_tokenizer_id(kind);
  try {
    return ensure_installed(hub_cache, kind, tokenizer_id, aliases);
  } catch (const fs::filesystem_error& e) {  // e.g. a directory we may not list
    fail(e.path1(), e.code().message());
  }
}

}  // namespace tinker::local
