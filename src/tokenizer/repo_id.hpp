// Checks on tokenizer ids and revisions before they become parts of file paths.
#pragma once

#include <string>
#include <string_view>

namespace tinker::tokenizer_detail {

/// Why `id` is not a safe Hugging Face repo id ("org/name" or "name" of [A-Za-z0-9._-], no "."
/// or ".." part), or "" if it is one.
std::string repo_id_problem(std::string_view id);

/// Why `revision` cannot name a ref or snapshot directory (empty, absolute, a "." or ".." part,
/// a character outside [A-Za-z0-9._-/]), or "" if it can.
std::string revision_problem(std::string_view revision);

}  // namespace tinker::tokenizer_detail
