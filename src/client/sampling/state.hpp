// The immutable configuration snapshot of a SamplingClient (doc/architecture.md: read without locks;
// the request counter is the only mutable part, and it is atomic).
#pragma once

#include "client/async/complete.hpp"
#include "client/sampling/completions.hpp"
#include "client/sampling/retry.hpp"
#include "client/session/holder.hpp"

#include <tinker/sampling_client.hpp>
#include <tinker/service_client.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace tinker::detail {

class SamplingState {
 public:
  SamplingState(std::shared_ptr<ClientHolder> holder_, std::string sampling_session_id_, std::string base_model_,
                const SamplingClientOptions& options = {})
      : holder(std::move(holder_)),
        sampling_session_id(std::move(sampling_session_id_)),
        base_model(std::move(base_model_)),
        record_stability_info(options.record_stability_info),
        retry(make_retry_handler(*holder, options.retry)),
        completions(std::make_shared<client::sampling::CompletionWatcher>(holder, sampling_session_id)) {}

  const std::shared_ptr<ClientHolder> holder;
  const std::string sampling_session_id;
  const std::string base_model;  ///< empty when the sampler was made from a checkpoint path
  /// Sent as SampleRequest::record_stability_info with every request (SamplingClientOptions).
  const bool record_stability_info;
  /// seq_id of the next asample (doc/sampling.md#creating-a-sampler: from 0 per sampling session).
  mutable std::atomic<std::int64_t> next_seq_id{0};
  /// Sample resubmission of this sampling session (doc/protocol.md#sample-resubmission); its state lives on the io
  /// thread.
  const std::shared_ptr<client::sampling::SampleRetryHandler> retry;
  /// The batched long-poll of this sampler's results (doc/sampling.md#batched-result-polling); io thread only.
  const std::shared_ptr<client::sampling::CompletionWatcher> completions;

  /// Set up by the client's retry settings (doc/sampling.md#retry-settings) within the holder's client/config (known
  /// once the session exists); the holder's internal sample tuning overrides both.
  static std::shared_ptr<client::sampling::SampleRetryHandler> make_retry_handler(ClientHolder& holder,
                                                                                  const SamplingRetryConfig& config);
};

}  // namespace tinker::detail

namespace tinker::client::sampling {

SamplingClient make_sampling_client(std::shared_ptr<detail::ClientHolder> holder, std::string sampling_session_id,
                                    std::string base_model, const SamplingClientOptions& options = {});

/// POST create_sampling_session on a base model or a tinker:// sampler path (doc/sampling.md#creating-a-sampler), after
/// the session bootstrap. Exactly one of the two must be given, and `options.retry` must be valid (invalid_argument
/// otherwise).
boost::asio::awaitable<async::OperationResult<SamplingClient>> create_sampling_session_op(
    std::shared_ptr<detail::ClientHolder> holder, SamplingSource source, SamplingClientOptions options,
    diagnostics& diag);
/// The same with the default retry settings.
boost::asio::awaitable<async::OperationResult<SamplingClient>> create_sampling_session_op(
    std::shared_ptr<detail::ClientHolder> holder, SamplingSource source, diagnostics& diag);

}  // namespace tinker::client::sampling
