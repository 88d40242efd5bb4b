// Batches for the training scenarios (doc/bench.md#train, doc/bench.md#rl): token ids every model accepts, and the
// loss inputs each loss function needs.
#pragma once

#include "programs/bench/context.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace tinker::bench {

/// The loss functions the scenarios accept: cross_entropy, importance_sampling, ppo, cispo.
bool known_loss(const std::string& loss);

/// One example of `tokens` tokens with the inputs `loss` needs: target_tokens and weights (cross_entropy), or
/// target_tokens, logprobs and advantages (the RL losses).
Datum make_datum(std::int64_t tokens, std::int64_t salt, const std::string& loss);
/// `batch` such examples.
std::vector<Datum> make_batch(std::int64_t batch, std::int64_t tokens, const std::string& loss);

/// An RL example from a prompt and one sampled continuation: the model reads all but the last token and predicts
/// the rest; the prompt's positions carry no advantage.
Datum rl_datum(const std::vector<TokenId>& prompt, const SampledSequence& sequence, float advantage);

/// A LoRA training client on the target's model and rank.
boost::asio::awaitable<TrainingClient> create_training_client(Bench* bench);

}  // namespace tinker::bench
