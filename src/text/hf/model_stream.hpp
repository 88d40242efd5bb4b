// model.vocab and model.merges of a tokenizer.json read while the file is parsed, instead of being
// built into the JSON document first: they are nearly all of the file (hundreds of thousands of
// entries), and a document of them would cost more than the tables built from it.
#pragma once

#include "text/hf/bpe_model.hpp"

#include <boost/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::tokenizer_detail::hf {

/// What the streaming parse took out of the document. In the document, a streamed model.vocab
/// is left as an empty object and model.merges as an empty array.
class StreamedModel {
 public:
  class Merge {
   public:
    std::uint32_t offset;  // into merge_text: left, then right
    std::uint32_t left_length;
    std::uint32_t right_length;
    std::uint32_t index;  // in model.merges, for messages
  };

  StreamedModel() = default;

  BpeModelBuilder builder;  // the vocabulary is added to it as it is read
  bool vocab_streamed = false;
  bool merges_streamed = false;
  std::string merge_text;
  std::vector<Merge> merges;  // "#version" lines left out

  std::string_view left(const Merge& merge) const {
    return std::string_view(merge_text).substr(merge.offset, merge.left_length);
  }
  std::string_view right(const Merge& merge) const {
    return std::string_view(merge_text).substr(merge.offset + merge.left_length, merge.right_length);
  }
};

/// A problem found while streaming: the JSON path and what is wrong.
class StreamProblem {
 public:
  std::string path;
  std::string message;
};

/// Parses `text` into a document allocated from `storage`, streaming model.vocab and
/// model.merges into `model`. On failure returns null and sets either `problem` (a wrong value in
/// the streamed parts) or `syntax_error` and `error_offset` (malformed or truncated JSON).
boost::json::value parse_streaming_model(std::string_view text, boost::json::storage_ptr storage, StreamedModel& model,
                                         StreamProblem& problem, boost::system::error_code& syntax_error,
                                         std::size_t& error_offset);

}  // namespace tinker::tokenizer_detail::hf
