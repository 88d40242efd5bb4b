// Field paths in codec error messages: "sequences[3].tokens[7]".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tinker::wire {

/// Appends one step of a field path: ".name" (without the dot at the start of the path) and/or
/// "[index]" when index >= 0.
inline void append_path_step(std::string& out, std::string_view name, std::int64_t index = -1) {
  if (!name.empty()) {
    if (!out.empty()) out += '.';
    out += name;
  }
  if (index >= 0) {
    out += '[';
    out += std::to_string(index);
    out += ']';
  }
}

}  // namespace tinker::wire
