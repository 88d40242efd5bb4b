// Datum provenance checks (doc/training.md#provenance): spans cover their field exactly, in order.
#include <tinker/error.hpp>
#include <tinker/types/datum.hpp>

#include <string>
#include <tuple>
#include <variant>

namespace tinker {

namespace {

[[noreturn]] void provenance_problem(std::size_t datum, const char* field, std::size_t span, const std::string& what) {
  throw error(errc::invalid_argument,
              "data[" + std::to_string(datum) + "]." + field + "[" + std::to_string(span) + "]: " + what);
}

// The positions the loss inputs annotate: their common per-token length (the first dimension).
std::int64_t loss_inputs_length(const LossFnInputs& inputs) {
  const auto target = inputs.find("target_tokens");
  const TensorData& tensor = target != inputs.end() ? target->second : inputs.begin()->second;
  const std::vector<std::int64_t> shape = tensor.effective_shape();
  return shape.empty() ? 0 : shape.front();
}

// Each span: a sequence id, offset >= 0, length >= 1; together they cover [0, covered) in order.
void check_spans(const std::vector<ProvenanceSpan>& spans, std::int64_t covered, std::size_t datum, const char* field) {
  std::int64_t position = 0;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const auto [sequence_id, offset, length] = std::visit(
        [](const auto& span) {
          return std::tuple<const std::string&, std::int64_t, std::int64_t>(span.sequence_id, span.offset, span.length);
        },
        spans[i]);
    if (sequence_id.empty()) provenance_problem(datum, field, i, "sequence_id must not be empty");
    if (offset < 0) provenance_problem(datum, field, i, "offset must not be negative, got " + std::to_string(offset));
    if (length < 1) provenance_problem(datum, field, i, "length must be at least 1, got " + std::to_string(length));
    if (length > covered - position) {
      provenance_problem(datum, field, i,
                         "covers positions " + std::to_string(position) + ".." + std::to_string(position + length) +
                             ", past the field's length " + std::to_string(covered));
    }
    position += length;
  }
  if (position != covered) {
    throw error(errc::invalid_argument, "data[" + std::to_string(datum) + "]." + field + ": the spans cover " +
                                            std::to_string(position) + " positions, the field has " +
                                            std::to_string(covered));
  }
}

}  // namespace

void validate_provenance(const Datum& datum, std::size_t index) {
  if (datum.model_input_spans)
    check_spans(*datum.model_input_spans, datum.model_input.length(), index, "model_input_spans");
  if (datum.loss_fn_input_spans) {
    if (datum.loss_fn_inputs.empty()) {
      throw error(errc::invalid_argument, "data[" + std::to_string(index) +
                                              "].loss_fn_input_spans: the datum has no loss_fn_inputs to annotate");
    }
    check_spans(*datum.loss_fn_input_spans, loss_inputs_length(datum.loss_fn_inputs), index, "loss_fn_input_spans");
  }
}

}  // namespace tinker
