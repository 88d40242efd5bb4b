// Sampling: seeds, temperature, top_k / top_p, stop conditions, logprobs and prompt logprobs.
#include "programs/local/model/tiny_lm_internal.hpp"
#include "unit/programs/local/model/model_test_support.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <thread>

namespace tinker::local::model {
namespace {

using namespace testing;
using ::testing::HasSubstr;

constexpr int kSamplerVocab = 89;

SampleSettings settings_with(std::int64_t max_tokens, double temperature, std::optional<std::uint64_t> seed) {
  SampleSettings s;
  s.params = SamplingParams(max_tokens, temperature);
  s.params.seed = seed;
  return s;
}

// Renders token ids as "[id]" so that one id never matches inside another.
std::string bracket_text(std::span<const TokenId> tokens) {
  std::string text;
  for (TokenId t : tokens) text += "[" + std::to_string(t) + "]";
  return text;
}

class TinyLmSampler : public ::testing::Test {
 protected:
  TinyLmSampler()
      : base("sampler", small_arch(kSamplerVocab)), prompt(ModelInput::from_ints(random_tokens(3, 6, kSamplerVocab))) {}

  SampleResponse run(const SampleSettings& s, const LoraState* lora = nullptr, const Detokenizer& detok = {}) {
    return sample(base, lora, prompt, s, detok);
  }

  // The full next-token distribution after `tokens`, computed through the white-box step().
  std::vector<double> distribution_after(const std::vector<TokenId>& tokens, const LoraState* lora = nullptr) {
    const EffectiveWeights weights(base, lora != nullptr ? &lora->impl() : nullptr);
    Activations acts(base.arch(), false);
    std::vector<double> logprobs(kSamplerVocab);
    for (TokenId t : tokens) step(weights, t, acts, logprobs.data());
    return logprobs;
  }

  // Forward logprobs of `generated` following the prompt.
  std::vector<float> forward_logprobs(const std::vector<TokenId>& generated, LoraState* lora = nullptr) {
    std::vector<TokenId> sequence = prompt.to_ints();
    sequence.insert(sequence.end(), generated.begin(), generated.end());
    const ForwardBackwardInput input({cross_entropy_datum(sequence)}, loss_fn::cross_entropy);
    const auto out = lora != nullptr ? forward_backward(base, *lora, input, true) : forward_base(base, input);
    const std::vector<float> all = logprobs_of(out, 0);
    return {all.end() - static_cast<std::ptrdiff_t>(generated.size()), all.end()};
  }

  LoraState trained_lora() {
    LoraState lora(base, lora_settings(4, 1));
    const ForwardBackwardInput batch = sft_batch(kSamplerVocab, 2, 12);
    for (int i = 0; i < 5; ++i) {
      forward_backward(base, lora, batch, false);
      optim_step(lora, AdamParams(1e-3));
    }
    return lora;
  }

