// The immutable configuration snapshot of a SamplingClient (architecture.md: read without locks;
// the request counter is the only mutable part, and it is atomic).
#pragma once

#include "client/complete.hpp"
#include "client/holder.hpp"
#include "client/sample_retry.hpp"

#include <tinker/sampling_client.hpp>
#include <tinker/service_client.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace tinker::detail {

class SamplingState {
 public:
  SamplingState(std::shared_ptr<ClientHolder> holder_, std::string sampling_session_id_, std::string base_model_)
      : holder(std::move(holder_)),
        sampling_session_id(std::move(sampling_session_id_)),
        base_model(std::move(base_model_)),
        retry(make_retry_handler(*holder)) {}

  const std::shared_ptr<ClientHolder> holder;
  const std::string sampling_session_id;
  const std::string base_model;  ///< empty when the sampler was made from a checkpoint path
  /// seq_id of the next asample (spec 12.1: from 0 per sampling session).
  mutable std::atomic<std::int64_t> next_seq_id{0};
  /// Retry layer 3 of this sampling session (spec 5.3); its state lives on the io thread.
  const std::shared_ptr<client::SampleRetryHandler> retry;

  /// Sized by the holder's client/config (known once the session exists) and sample tuning.
  static std::shared_ptr<client::SampleRetryHandler> make_retry_handler(ClientHolder& holder);
};

SamplingClient make_sampling_client(std::shared_ptr<ClientHolder> holder, std::string sampling_session_id,
                                    std::string base_model);

/// POST create_sampling_session on a base model or a tinker:// sampler path (spec 12.1), after
/// the session bootstrap. Exactly one of the two must be given (invalid_argument otherwise).
boost::asio::awaitable<OperationResult<SamplingClient>> create_sampling_session_op(std::shared_ptr<ClientHolder> holder,
                                                                                   SamplingSource source,
                                                                                   diagnostics& diag);

}  // namespace tinker::detail
