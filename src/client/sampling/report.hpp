// What sampling tells the observer (doc/observability.md): sample resubmissions and the shared
// back-off after a 429 or a 402. Out of the coroutines on purpose: their frames stay small, and
// the sampling hot path pays one branch (holder.observer().watches_events()) when nobody listens.
#pragma once

#include "client/session/holder.hpp"

#include <tinker/error.hpp>

#include <chrono>
#include <cstdint>

namespace tinker::client::sampling {

/// A fresh sampling attempt (number `attempt`) after `ec`, in `delay`.
void report_sampling_retry(detail::ClientHolder& holder, boost::system::error_code ec, const diagnostics& diag,
                           std::chrono::milliseconds delay, int attempt);

/// A 429 (or a 402 in the billing window) made the shared back-off start; `estimated_bytes`
/// chooses its length as SampleDispatch::note_backpressure does.
void report_backpressure(detail::ClientHolder& holder, boost::system::error_code ec, std::int64_t estimated_bytes);

/// The sample that reported the back-off above goes out again after waiting since `since`.
void report_backpressure_over(detail::ClientHolder& holder, boost::system::error_code ec,
                              std::chrono::steady_clock::time_point since);

}  // namespace tinker::client::sampling