  BaseModel base;
  ModelInput prompt;
};

TEST_F(TinyLmSampler, SameSeedSameTokensDifferentSeedsDiffer) {
  const auto a = run(settings_with(20, 1.0, 42));
  const auto b = run(settings_with(20, 1.0, 42));
  const auto c = run(settings_with(20, 1.0, 43));
  ASSERT_EQ(a.sequences.size(), 1u);
  EXPECT_EQ(a.sequences[0].tokens.size(), 20u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a.sequences[0].tokens, c.sequences[0].tokens);
}

TEST_F(TinyLmSampler, EachSampleHasItsOwnStream) {
  SampleSettings s = settings_with(12, 1.0, 7);
  s.num_samples = 3;
  const auto many = run(s);
  ASSERT_EQ(many.sequences.size(), 3u);
  EXPECT_NE(many.sequences[0].tokens, many.sequences[1].tokens);
  EXPECT_NE(many.sequences[1].tokens, many.sequences[2].tokens);
  // Sample i depends on (seed, i) only, not on how many samples were requested.
  EXPECT_EQ(run(settings_with(12, 1.0, 7)).sequences[0], many.sequences[0]);
}

TEST_F(TinyLmSampler, MissingSeedUsesTheFallbackSeedAndMissingMaxTokensTheDefault) {
  SampleSettings s = settings_with(5, 1.0, std::nullopt);
  s.params.max_tokens.reset();
  s.default_max_tokens = 9;
  s.fallback_seed = 1234;
  const auto implicit = run(s);
  ASSERT_EQ(implicit.sequences[0].tokens.size(), 9u);
  EXPECT_EQ(implicit.sequences[0], run(settings_with(9, 1.0, 1234)).sequences[0]);
}

TEST_F(TinyLmSampler, TemperatureZeroIsArgmaxOfTheModel) {
  const LoraState lora = trained_lora();
  for (const LoraState* state : {static_cast<const LoraState*>(nullptr), &lora}) {
    const auto out = run(settings_with(10, 0.0, 1), state);
    std::vector<TokenId> context = prompt.to_ints();
    for (TokenId token : out.sequences[0].tokens) {
      const std::vector<double> logprobs = distribution_after(context, state);
      EXPECT_EQ(token, std::max_element(logprobs.begin(), logprobs.end()) - logprobs.begin());
      context.push_back(token);
    }
    // Greedy decoding ignores the seed.
    EXPECT_EQ(out, run(settings_with(10, 0.0, 999), state));
  }
}

TEST_F(TinyLmSampler, TopKOneAndTinyTopPAreGreedy) {
  const auto greedy = run(settings_with(10, 0.0, 1)).sequences[0].tokens;
  SampleSettings top_k = settings_with(10, 1.5, 5);
  top_k.params.top_k = 1;
  EXPECT_EQ(run(top_k).sequences[0].tokens, greedy);
  SampleSettings top_p = settings_with(10, 1.5, 5);
  top_p.params.top_p = 1e-9;
  EXPECT_EQ(run(top_p).sequences[0].tokens, greedy);
}

TEST_F(TinyLmSampler, TopKRestrictsTheCandidates) {
  SampleSettings s = settings_with(1, 3.0, 0);
  s.params.top_k = 3;
  const std::vector<double> logprobs = distribution_after(prompt.to_ints());
  std::vector<double> sorted = logprobs;
  std::sort(sorted.rbegin(), sorted.rend());
  std::set<TokenId> seen;
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    s.params.seed = seed;
    const TokenId token = run(s).sequences[0].tokens[0];
    EXPECT_GE(logprobs[token], sorted[2]);
    seen.insert(token);
  }
  EXPECT_EQ(seen.size(), 3u);  // a hot temperature spreads the draws over all three
}

TEST_F(TinyLmSampler, SampledLogprobsEqualForwardLogprobs) {
  LoraState lora = trained_lora();
  for (LoraState* state : {static_cast<LoraState*>(nullptr), &lora}) {
    SampleSettings s = settings_with(15, 0.7, 3);
    s.params.top_k = 20;
    const SampledSequence seq = run(s, state).sequences[0];
    ASSERT_TRUE(seq.logprobs.has_value());
    EXPECT_EQ(*seq.logprobs, forward_logprobs(seq.tokens, state));
  }
}

TEST_F(TinyLmSampler, StopTokenIsIncludedAndReasonIsStop) {
  const auto greedy = run(settings_with(12, 0.0, 1)).sequences[0].tokens;
  const TokenId stop_token = greedy[4];
  const auto first = std::find(greedy.begin(), greedy.end(), stop_token) - greedy.begin();
  SampleSettings s = settings_with(12, 0.0, 1);
  s.params.stop = StopCondition(std::vector<TokenId>{stop_token, kSamplerVocab + 5});
  const SampledSequence seq = run(s).sequences[0];
  EXPECT_EQ(seq.stop_reason, StopReason::stop);
  EXPECT_EQ(seq.tokens, std::vector<TokenId>(greedy.begin(), greedy.begin() + first + 1));
}

TEST_F(TinyLmSampler, StopStringsMatchTheDetokenizedText) {
  const auto greedy = run(settings_with(12, 0.0, 1)).sequences[0].tokens;
  const std::string needle = "[" + std::to_string(greedy[5]) + "]";
  const auto first = std::find(greedy.begin(), greedy.end(), greedy[5]) - greedy.begin();
  const Detokenizer detok = bracket_text;
  for (const StopCondition& stop : {StopCondition(needle), StopCondition(std::vector<std::string>{"nope", needle})}) {
    SampleSettings s = settings_with(12, 0.0, 1);
    s.params.stop = stop;
    const SampledSequence seq = run(s, nullptr, detok).sequences[0];
    EXPECT_EQ(seq.stop_reason, StopReason::stop);
    EXPECT_EQ(seq.tokens.size(), static_cast<std::size_t>(first + 1));
    // Without a detokenizer stop strings cannot match.
    EXPECT_EQ(run(s).sequences[0].stop_reason, StopReason::length);
  }
}

TEST_F(TinyLmSampler, MaxTokensEndsWithReasonLength) {
  SampleSettings s = settings_with(7, 1.0, 2);
  s.params.stop = StopCondition(std::vector<std::string>{"never appears"});
  const SampledSequence seq = run(s, nullptr, bracket_text).sequences[0];
  EXPECT_EQ(seq.stop_reason, StopReason::length);
  EXPECT_EQ(seq.tokens.size(), 7u);
  EXPECT_EQ(seq.logprobs->size(), 7u);
}

TEST_F(TinyLmSampler, PromptLogprobsAndTopkPromptLogprobs) {
  SampleSettings s = settings_with(1, 1.0, 0);
  s.prompt_logprobs = true;
  s.topk_prompt_logprobs = 4;
  const SampleResponse out = run(s);
  const std::vector<TokenId> tokens = prompt.to_ints();
  ASSERT_TRUE(out.prompt_logprobs && out.topk_prompt_logprobs);
  ASSERT_EQ(out.prompt_logprobs->size(), tokens.size());
  ASSERT_EQ(out.topk_prompt_logprobs->size(), tokens.size());
  EXPECT_FALSE((*out.prompt_logprobs)[0].has_value());
  EXPECT_FALSE((*out.topk_prompt_logprobs)[0].has_value());
  const std::vector<float> forward =
      logprobs_of(forward_base(base, ForwardBackwardInput({cross_entropy_datum(tokens)}, loss_fn::cross_entropy)), 0);
  for (std::size_t i = 1; i < tokens.size(); ++i) {
    ASSERT_TRUE((*out.prompt_logprobs)[i].has_value());
    EXPECT_EQ(*(*out.prompt_logprobs)[i], forward[i - 1]);
    const auto& top = *(*out.topk_prompt_logprobs)[i];
    ASSERT_EQ(top.size(), 4u);
    for (std::size_t k = 1; k < top.size(); ++k) EXPECT_GE(top[k - 1].second, top[k].second);
    EXPECT_GE(top[0].second, forward[i - 1]);
    const std::vector<double> full = distribution_after(std::vector<TokenId>(tokens.begin(), tokens.begin() + i));
    EXPECT_EQ(top[0].first, std::max_element(full.begin(), full.end()) - full.begin());
  }
}

TEST_F(TinyLmSampler, NoPromptLogprobsUnlessAsked) {
  const SampleResponse out = run(settings_with(2, 1.0, 0));
  EXPECT_FALSE(out.prompt_logprobs.has_value());
  EXPECT_FALSE(out.topk_prompt_logprobs.has_value());
}

TEST_F(TinyLmSampler, TrainedWeightsChangeTheLogprobs) {
  const LoraState lora = trained_lora();
  SampleSettings s = settings_with(1, 1.0, 0);
  s.prompt_logprobs = true;
  const auto base_out = run(s);
  const auto trained_out = run(s, &lora);
  EXPECT_NE(base_out.prompt_logprobs, trained_out.prompt_logprobs);
  // A fresh adapter (B = 0) is exactly the base model.
  const LoraState fresh(base, lora_settings(4, 9));
  EXPECT_EQ(run(s, &fresh), base_out);
}

TEST_F(TinyLmSampler, ConcurrentCallsOnSharedStateAgree) {
  const LoraState lora = trained_lora();
  SampleSettings s = settings_with(16, 1.0, 77);
  s.num_samples = 2;
  s.prompt_logprobs = true;
  const SampleResponse expected = run(s, &lora);
  std::vector<SampleResponse> results(4);
  std::vector<std::thread> threads;
  for (auto& result : results) threads.emplace_back([&] { result = sample(base, &lora, prompt, s, bracket_text); });
  for (auto& t : threads) t.join();
  for (const auto& result : results) EXPECT_EQ(result, expected);
}

TEST_F(TinyLmSampler, InvalidRequestsNameTheField) {
  auto expect_error = [&](const SampleSettings& s, const ModelInput& input, const std::string& field) {
    try {
      sample(base, nullptr, input, s, {});
      ADD_FAILURE() << "no error for " << field;
    } catch (const UserError& e) {
      EXPECT_THAT(e.what(), HasSubstr(field));
    }
  };
  SampleSettings s = settings_with(0, 1.0, 0);
  expect_error(s, prompt, "sampling_params.max_tokens");
  s = settings_with(128 - 5, 1.0, 0);  // prompt of 6 + 123 > max_context 128
  expect_error(s, prompt, "sampling_params.max_tokens");
  s = settings_with(4, -0.5, 0);
  expect_error(s, prompt, "sampling_params.temperature");
  s = settings_with(4, 1.0, 0);
  s.params.top_p = 0.0;
  expect_error(s, prompt, "sampling_params.top_p");
  s = settings_with(4, 1.0, 0);
  s.params.top_k = -3;
  expect_error(s, prompt, "sampling_params.top_k");
  s = settings_with(4, 1.0, 0);
  s.num_samples = 0;
  expect_error(s, prompt, "num_samples");
  s = settings_with(4, 1.0, 0);
  s.topk_prompt_logprobs = -1;
  expect_error(s, prompt, "topk_prompt_logprobs");
  s = settings_with(4, 1.0, 0);
  s.params.stop = StopCondition(std::vector<std::string>{"ok", ""});
  expect_error(s, prompt, "sampling_params.stop[1]");
  s = settings_with(4, 1.0, 0);
  expect_error(s, ModelInput(), "prompt");
  expect_error(s, ModelInput::from_ints(std::vector<TokenId>{1, kSamplerVocab}), "prompt.chunks[0].tokens[1]");
  ModelInput with_image = prompt;
  with_image.append(ImageChunk({1, 2, 3}, ImageFormat::png, 4));
  expect_error(s, with_image, "prompt.chunks[1]");
}

TEST_F(TinyLmSampler, MaxTokensMayFillTheContextExactly) {
  const auto out = run(settings_with(128 - 6, 1.0, 0));
  EXPECT_EQ(out.sequences[0].tokens.size(), 122u);
}

}  // namespace
}  // namespace tinker::local::model
