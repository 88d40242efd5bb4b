// Shared pieces of the blocking-facade tests: a fixture whose clients are sync::ServiceClients
// aimed at the in-process tinker-local (the fixture's own `io` is not used: the facade brings its
// own io thread), and a tiny cross-entropy dataset.
#pragma once

#include "integration/support/local_service.hpp"

#include <tinker/sync/service_client.hpp>
#include <tinker/types.hpp>

#include <chrono>
#include <cstdint>
#include <future>
#include <string>
#include <vector>

namespace tinker::test {

class SyncService : public LocalService {
 protected:
  ServiceClientOptions service_options() const { return ServiceClientOptions(client_options()); }
  sync::ServiceClient make_sync_service() const { return sync::ServiceClient(service_options()); }
};

/// One cross-entropy datum over `tokens` (all in 0..999): predict tokens[1..] from tokens[..n-1],
/// every position weighted 1.
inline Datum next_token_datum(const std::vector<TokenId>& tokens) {
  std::vector<TokenId> inputs(tokens.begin(), tokens.end() - 1);
  std::vector<std::int64_t> targets(tokens.begin() + 1, tokens.end());
  std::vector<float> weights(targets.size(), 1.0f);
  LossFnInputs loss_inputs;
  loss_inputs.emplace("target_tokens", TensorData(std::move(targets)));
  loss_inputs.emplace("weights", TensorData(std::move(weights)));
  return Datum(ModelInput::from_ints(std::move(inputs)), std::move(loss_inputs));
}

/// A small fixed batch: four short sequences with a repeating pattern the tiny model can learn.
inline std::vector<Datum> tiny_batch() {
  std::vector<Datum> batch;
  for (int sequence = 0; sequence < 4; ++sequence) {
    std::vector<TokenId> tokens;
    for (int position = 0; position < 12; ++position) {
      tokens.push_back(static_cast<TokenId>((100 + 37 * sequence + 5 * (position % 4)) % 1000));
    }
    batch.push_back(next_token_datum(tokens));
  }
  return batch;
}

inline ForwardBackwardInput tiny_cross_entropy_input() {
  return ForwardBackwardInput(tiny_batch(), loss_fn::cross_entropy);
}

/// Waits for `future` at most `timeout`; false if it is not ready by then.
template <class T>
bool ready_within(std::future<T>& future, std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  return future.wait_for(timeout) == std::future_status::ready;
}

}  // namespace tinker::test
