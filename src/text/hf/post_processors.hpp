// Post-processors of tokenizer.json: what encode(text, add_special_tokens=true) adds around the
// model's ids. Only single sequences (the public encode has no pair form).
#pragma once

#include <tinker/types/common.hpp>

#include <memory>
#include <utility>
#include <vector>

namespace tinker::tokenizer_detail::hf {

class PostProcessor {
 public:
  virtual ~PostProcessor() = default;
  /// Adds the special tokens of a single sequence to `ids`.
  virtual void add_special_tokens(std::vector<TokenId>& ids) const = 0;
};

/// One item of a single-sequence template: the sequence itself, or special token ids.
class TemplateItem {
 public:
  TemplateItem(bool sequence_, std::vector<TokenId> ids_) : sequence(sequence_), ids(std::move(ids_)) {}
  bool sequence;
  std::vector<TokenId> ids;
};

/// A single-sequence template (TemplateProcessing; RobertaProcessing and BertProcessing are
/// [cls] $A [sep]).
std::unique_ptr<PostProcessor> make_template_processor(std::vector<TemplateItem> items);
/// ByteLevel post-processing only trims offsets; it adds no ids.
std::unique_ptr<PostProcessor> make_no_op_processor();
std::unique_ptr<PostProcessor> make_sequence_processor(std::vector<std::unique_ptr<PostProcessor>> steps);

}  // namespace tinker::tokenizer_detail::hf
