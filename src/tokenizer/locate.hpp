// The search on disk without its error: what the Hub download starts from when it finds nothing,
// and the message that lists every place looked at.
#pragma once

#include <tinker/tokenizer.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::tokenizer_detail {

class LocalSearch {
 public:
  std::optional<TokenizerFile> found;  ///< its `searched` is filled
  std::vector<std::filesystem::path> searched;
  std::optional<std::filesystem::path> hub;  ///< the hub cache directory, if one is known
};

/// `find_tokenizer_file` without throwing when nothing is found (it still throws for a bad ref
/// or an empty environment).
LocalSearch search_tokenizer_file(const TokenizerRef& ref, const EnvLookup& env);

/// "no tokenizer file found for "<id>" [at revision R] (<why>)...; looked at:\n  <path>..."
/// `why` says what was (not) downloaded; `extra` lines (URLs asked) follow the paths.
std::string not_found_message(const TokenizerRef& ref, const LocalSearch& search, std::string_view why,
                              const std::vector<std::string>& extra = {});

/// The environment variable read, empty values counting as unset.
std::optional<std::string> env_value(const EnvLookup& env, std::string_view name);

}  // namespace tinker::tokenizer_detail
