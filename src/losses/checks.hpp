// Input checks shared by the ready-made custom losses: each names the loss, the datum and the field.
#pragma once

#include <tinker/error.hpp>
#include <tinker/types/datum.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::losses::detail {

[[noreturn]] inline void fail(std::string_view loss, const std::string& message) {
  throw error(errc::invalid_argument, "losses::" + std::string(loss) + ": " + message);
}

inline std::string datum_path(std::size_t i) {
  return "data[" + std::to_string(i) + "]";
}

/// Number of target tokens of datum `i` (its target_tokens' element count).
std::size_t target_count(std::string_view loss, const Datum& datum, std::size_t i);

/// The datum's `weights`, checked to be as long as its targets; empty when it has none and
/// `required` is false.
std::vector<float> datum_weights(std::string_view loss, const Datum& datum, std::size_t i, std::size_t count,
                                 bool required);

/// Throws unless `values` (the datum's `field`) has `count` entries.
void check_length(std::string_view loss, std::size_t i, std::string_view field, std::size_t size, std::size_t count);

/// Throws unless the batch-level vectors have one entry per datum.
void check_batch(std::string_view loss, std::string_view field, std::size_t size, std::size_t data_size);

}  // namespace tinker::losses::detail
