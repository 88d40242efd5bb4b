// validate_provenance (doc/training.md#provenance): spans cover their field exactly, in order, each of length >= 1,
// and a failure names the datum, the field and the span.
#include <tinker/error.hpp>
#include <tinker/types/datum.hpp>

#include <gtest/gtest.h>

#include <string>

namespace tinker {
namespace {

// Five model-input positions and four loss positions.
Datum five_positions() {
  LossFnInputs inputs;
  inputs.emplace("target_tokens", TensorData(std::vector<std::int64_t>{2, 3, 4, 5}));
  inputs.emplace("weights", TensorData(std::vector<float>{1, 1, 1, 1}));
  return Datum(ModelInput::from_ints({1, 2, 3, 4, 5}), inputs);
}

std::string problem_of(const Datum& datum, std::size_t index = 0) {
  try {
    validate_provenance(datum, index);
  } catch (const error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument));
    return e.what();
  }
  return {};
}

TEST(Provenance, ExactCoverInOrderIsAccepted) {
  const Datum datum = five_positions().with_provenance(
      {PromptProvenanceSpan("s:seq:0", 0, 3), SampledProvenanceSpan("s:seq:0", 0, 2)},
      std::vector<ProvenanceSpan>{PromptProvenanceSpan("s:seq:0", 1, 2), SampledProvenanceSpan("s:seq:0", 0, 2)});
  EXPECT_EQ(problem_of(datum), "");
  EXPECT_EQ(problem_of(five_positions()), "") << "no spans, nothing to check";
}

TEST(Provenance, ShortLongEmptyAndNegativeSpansAreNamed) {
  const Datum short_cover = five_positions().with_provenance({PromptProvenanceSpan("s:seq:0", 0, 4)});
  EXPECT_NE(problem_of(short_cover, 3).find("data[3].model_input_spans: the spans cover 4 positions, the field has 5"),
            std::string::npos)
      << problem_of(short_cover, 3);
  const Datum long_cover =
      five_positions().with_provenance({PromptProvenanceSpan("s:seq:0", 0, 4), SampledProvenanceSpan("s:seq:0", 0, 2)});
  EXPECT_NE(problem_of(long_cover).find("data[0].model_input_spans[1]: covers positions 4..6"), std::string::npos)
      << problem_of(long_cover);
  const Datum empty_span =
      five_positions().with_provenance({PromptProvenanceSpan("s:seq:0", 0, 5), SampledProvenanceSpan("s:seq:0", 0, 0)});
  EXPECT_NE(problem_of(empty_span).find("model_input_spans[1]: length must be at least 1, got 0"), std::string::npos);
  const Datum negative = five_positions().with_provenance({PromptProvenanceSpan("s:seq:0", -1, 5)});
  EXPECT_NE(problem_of(negative).find("model_input_spans[0]: offset must not be negative"), std::string::npos);
  const Datum no_id = five_positions().with_provenance({PromptProvenanceSpan("", 0, 5)});
  EXPECT_NE(problem_of(no_id).find("model_input_spans[0]: sequence_id must not be empty"), std::string::npos);
}

TEST(Provenance, LossSpansCoverTheLossInputsLength) {
  Datum datum = five_positions();
  datum.loss_fn_input_spans = std::vector<ProvenanceSpan>{SampledProvenanceSpan("s:seq:1", 0, 5)};
  EXPECT_NE(problem_of(datum).find("data[0].loss_fn_input_spans[0]: covers positions 0..5, past the field's length 4"),
            std::string::npos)
      << problem_of(datum);
  Datum without_inputs(ModelInput::from_ints({1}), LossFnInputs());
  without_inputs.loss_fn_input_spans = std::vector<ProvenanceSpan>{SampledProvenanceSpan("s:seq:1", 0, 1)};
  EXPECT_NE(problem_of(without_inputs).find("no loss_fn_inputs"), std::string::npos);
}

}  // namespace
}  // namespace tinker
