#include "client/training/combine.hpp"

#include <tinker/error.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <numeric>
#include <string>

namespace tinker::client::training {

namespace {

enum class Reduction { sum, mean, min, max, slack, hash_unordered, unique, unknown };

Reduction reduction_of(std::string_view suffix) {
  if (suffix == "sum") return Reduction::sum;
  if (suffix == "mean") return Reduction::mean;
  if (suffix == "min") return Reduction::min;
  if (suffix == "max") return Reduction::max;
  if (suffix == "slack") return Reduction::slack;
  if (suffix == "hash_unordered") return Reduction::hash_unordered;
  if (suffix == "unique") return Reduction::unique;
  return Reduction::unknown;
}

// The reduction named by `key`'s suffix; a key without exactly one ':' is a protocol error.
Reduction parse_key(const std::string& key) {
  const auto colon = key.find(':');
  if (colon == std::string::npos || key.find(':', colon + 1) != std::string::npos) {
    throw error(errc::protocol_error,
                "metrics: key \"" + key +
                    "\" is not of the form <name>:<reduction> (exactly one ':', doc/training.md#chunking)");
  }
  return reduction_of(std::string_view(key).substr(colon + 1));
}

double weighted_mean(std::span<const double> values, std::span<const double> weights) {
  const double total_weight = std::accumulate(weights.begin(), weights.end(), 0.0);
  if (total_weight == 0.0) {  // no loss_fn_outputs anywhere: fall back to the plain mean
    return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  }
  double weighted_sum = 0.0;
  for (std::size_t i = 0; i < values.size(); ++i) weighted_sum += weights[i] * values[i];
  return weighted_sum / total_weight;
}

// Writes the combined value(s) of one metric into `out`.
void reduce_into(Metrics& out, const std::string& key, Reduction reduction, std::span<const double> values,
                 std::span<const double> weights) {
  switch (reduction) {
    case Reduction::sum: out[key] = std::accumulate(values.begin(), values.end(), 0.0); break;
    case Reduction::mean: out[key] = weighted_mean(values, weights); break;
    case Reduction::min: out[key] = *std::min_element(values.begin(), values.end()); break;
    case Reduction::max: out[key] = *std::max_element(values.begin(), values.end()); break;
    case Reduction::slack:
      out[key] = *std::max_element(values.begin(), values.end()) - weighted_mean(values, weights);
      break;
    case Reduction::hash_unordered: out[key] = hash_unordered(values, key); break;
    case Reduction::unique:
      out[key] = values[0];
      for (std::size_t i = 1; i < values.size(); ++i) out[key + "_" + std::to_string(i)] = values[i];
      break;
    case Reduction::unknown: break;  // dropped (doc/training.md#chunking)
  }
}

}  // namespace

double hash_unordered(std::span<const double> values, std::string_view key) {
  std::vector<std::int64_t> integers;
  integers.reserve(values.size());
  for (const double value : values) {
    // [-2^63, 2^63): the doubles whose integer part fits in an int64.
    if (!std::isfinite(value) || value < -9223372036854775808.0 || value >= 9223372036854775808.0) {
      throw error(errc::protocol_error,
                  "metrics: value of \"" + std::string(key) + "\" has no int64 integer part, cannot hash it");
    }
    integers.push_back(static_cast<std::int64_t>(value));  // truncates toward zero, like Python int()
  }
  std::sort(integers.begin(), integers.end());
  std::uint64_t hash = 14695981039346656037ULL;  // FNV-1a 64 offset basis
  for (const std::int64_t integer : integers) {
    const auto bits = static_cast<std::uint64_t>(integer);
    for (int byte = 0; byte < 8; ++byte) {
      hash ^= (bits >> (8 * byte)) & 0xFFU;
      hash *= 1099511628211ULL;  // FNV prime
    }
  }
  return static_cast<double>(hash & ((std::uint64_t{1} << 53) - 1));
}

Metrics combine_metrics(std::span<const ForwardBackwardOutput> chunks) {
  Metrics combined;
  if (chunks.empty()) return combined;
  std::vector<double> weights;
  weights.reserve(chunks.size());
  for (const auto& chunk : chunks) weights.push_back(static_cast<double>(chunk.loss_fn_outputs.size()));
  std::vector<double> values;
  for (const auto& [key, first_value] : chunks.front().metrics) {
    const Reduction reduction = parse_key(key);
    values.clear();
    for (const auto& chunk : chunks) {
      const auto it = chunk.metrics.find(key);
      if (it == chunk.metrics.end()) break;
      values.push_back(it->second);
    }
    if (values.size() != chunks.size()) continue;  // missing from some chunk: dropped (doc/training.md#chunking)
    reduce_into(combined, key, reduction, values, weights);
  }
  return combined;
}

ForwardBackwardOutput combine_chunk_outputs(std::vector<ForwardBackwardOutput> chunks,
                                            std::span<const std::size_t> datum_counts) {
  if (chunks.empty()) throw error(errc::invalid_argument, "combine_chunk_outputs: no chunk results");
  if (!datum_counts.empty() && datum_counts.size() != chunks.size()) {
    throw error(errc::invalid_argument, "combine_chunk_outputs: " + std::to_string(datum_counts.size()) +
                                            " datum counts for " + std::to_string(chunks.size()) + " chunks");
  }
  for (std::size_t i = 0; i < datum_counts.size(); ++i) {
    if (chunks[i].loss_fn_outputs.size() != datum_counts[i]) {
      throw error(errc::protocol_error, "chunk " + std::to_string(i) + " of forward_backward returned " +
                                            std::to_string(chunks[i].loss_fn_outputs.size()) + " loss_fn_outputs for " +
                                            std::to_string(datum_counts[i]) + " datums");
    }
  }
  ForwardBackwardOutput combined;
  combined.metrics = combine_metrics(chunks);
  combined.loss_fn_output_type = chunks.front().loss_fn_output_type;
  std::size_t total = 0;
  for (const auto& chunk : chunks) total += chunk.loss_fn_outputs.size();
  combined.loss_fn_outputs.reserve(total);
  for (auto& chunk : chunks) {
    std::move(chunk.loss_fn_outputs.begin(), chunk.loss_fn_outputs.end(), std::back_inserter(combined.loss_fn_outputs));
  }
  return combined;
}

}  // namespace tinker::client::training
