// sample(): autoregressive generation with a KV cache, prompt logprobs and top-k prompt logprobs.
//
// Choices (the protocol leaves them to the server; doc/local.md#the-model):
// * Returned logprobs are the model's log-probabilities at temperature 1 of each chosen token,
//   before top_k / top_p truncation: the same numbers forward_backward reports for those tokens
//   with the same weights (both run through step(), so they are bit-identical), which is what
//   RL code compares sampling logprobs against.
// * top_k <= 0 means no limit (the wire default is -1); top_k >= vocab_size is no limit either.
// * top_k is applied first, then top_p (nucleus over the temperature-scaled, top-k-truncated
//   distribution; at least one token is always kept). Ties in probability break towards the
//   lower token id, as does the temperature-0 argmax.
// * Stop strings are matched anywhere in detokenize(generated tokens) after each token; stop
//   token ids on the chosen token. The stopping token is included in the output. An unset stop
//   stops at the catalogue entry's eos_token_id (if it has one); a set stop, [] included, replaces it.
// * Sample i draws from its own xoshiro256** stream derive_seed(seed, i), so the samples of one
//   request differ from each other and a request is reproducible for a given seed.
#include "programs/local/model/losses.hpp"
#include "programs/local/model/random.hpp"
#include "programs/local/model/tiny_lm_internal.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <variant>

namespace tinker::local::model {
namespace {

struct StopRules {
  std::vector<std::string> strings;
  std::vector<TokenId> tokens;
};

// doc/local.md#the-model: unset stop keeps the implicit end-of-sequence stop; a set one (an empty list
// included) replaces it.
StopRules parse_stop(const std::optional<StopCondition>& stop, std::optional<TokenId> eos_token_id) {
  StopRules rules;
  if (!stop) {
    if (eos_token_id) rules.tokens.push_back(*eos_token_id);
    return rules;
  }
  if (const auto* one = std::get_if<std::string>(&*stop)) {
    rules.strings.push_back(*one);
  } else if (const auto* many = std::get_if<std::vector<std::string>>(&*stop)) {
    rules.strings = *many;
  } else {
    rules.tokens = std::get<std::vector<TokenId>>(*stop);
  }
  for (std::size_t i = 0; i < rules.strings.size(); ++i) {
    if (rules.strings[i].empty()) {
      throw UserError(std::holds_alternative<std::string>(*stop)
                          ? std::string("sampling_params.stop: empty stop string")
                          : "sampling_params.stop[" + std::to_string(i) + "]: empty stop string");
    }
  }
  return rules;
}

void validate_settings(const SampleSettings& settings) {
  const SamplingParams& p = settings.params;
  if (settings.num_samples < 1) {
    throw UserError("num_samples: " + std::to_string(settings.num_samples) + " must be >= 1");
  }
  if (!std::isfinite(p.temperature) || p.temperature < 0.0) {
    throw UserError("sampling_params.temperature: " + std::to_string(p.temperature) + " must be finite and >= 0");
  }
  if (p.top_k < -1) {
    throw UserError("sampling_params.top_k: " + std::to_string(p.top_k) + " must be >= 1, or -1 or 0 for no limit");
  }
  if (!(p.top_p > 0.0 && p.top_p <= 1.0)) {
    throw UserError("sampling_params.top_p: " + std::to_string(p.top_p) + " must be in (0, 1]");
  }
  if (settings.topk_prompt_logprobs < 0) {
    throw UserError("topk_prompt_logprobs: " + std::to_string(settings.topk_prompt_logprobs) + " must be >= 0");
  }
}

// Token ids ordered by descending logprob, ties by ascending id; only the first `count` sorted.
std::vector<TokenId> best_tokens(const double* logprobs, int vocab, int count) {
  std::vector<TokenId> order(static_cast<std::size_t>(vocab));
  std::iota(order.begin(), order.end(), 0);
  auto better = [logprobs](TokenId a, TokenId b) {
    return logprobs[a] > logprobs[b] || (logprobs[a] == logprobs[b] && a < b);
  };
  std::partial_sort(order.begin(), order.begin() + count, order.end(), better);
  order.resize(static_cast<std::size_t>(count));
  return order;
}

TokenId argmax(const double* logprobs, int vocab) {
  TokenId best = 0;
  for (TokenId i = 1; i < vocab; ++i) {
    if (logprobs[i] > logprobs[best]) best = i;
  }
  return best;
}

TokenId choose_token(const double* logprobs, int vocab, const SamplingParams& p, Rng& rng) {
  if (p.temperature == 0.0) return argmax(logprobs, vocab);
  const double max_logprob = logprobs[argmax(logprobs, vocab)];
  const double inv_temperature = 1.0 / p.temperature;
  auto weight = [&](TokenId i) { return std::exp((logprobs[i] - max_logprob) * inv_temperature); };

  const bool limit_k = p.top_k > 0 && p.top_k < vocab;
  const bool nucleus = p.top_p < 1.0;
  std::vector<TokenId> candidates;
  if (limit_k || nucleus) {
    candidates = best_tokens(logprobs, vocab, limit_k ? static_cast<int>(p.top_k) : vocab);
  } else {
    candidates.resize(static_cast<std::size_t>(vocab));
    std::iota(candidates.begin(), candidates.end(), 0);
  }
  std::vector<double> weights(candidates.size());
  double total = 0.0;
  for (std::size_t i = 0; i < candidates.size(); ++i) total += (weights[i] = weight(candidates[i]));
  if (nucleus) {
    // Smallest prefix (in descending probability) whose mass reaches top_p.
    double mass = 0.0;
    std::size_t keep = 0;
    while (keep < candidates.size() && (keep == 0 || mass < p.top_p * total)) mass += weights[keep++];
    candidates.resize(keep);
    weights.resize(keep);
    total = mass;
  }
  const double u = rng.uniform() * total;
  double cumulative = 0.0;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    cumulative += weights[i];
    if (u < cumulative) return candidates[i];
  }
  return candidates.back();
}

bool hits_stop(const StopRules& rules, const std::vector<TokenId>& generated, const Detokenizer& detokenize) {
  if (std::find(rules.tokens.begin(), rules.tokens.end(), generated.back()) != rules.tokens.end()) return true;
  if (rules.strings.empty() || !detokenize) return false;
  const std::string text = detokenize(std::span<const TokenId>(generated));
  return std::any_of(rules.strings.begin(), rules.strings.end(),
                     [&](const std::string& s) { return text.find(s) != std::string::npos; });
}

SampledSequence generate(const EffectiveWeights& weights, Activations acts, std::vector<double> logprobs,
                         std::int64_t max_tokens, const SampleSettings& settings, const StopRules& stop,
                         const Detokenizer& detokenize, Rng rng) {
  const int vocab = weights.arch.vocab_size;
  SampledSequence sequence;
  sequence.logprobs.emplace();
  for (std::int64_t n = 0; n < max_tokens; ++n) {
    const TokenId token = choose_token(logprobs.data(), vocab, settings.params, rng);
    sequence.tokens.push_back(token);
    sequence.logprobs->push_back(static_cast<float>(logprobs[token]));
    if (hits_stop(stop, sequence.tokens, detokenize)) {
      sequence.stop_reason = StopReason::stop;
      return sequence;
    }
    if (n + 1 < max_tokens) step(weights, token, acts, logprobs.data());
  }
  sequence.stop_reason = StopReason::length;
  return sequence;
}

}  // namespace

