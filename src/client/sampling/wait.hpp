// The rest of an accepted sample's task (doc/sampling.md#backpressure-and-retries): the poll of its
// ticket, and a fresh attempt (submit.hpp) when the result is lost (410) or a retryable failure
// escapes the lower layers.
#pragma once

#include "client/sampling/submit.hpp"

#include <boost/asio/awaitable.hpp>

#include <memory>

namespace tinker::client::sampling {

/// The rest of an accepted operation's task: polls the ticket and settles `core`; with resubmission,
/// a lost result or a retryable failure starts a fresh attempt (submit + poll); `op.decode`
/// makes the result. Everything is owned by the caller's frame (this frame stays small: it is
/// held while the result is pending).
boost::asio::awaitable<void> sample_until_done(const SamplingState& s, const std::shared_ptr<FutureCore>& core,
                                               TaskControl& control, SampleOperation& op, UntypedAPIFuture& ticket);

}  // namespace tinker::client::sampling
