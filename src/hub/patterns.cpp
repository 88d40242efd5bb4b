// Repo ids and allow/ignore patterns as huggingface_hub checks and applies them
// (validate_repo_id, filter_repo_objects with fnmatch.fnmatchcase).
#include <tinker/hub_upload.hpp>

#include <algorithm>
#include <cctype>

namespace tinker {
namespace {

constexpr std::size_t max_part = 96;

bool word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

std::string part_problem(std::string_view part, std::string_view what) {
  if (part.empty()) return "the " + std::string(what) + " is empty";
  if (part.size() > max_part) return "the " + std::string(what) + " is longer than 96 characters";
  for (const char c : part) {
    if (!word_char(c) && c != '-' && c != '.') {
      return "the " + std::string(what) + " has '" + std::string(1, c) + "' (only letters, digits, '-', '_' and '.')";
    }
  }
  if (!word_char(part.front()) || !word_char(part.back())) {
    return "the " + std::string(what) + " must start and end with a letter, digit or '_'";
  }
  return "";
}

// `[...]` at pattern[i] (i at '['): whether it matches `c`; `end` set past the ']'. A '[' without
// a closing ']' is a literal, as in fnmatch.
bool set_matches(std::string_view pattern, std::size_t i, char c, std::size_t& end, bool& is_set) {
  std::size_t j = i + 1;
  bool negate = false;
  if (j < pattern.size() && pattern[j] == '!') {
    negate = true;
    ++j;
  }
  if (j < pattern.size() && pattern[j] == ']') ++j;  // a leading ']' is a member
  while (j < pattern.size() && pattern[j] != ']') ++j;
  if (j >= pattern.size()) {
    is_set = false;
    return false;
  }
  is_set = true;
  end = j + 1;
  bool found = false;
  for (std::size_t k = i + 1 + (negate ? 1 : 0); k < j; ++k) {
    if (k + 2 < j && pattern[k + 1] == '-') {
      if (pattern[k] <= c && c <= pattern[k + 2]) found = true;
      k += 2;
    } else if (pattern[k] == c) {
      found = true;
    }
  }
  return found != negate;
}

// fnmatchcase: '*' any run (slashes included), '?' one character, sets; backtracking on the last '*'.
bool glob_match(std::string_view pattern, std::string_view text) {
  std::size_t p = 0;
  std::size_t t = 0;
  std::size_t star = std::string_view::npos;
  std::size_t star_text = 0;
  while (t < text.size()) {
    bool advanced = false;
    if (p < pattern.size()) {
      if (pattern[p] == '*') {
        star = p++;
        star_text = t;
        continue;
      }
      if (pattern[p] == '[') {
        std::size_t end = 0;
        bool is_set = false;
        const bool matched = set_matches(pattern, p, text[t], end, is_set);
        if (is_set && matched) {
          p = end;
          ++t;
          advanced = true;
        } else if (!is_set && text[t] == '[') {
          ++p;
          ++t;
          advanced = true;
        }
      } else if (pattern[p] == '?' || pattern[p] == text[t]) {
        ++p;
        ++t;
        advanced = true;
      }
    }
    if (advanced) continue;
    if (star == std::string_view::npos) return false;
    p = star + 1;
    t = ++star_text;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace

std::string hub_repo_id_problem(std::string_view repo_id) {
  if (repo_id.ends_with(".git")) return "it ends with \".git\"";
  if (repo_id.find("--") != std::string_view::npos || repo_id.find("..") != std::string_view::npos) {
    return "it contains \"--\" or \"..\"";
  }
  const auto slash = repo_id.find('/');
  if (slash == std::string_view::npos) return part_problem(repo_id, "name");
  if (repo_id.find('/', slash + 1) != std::string_view::npos) {
    return "it has more than one '/' (expected \"namespace/name\")";
  }
  if (auto problem = part_problem(repo_id.substr(0, slash), "namespace"); !problem.empty()) return problem;
  return part_problem(repo_id.substr(slash + 1), "name");
}

bool hub_pattern_matches(std::string_view pattern, std::string_view path) {
  if (pattern.ends_with('/')) {
    const std::string directory = std::string(pattern) + "*";
    return glob_match(directory, path);
  }
  return glob_match(pattern, path);
}

std::vector<std::string> hub_filter_paths(const std::vector<std::string>& paths, const std::vector<std::string>& allow,
                                          const std::vector<std::string>& ignore) {
  std::vector<std::string> kept;
  for (const std::string& path : paths) {
    auto matches = [&path](const std::string& pattern) { return hub_pattern_matches(pattern, path); };
    if (!allow.empty() && std::none_of(allow.begin(), allow.end(), matches)) continue;
    if (std::any_of(ignore.begin(), ignore.end(), matches)) continue;
    kept.push_back(path);
  }
  return kept;
}

}  // namespace tinker
