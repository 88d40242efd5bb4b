// Supervised datasets: rendering with max_length reported, DatumDataset and the seeded batch order.
#include "train/supervised/rendering.hpp"

#include <tinker/error.hpp>

#include <iostream>
#include <numeric>
#include <string>

namespace tinker::train {
namespace detail {
namespace {

double weight_sum(const std::vector<float>& weights, std::size_t from, std::size_t to) {
  double sum = 0.0;
  for (std::size_t i = from; i < to && i < weights.size(); ++i) sum += weights[i];
  return sum;
}

void warn_about(const TruncationReport& report, std::size_t max_length) {
  std::cerr << "warning: supervised example " << report.source_index << " is " << report.tokens
            << " tokens, over max_length " << max_length << ": "
            << (report.dropped ? "dropped" : "cut to " + std::to_string(report.kept_tokens) + " tokens") << ", losing "
            << report.lost_trained_weight << " trained token weight\n";
}

}  // namespace

std::vector<RenderedExample> render_examples(const renderers::Renderer& renderer,
                                             const std::vector<Conversation>& conversations,
                                             const RenderOptions& options, std::vector<TruncationReport>& reports) {
  if (options.max_length && *options.max_length < 2) {
    throw tinker::error(errc::invalid_argument,
                        "RenderOptions::max_length must be >= 2, got " + std::to_string(*options.max_length));
  }
  std::vector<RenderedExample> examples;
  for (std::size_t index = 0; index < conversations.size(); ++index) {
    try {
      const renderers::SupervisedExample example =
          renderer.build_supervised_example(conversations[index], options.train_on);
      const auto tokens = static_cast<std::size_t>(example.model_input.length());
      const bool too_long = options.max_length && tokens > *options.max_length;
      RenderedExample rendered;
      rendered.source_index = index;
      if (too_long && options.truncation == TruncationPolicy::drop) {
        reports.push_back(TruncationReport{index, tokens, 0, weight_sum(example.weights, 1, tokens), true});
        if (options.warn) warn_about(reports.back(), *options.max_length);
        continue;
      }
      rendered.datum = example.to_datum(options.max_length);
      rendered.full_input = example.model_input;
      if (too_long) {
        // The datum's inputs are its kept positions minus the last one (next-token shift).
        const auto kept = static_cast<std::size_t>(rendered.datum.model_input.length()) + 1;
        reports.push_back(TruncationReport{index, tokens, kept, weight_sum(example.weights, kept, tokens), false});
        if (options.warn) warn_about(reports.back(), *options.max_length);
        rendered.truncated = true;
      }
      examples.push_back(std::move(rendered));
    } catch (const tinker::error& e) {
      throw tinker::error(errc::invalid_argument, "supervised example " + std::to_string(index) + ": " + e.what());
    }
  }
  return examples;
}

DatumDataset dataset_of(std::vector<RenderedExample> examples, std::vector<TruncationReport> reports) {
  std::vector<Datum> data;
  std::vector<std::size_t> positions;
  for (RenderedExample& example : examples) {
    data.push_back(std::move(example.datum));
    positions.push_back(example.source_index);
  }
  return DatumDataset(std::move(data), std::move(positions), std::move(reports));
}

}  // namespace detail

DatumDataset::DatumDataset(std::vector<Datum> data) : data_(std::move(data)), truncated_(data_.size(), false) {
  positions_.resize(data_.size());
  std::iota(positions_.begin(), positions_.end(), std::size_t{0});
}

DatumDataset::DatumDataset(std::vector<Datum> data, std::vector<std::size_t> positions,
                           std::vector<TruncationReport> reports)
    : data_(std::move(data)),
      positions_(std::move(positions)),
      truncated_(data_.size(), false),
      reports_(std::move(reports)) {
  if (positions_.size() != data_.size()) {
    throw tinker::error(errc::invalid_argument, "DatumDataset: positions must have one entry per datum");
  }
  for (const TruncationReport& report : reports_) {
    if (report.dropped) continue;
    for (std::size_t i = 0; i < positions_.size(); ++i) {
      if (positions_[i] == report.source_index) truncated_[i] = true;
    }
  }
}

std::size_t DatumDataset::size() const {
  return data_.size();
}

const Datum& DatumDataset::datum(std::size_t index) const {
  if (index >= data_.size()) {
    throw tinker::error(errc::invalid_argument, "DatumDataset: index " + std::to_string(index) +
                                                    " out of range (size " + std::to_string(data_.size()) + ")");
  }
  return data_[index];
}

bool DatumDataset::truncated(std::size_t index) const {
  return index < truncated_.size() && truncated_[index];
}

std::size_t DatumDataset::source_index(std::size_t index) const {
  if (index >= positions_.size()) throw tinker::error(errc::invalid_argument, "DatumDataset: index out of range");
  return positions_[index];
}

DatumDataset render_conversations(const renderers::Renderer& renderer, const std::vector<Conversation>& conversations,
                                  const RenderOptions& options) {
  std::vector<TruncationReport> reports;
  std::vector<detail::RenderedExample> examples = detail::render_examples(renderer, conversations, options, reports);
  return detail::dataset_of(std::move(examples), std::move(reports));
}

}  // namespace tinker::train
