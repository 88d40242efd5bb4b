#include "tokenizer/repo_id.hpp"

#include <algorithm>

namespace tinker::tokenizer_detail {
namespace {

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

// Both become parts of file paths (<dir>/<org>/<name>, models--<org>--<name>/refs/<revision>,
// snapshots/<revision>), so no part may be empty (an absolute path), "." or "..".
std::string path_parts_problem(std::string_view text) {
  if (text.empty()) return "is empty";
  if (!std::all_of(text.begin(), text.end(), [](char c) { return c == '/' || is_name_char(c); })) {
    return "may only contain letters, digits, '.', '_', '-' and '/'";
  }
  std::size_t start = 0;
  while (true) {
    const std::size_t end = std::min(text.find('/', start), text.size());
    const std::string_view part = text.substr(start, end - start);
    if (part.empty()) return "has an empty part around '/'";
    if (part == "." || part == "..") return "has a '.' or '..' part";
    if (end == text.size()) return {};
    start = end + 1;
  }
}

}  // namespace

std::string repo_id_problem(std::string_view id) {
  if (std::count(id.begin(), id.end(), '/') > 1) return "has more than one '/'";
  return path_parts_problem(id);
}

std::string revision_problem(std::string_view revision) {
  return path_parts_problem(revision);
}

}  // namespace tinker::tokenizer_detail
