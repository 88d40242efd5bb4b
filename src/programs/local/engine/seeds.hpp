// Deterministic seeds derived from ids: a model's initial LoRA weights from its id, a sample's
// randomness from its sampler and sequence number.
#pragma once

#include <cstdint>
#include <string_view>

namespace tinker::local::engine_detail {

/// FNV-1a 64 of `text`, then a SplitMix64 finaliser: stable across runs and platforms.
std::uint64_t stable_hash(std::string_view text);
/// Combines two seeds into one (SplitMix64 of both).
std::uint64_t mix_seed(std::uint64_t a, std::uint64_t b);

}  // namespace tinker::local::engine_detail
