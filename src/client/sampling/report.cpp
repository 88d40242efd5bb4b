#include "client/sampling/report.hpp"

#include "core/wire/endpoint_paths.hpp"
#include "http/observer.hpp"

namespace tinker::client::sampling {
namespace {

BackoffCause cause_of(boost::system::error_code ec) noexcept {
  return ec == errc::payment_required ? BackoffCause::payment_required : BackoffCause::rate_limited;
}

}  // namespace

void report_sampling_retry(detail::ClientHolder& holder, boost::system::error_code ec, const diagnostics& diag,
                           std::chrono::milliseconds delay, int attempt) {
  http::Observer& observer = holder.observer();
  RetryScheduled event;
  event.layer = RetryLayer::sampling;
  event.path = wire::paths::asample.full();
  const std::string reason = observer.redact(http::failure_reason(diag.http_status, ec, diag.message));
  event.reason = reason;
  event.status = diag.http_status;
  event.delay = delay;
  event.attempt = attempt;
  observer.retry_scheduled(event);
}

void report_backpressure(detail::ClientHolder& holder, boost::system::error_code ec, std::int64_t estimated_bytes) {
  const SampleTuning& tuning = holder.sample_tuning();
  BackoffStarted event;
  event.cause = cause_of(ec);
  event.layer = RetryLayer::sampling;
  event.path = wire::paths::asample.full();
  event.delay = estimated_bytes <= tuning.large_prompt_bytes ? tuning.backoff_short : tuning.backoff_long;
  holder.observer().backoff_started(event);
}

void report_backpressure_over(detail::ClientHolder& holder, boost::system::error_code ec,
                              std::chrono::steady_clock::time_point since) {
  BackoffEnded event;
  event.cause = cause_of(ec);
  event.layer = RetryLayer::sampling;
  event.path = wire::paths::asample.full();
  event.waited = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - since);
  holder.observer().backoff_ended(event);
}

}  // namespace tinker::client::sampling
