// Reference logprobs from compute_logprobs results: full sequences and the alignment with
// target_tokens (the SDK round trip is in test/integration/training/dpo_test.cpp).
#include "unit/losses/loss_test_support.hpp"

#include <tinker/losses.hpp>

namespace tinker::losses {
namespace {

using test::expect_invalid;
using test::shifted_datum;

TEST(ReferenceLogprobs, FullSequenceAppendsTheLastTarget) {
  const Datum datum = shifted_datum({5, 6, 7, 8}, {0.0f, 1.0f, 1.0f});
  EXPECT_EQ(full_sequence(datum).to_ints(), (std::vector<TokenId>{5, 6, 7, 8}));
  const Datum empty(ModelInput::from_ints(std::vector<TokenId>{5}),
                    LossFnInputs{{"target_tokens", TensorData(std::vector<std::int64_t>{})}});
  EXPECT_EQ(full_sequence(empty).to_ints(), (std::vector<TokenId>{5}));
}

TEST(ReferenceLogprobs, AlignDropsThePromptsFirstEntry) {
  const std::vector<Datum> data{shifted_datum({5, 6, 7, 8}, {}), shifted_datum({9, 10}, {})};
  const std::vector<PromptLogprobs> computed{{std::nullopt, -1.0f, -2.0f, -3.0f}, {std::nullopt, -4.0f}};
  EXPECT_EQ(align_reference_logprobs(data, computed), (ReferenceLogprobs{{-1.0f, -2.0f, -3.0f}, {-4.0f}}));
}

TEST(ReferenceLogprobs, AlignRejectsWhatItCannotAlign) {
  const std::vector<Datum> data{shifted_datum({5, 6, 7}, {}), shifted_datum({9, 10}, {})};
  expect_invalid([&] { align_reference_logprobs(data, {{std::nullopt, -1.0f, -2.0f}}); }, {"1 entries for 2 datums"});
  expect_invalid(
      [&] {
        align_reference_logprobs(data, {{std::nullopt, -1.0f, -2.0f}, {std::nullopt}});
      },
      {"data[1]", "returned 1 entries", "2 tokens"});
  expect_invalid(
      [&] {
        align_reference_logprobs(data, {{std::nullopt, std::nullopt, -2.0f}, {std::nullopt, -1.0f}});
      },
      {"data[0]", "target token 0"});
  Datum unshifted(ModelInput::from_ints(std::vector<TokenId>{5, 6}),
                  LossFnInputs{{"target_tokens", TensorData(std::vector<std::int64_t>{7, 8})}});
  expect_invalid(
      [&] {
        align_reference_logprobs({unshifted}, {{std::nullopt, -1.0f, -2.0f}});
      },
      {"data[0].loss_fn_inputs.target_tokens[0] = 7", "model_input[1] = 6", "shifted by one"});
  Datum longer(ModelInput::from_ints(std::vector<TokenId>{5, 6, 7}),
               LossFnInputs{{"target_tokens", TensorData(std::vector<std::int64_t>{6, 7})}});
  expect_invalid(
      [&] {
        align_reference_logprobs({longer}, {{std::nullopt, -1.0f, -2.0f}});
      },
      {"data[0]", "3 tokens but 2 target tokens"});
}

}  // namespace
}  // namespace tinker::losses
