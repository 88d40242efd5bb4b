// Rendering conversations into datums with max_length applied and reported: shared by
// render_conversations and the distillation dataset (which also needs each example's full input).
#pragma once

#include <tinker/train/supervised.hpp>

#include <cstddef>
#include <vector>

namespace tinker::train::detail {

/// One example that survived rendering.
class RenderedExample {
 public:
  std::size_t source_index = 0;  ///< its index in the conversations
  ModelInput full_input;         ///< the whole rendered conversation (before truncation)
  Datum datum;                   ///< the next-token datum, truncated to max_length
  bool truncated = false;        ///< max_length cut it
};

/// Every conversation rendered; truncated and dropped ones are also appended to `reports` (and
/// warned about on stderr when options.warn).
std::vector<RenderedExample> render_examples(const renderers::Renderer& renderer,
                                             const std::vector<Conversation>& conversations,
                                             const RenderOptions& options, std::vector<TruncationReport>& reports);

/// A DatumDataset of `examples` (their datums) with `reports`.
DatumDataset dataset_of(std::vector<RenderedExample> examples, std::vector<TruncationReport> reports);

}  // namespace tinker::train::detail
