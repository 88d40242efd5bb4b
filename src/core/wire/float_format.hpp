// Shortest round-trip text of a float32 (Ryu), used for every float tensor written as JSON.
#pragma once

#include <span>

namespace tinker::wire {

/// Room format_shortest needs at `out`: the text is at most 17 characters, but it copies digits
/// in fixed 16-byte blocks and may scribble up to this many bytes.
inline constexpr int max_float_chars = 32;

/// Writes the shortest decimal text that reads back as exactly `value` (which must be finite),
/// in JSON number syntax; returns the end. Negative zero is written as "-0.0".
char* format_shortest(char* out, float value);

/// Writes `v0,v1,...` (no brackets) with format_shortest; `out` needs
/// values.size() * (max_float_chars + 1) bytes of room. Returns nullptr, having written an
/// unspecified prefix, if a value is NaN or infinite.
char* format_shortest_list(char* out, std::span<const float> values);

}  // namespace tinker::wire
