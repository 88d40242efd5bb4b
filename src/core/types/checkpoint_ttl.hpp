// The checkpoint lifetime bounds the service documents (3600 s .. 10 years), checked client-side
// before a save or copy is sent (doc/training.md#checkpoint-metadata).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tinker::detail {

inline constexpr std::int64_t min_checkpoint_ttl_seconds = 3600;
inline constexpr std::int64_t max_checkpoint_ttl_seconds = 10LL * 365 * 24 * 3600;

/// Throws tinker::error (invalid_argument) "<call>: ttl_seconds must be 3600..315360000 (one hour
/// to ten years), got N" when `ttl_seconds` is given and out of range.
void check_checkpoint_ttl(std::string_view call, std::optional<std::int64_t> ttl_seconds);

}  // namespace tinker::detail
