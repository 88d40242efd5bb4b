// Finding a tokenizer file on disk: $TINKER_TOKENIZER_PATH, then the Hugging Face hub cache.
// Nothing is downloaded here (hub_download.cpp does that); the search records every path it
// looks at for the error message.
#include <tinker/error.hpp>
#include <tinker/tokenizer.hpp>

#include "text/hub_layout.hpp"
#include "tokenizer/locate.hpp"
#include "tokenizer/repo_id.hpp"

#include <array>
#include <cstdlib>
#include <fstream>
#include <system_error>
#include <utility>

namespace tinker {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view path_variable = "TINKER_TOKENIZER_PATH";

using tokenizer_detail::env_value;
using tokenizer_detail::hub_repo_folder;
using tokenizer_detail::LocalSearch;

bool regular_file_exists(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

bool directory_exists(const fs::path& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

TokenizerFormat format_of_file_name(const fs::path& file) {
  if (file.extension() == ".json") return TokenizerFormat::tokenizer_json;
  if (file.filename() == "tiktoken.model") return TokenizerFormat::tiktoken;
  return TokenizerFormat::sentencepiece;
}

// One search: the paths looked at so far, and the file once found.
class Search {
 public:
  std::vector<fs::path> searched;
  std::optional<TokenizerFile> found;

  bool try_file(const fs::path& path, TokenizerFormat format) {
    searched.push_back(path);
    if (!regular_file_exists(path)) return false;
    found.emplace();
    found->path = path;
    found->format = format;
    return true;
  }

  bool try_directory(const fs::path& dir) {
    for (const auto& known : tokenizer_detail::tokenizer_file_names) {
      if (try_file(dir / known.name, known.format)) return true;
    }
    return false;
  }
};

std::optional<std::string> read_ref(const fs::path& ref_file) {
  std::ifstream in(ref_file);
  std::string commit;
  if (!(in >> commit)) return std::nullopt;
  // A commit hash names a directory under snapshots/; refuse anything that could leave it.
  if (!tokenizer_detail::revision_problem(commit).empty()) return std::nullopt;
  return commit;
}

// <hub>/models--<org>--<name>/refs/<revision> holds the commit; snapshots/<commit>/ the files.
// A revision without a refs file is taken to be a commit hash itself.
bool try_hub_cache(Search& search, const fs::path& hub, const TokenizerRef& ref) {
  const fs::path repo = hub / hub_repo_folder(ref.id);
  const std::string revision = ref.revision.value_or("main");
  const fs::path ref_file = repo / "refs" / revision;
  search.searched.push_back(ref_file);
  std::optional<std::string> commit;
  if (regular_file_exists(ref_file)) commit = read_ref(ref_file);
  if (!commit && ref.revision) commit = *ref.revision;
  if (!commit) return false;
  return search.try_directory(repo / "snapshots" / *commit);
}

bool try_path_entry(Search& search, const fs::path& entry, const TokenizerRef& ref) {
  if (directory_exists(entry)) {
    return search.try_directory(entry / fs::path(ref.id)) || try_hub_cache(search, entry, ref) ||
           search.try_directory(entry);
  }
  return search.try_file(entry, format_of_file_name(entry));
}

std::vector<fs::path> split_path_list(std::string_view list) {
  std::vector<fs::path> entries;
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t end = list.find(':', start);
    if (end == list.npos) end = list.size();
    if (end > start) entries.emplace_back(list.substr(start, end - start));
    start = end + 1;
  }
  return entries;
}

void check_ref(const TokenizerRef& ref) {
  if (auto problem = tokenizer_detail::repo_id_problem(ref.id); !problem.empty()) {
    throw error(errc::invalid_argument, "tokenizer id \"" + ref.id + "\" " + problem);
  }
  if (!ref.revision) return;
  if (auto problem = tokenizer_detail::revision_problem(*ref.revision); !problem.empty()) {
    throw error(errc::invalid_argument, "tokenizer revision \"" + *ref.revision + "\" " + problem);
  }
}

}  // namespace

namespace tokenizer_detail {

std::optional<std::string> env_value(const EnvLookup& env, std::string_view name) {
  auto value = env(name);
  if (value && value->empty()) value.reset();
  return value;
}

std::string not_found_message(const TokenizerRef& ref, const LocalSearch& search, std::string_view why,
                              const std::vector<std::string>& extra) {
  std::string message = "no tokenizer file found for \"" + ref.id + "\"";
  if (ref.revision) message += " at revision " + *ref.revision;
  message += " (" + std::string(why);
  if (ref.private_package) message += "; this id is served by Thinking Machines' private tokenizer package in Python";
  message += ")";
  if (!search.hub) message += "; no hub cache: none of HF_HUB_CACHE, HF_HOME, XDG_CACHE_HOME, HOME is set";
  message += "; looked at:";
  for (const auto& path : search.searched) message += "\n  " + path.string();
  for (const auto& line : extra) message += "\n  " + line;
  return message;
}

LocalSearch search_tokenizer_file(const TokenizerRef& ref, const EnvLookup& env) {
  if (!env) throw error(errc::invalid_argument, "find_tokenizer_file: the environment lookup is empty");
  check_ref(ref);
  Search search;
  bool found = false;
  if (auto list = env_value(env, path_variable)) {
    for (const auto& entry : split_path_list(*list)) {
      if ((found = try_path_entry(search, entry, ref))) break;
    }
  }
  LocalSearch result;
  result.hub = hf_hub_cache_dir(env);
  if (!found && result.hub) found = try_hub_cache(search, *result.hub, ref);
  if (found) {
    result.found = std::move(search.found);
    result.found->searched = search.searched;
  }
  result.searched = std::move(search.searched);
  return result;
}

}  // namespace tokenizer_detail

EnvLookup process_environment() {
  // std::getenv is safe as long as nobody modifies the environment concurrently.
  return [](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

std::optional<fs::path> hf_hub_cache_dir(const EnvLookup& env) {
  if (auto dir = env_value(env, "HF_HUB_CACHE")) return fs::path(*dir);
  if (auto home = env_value(env, "HF_HOME")) return fs::path(*home) / "hub";
  if (auto cache = env_value(env, "XDG_CACHE_HOME")) return fs::path(*cache) / "huggingface" / "hub";
  if (auto home = env_value(env, "HOME")) return fs::path(*home) / ".cache" / "huggingface" / "hub";
  return std::nullopt;
}

TokenizerFile find_tokenizer_file(const TokenizerRef& ref, const EnvLookup& env) {
  LocalSearch search = tokenizer_detail::search_tokenizer_file(ref, env);
  if (!search.found) {
    throw error(errc::invalid_configuration,
                tokenizer_detail::not_found_message(
                    ref, search,
                    "nothing is downloaded by this search: put a tokenizer file under $TINKER_TOKENIZER_PATH or in "
                    "the Hugging Face hub cache"));
  }
  return std::move(*search.found);
}

}  // namespace tinker