SampleResponse sample(const BaseModel& base, const LoraState* lora, const ModelInput& prompt,
                      const SampleSettings& settings, const Detokenizer& detokenize) {
  const Architecture& arch = base.arch();
  const LoraState::Impl* impl = lora != nullptr ? &lora->impl() : nullptr;
  if (impl != nullptr) check_same_architecture(base, *impl);
  validate_settings(settings);
  const StopRules stop = parse_stop(settings.params.stop, settings.eos_token_id);
  const InputSequence sequence = read_model_input(prompt, "prompt", arch);
  if (sequence.size() == 0) throw UserError("prompt: must contain at least one token");
  const std::int64_t max_tokens = settings.params.max_tokens.value_or(settings.default_max_tokens);
  if (max_tokens < 1) throw UserError("sampling_params.max_tokens: " + std::to_string(max_tokens) + " must be >= 1");
  const auto prompt_length = static_cast<std::int64_t>(sequence.size());
  if (prompt_length > arch.max_context || max_tokens > arch.max_context - prompt_length) {
    throw UserError("sampling_params.max_tokens: prompt length " + std::to_string(prompt_length) + " + max_tokens " +
                    std::to_string(max_tokens) + " exceeds the model's max context " +
                    std::to_string(arch.max_context));
  }

  const EffectiveWeights weights(base, impl);
  const int vocab = arch.vocab_size;
  const int topk = static_cast<int>(std::min<std::int64_t>(settings.topk_prompt_logprobs, vocab));
  SampleResponse response;
  if (settings.prompt_logprobs) response.prompt_logprobs.emplace(1, std::nullopt);
  if (topk > 0) response.topk_prompt_logprobs.emplace(1, std::nullopt);

  // The prompt pass fills the KV cache once; every sample continues from a copy of it.
  Activations acts(arch, false);
  std::vector<double> logprobs(static_cast<std::size_t>(vocab));
  for (std::size_t t = 0; t < sequence.size(); ++t) {
    step(weights, sequence, t, acts, logprobs.data());
    if (t + 1 == sequence.size()) break;
    if (sequence.is_image(t + 1)) {  // an image cell is no token: nothing to score it by
      if (response.prompt_logprobs) response.prompt_logprobs->emplace_back(std::nullopt);
      if (topk > 0) response.topk_prompt_logprobs->emplace_back(std::nullopt);
      continue;
    }
    const TokenId next = sequence.tokens[t + 1];
    if (response.prompt_logprobs) response.prompt_logprobs->emplace_back(static_cast<float>(logprobs[next]));
    if (topk > 0) {
      std::vector<TopkEntry> entries;
      for (TokenId id : best_tokens(logprobs.data(), vocab, topk)) {
        entries.emplace_back(id, static_cast<float>(logprobs[id]));
      }
      response.topk_prompt_logprobs->emplace_back(std::move(entries));
    }
  }

  const std::uint64_t seed = settings.params.seed.value_or(settings.fallback_seed);
  for (std::int64_t i = 0; i < settings.num_samples; ++i) {
    Rng rng(derive_seed(seed, static_cast<std::uint64_t>(i)));
    response.sequences.push_back(generate(weights, acts, logprobs, max_tokens, settings, stop, detokenize, rng));
  }
  return response;
}

}  // namespace tinker::local::model
