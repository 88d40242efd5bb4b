// The retrieve_future poll loop (doc/protocol.md#futures). A small state machine (PollLoop) decides what each
// answer means; the coroutine only sends, sleeps and stops.
#include "client/futures/poll.hpp"

#include "core/types/exception_error.hpp"
#include "core/wire/endpoint_paths.hpp"
#include "core/wire/json_writer.hpp"
#include "http/observer.hpp"

#include <tinker/codec.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace tinker::client::futures {
namespace {

namespace asio = boost::asio;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int max_bad_request_retries = 3;
// A 200 whose body is neither a result nor a status (cut short behind a proxy, garbled): asking
// again is safe, so the loop does, this many times in a row, waiting unreadable_backoff_base,
// then twice that, and so on, before the operation fails (doc/protocol.md#future-polling).
constexpr int max_unreadable_answers = 5;
constexpr milliseconds unreadable_backoff_base{100};
constexpr seconds max_backoff{30};
constexpr seconds warning_interval{60};

// What the loop does after an answer, without the outcome: what the poll's frame holds (the
// outcome goes straight into the caller's).
class Move {
 public:
  enum class Action { finish, poll_again, sleep_then_poll };

  Action action = Action::poll_again;
  milliseconds delay{0};
  bool backs_off = false;  ///< the sleep is a 429's back-off
};

// What to do after one answer.
class Step : public Move {
 public:
  static Step finish(PollOutcome outcome) {
    Step step;
    step.action = Action::finish;
    step.outcome = std::move(outcome);
    return step;
  }
  static Step poll_again() { return Step(); }
  static Step sleep(milliseconds delay) {
    Step step;
    step.action = Action::sleep_then_poll;
    step.delay = delay;
    return step;
  }

  bool asks_again_after_unreadable = false;  ///< a 2xx answer that could not be read: counted as a retry
  PollOutcome outcome;
};

}  // namespace

// Written directly rather than through the JSON codec (it is sent with every poll, and the codec
// would first copy the id into a RetrieveFutureRequest): the same text to_json writes.
void write_poll_body(std::string& body, std::string_view request_id, bool allow_metadata_only) {
  if (!wire::is_valid_utf8(request_id)) {
    body = to_json(RetrieveFutureRequest(std::string(request_id), allow_metadata_only));  // throws, as it always did
    return;
  }
  constexpr std::string_view head = R"({"request_id":)";
  constexpr std::string_view with_metadata = R"(,"allow_metadata_only":true})";
  constexpr std::string_view without_metadata = R"(,"allow_metadata_only":false})";
  body.clear();
  body.reserve(head.size() + request_id.size() + 2 + without_metadata.size());
  body += head;
  wire::append_json_string(body, request_id);
  body += allow_metadata_only ? with_metadata : without_metadata;
}

namespace {

PollOutcome failure(boost::system::error_code ec, diagnostics diag) {
  PollOutcome outcome;
  outcome.error = ec;
  outcome.diag = std::move(diag);
  return outcome;
}

// doc/observability.md: a future's state as the observer hears it. The paused states are the
// queue's; `unknown` counts as waiting.
FutureState state_of(QueueState queue_state) noexcept {
  const bool paused = queue_state == QueueState::paused_capacity || queue_state == QueueState::paused_rate_limit;
  return paused ? FutureState::paused : FutureState::waiting;
}

void report_state(const PollRequest& request, const PollProgress& progress, FutureState state,
                  boost::system::error_code error, TimePoint now) {
  FutureStateChanged event;
  event.request_id = request.request_id;
  event.operation = request_type_header(request.type);
  event.state = state;
  event.queue_state = progress.queue_state;
  if (progress.queue_state_reason) event.queue_state_reason = *progress.queue_state_reason;
  event.waited = progress.waited(now);
  const std::string error_text = error ? error.message() : std::string();
  event.error = error_text;
  request.observer->future_state_changed(event);
}

class PollLoop {
 public:
  PollLoop(PollRequest& request, PollProgress& progress, http::Clock& clock, const ClientOptions& options)
      : request_(request), progress_(progress), clock_(clock), options_(options) {
    if (progress_.started == TimePoint{}) progress_.started = clock_.now();
  }

  bool deadline_passed() const { return request_.deadline && clock_.now() >= *request_.deadline; }

  http::Request next_request() {
    http::Request poll(http::Method::post, http::RequestPath::constant(wire::paths::retrieve_future.full()),
                       http::PoolKind::futures);
    write_poll_body(poll.body, request_.request_id, allow_metadata_only_);
    poll.content_type = "application/json";
    if (request_.protobuf_result) poll.accept = "application/x-protobuf";
    poll.max_retries = 0;
    poll.timeout = options_.timeouts.retrieve_future;
    read_timeout_is_deadline_ = false;
    if (request_.deadline) {
      const auto remaining = std::chrono::duration_cast<milliseconds>(*request_.deadline - clock_.now());
      if (remaining < *poll.timeout) {
        poll.timeout = std::max(remaining, milliseconds(1));
        read_timeout_is_deadline_ = true;
      }
    }
    poll.headers.reserve(3);
    poll.headers.emplace_back(http::HeaderName("X-Tinker-Request-Iteration"), std::to_string(iteration_));
    poll.headers.emplace_back(http::HeaderName("X-Tinker-Request-Type"), request_type_header(request_.type));
    if (iteration_ == 0) {
      poll.headers.emplace_back(http::HeaderName("X-Tinker-Create-Promise-Roundtrip-Time"),
                                roundtrip_seconds_text(request_.create_roundtrip));
    }
    ++iteration_;
    ++progress_.polls_sent;
    return poll;
  }

  Step on_answer(boost::system::error_code ec, http::Response response, diagnostics diag) {
    if (ec == errc::cancelled) return Step::finish(cancelled());
    if (!ec) return on_success_status(std::move(response));
    const int status = response.status;
    if (status == 0) return on_transport_failure(ec, std::move(diag));
    if (status != 429) connection_error_retries_ = 0;
    if (status == 408) {
      if (const auto answer = queue_state_of_408(response)) {
        bad_request_retries_ = 0;
        note_queue_state(*answer);
      }
      return Step::poll_again();
    }
    if (status == 429) {
      Step step = Step::sleep(next_backoff());
      step.backs_off = true;
      return step;
    }
    if (status >= 500) return Step::poll_again();
    if (status == 410) return Step::finish(expired(std::move(diag)));
    if (status == 400 && bad_request_retries_ < max_bad_request_retries) {
      ++bad_request_retries_;
      return Step::poll_again();
    }
    if (status == 402 && request_.billing != nullptr) {
      if (auto pause = request_.billing->on_payment_required(clock_.now(), request_.billing_max_pause)) {
        if (request_.warn && request_.billing->should_warn(clock_.now())) {
          request_.warn("Tinker billing hold (HTTP 402): waiting for the result of " + request_.request_id);
        }
        return Step::sleep(*pause);
      }
    }
    return Step::finish(fatal(ec, std::move(diag)));
  }

  PollOutcome cancelled() const {
    diagnostics diag;
    diag.request_id = request_.request_id;
    diag.message = "waiting for future " + request_.request_id + " was cancelled";
    return failure(make_error_code(errc::cancelled), std::move(diag));
  }

  PollOutcome timed_out() const {
    diagnostics diag;
    diag.request_id = request_.request_id;
    diag.message = "gave up waiting for future " + request_.request_id + " at its deadline, after " +
                   std::to_string(progress_.waited(clock_.now()).count()) + " ms and " +
                   std::to_string(progress_.polls_sent) + " polls";
    return failure(make_error_code(errc::timeout), std::move(diag));
  }

  // A sleep never runs past the deadline: the loop then stops with timed_out().
  milliseconds capped(milliseconds delay) const {
    if (!request_.deadline) return delay;
    const auto remaining = std::chrono::duration_cast<milliseconds>(*request_.deadline - clock_.now());
    return std::clamp(remaining, milliseconds(0), delay);
  }

 private:
  Step on_success_status(http::Response response) {
    connection_error_retries_ = 0;
    const PollAnswer answer = classify_answer(response);
    if (answer.kind != AnswerKind::malformed) unreadable_answers_ = 0;
    switch (answer.kind) {
      case AnswerKind::result: {
        PollOutcome outcome;
        outcome.result = std::move(response);
        return Step::finish(std::move(outcome));
      }
      case AnswerKind::try_again: note_queue_state(answer); return Step::poll_again();
      case AnswerKind::complete_metadata: {
        if (!allow_metadata_only_) {
          return Step::finish(answer_failure(errc::protocol_error, response,
                                             "the server answered complete_metadata to a poll that did not allow it"));
        }
        allow_metadata_only_ = false;
        progress_.payload_size = answer.payload_size;
        return Step::poll_again();
      }
      case AnswerKind::failed: {
        // The exchange succeeded (HTTP 200) and the operation failed: no HTTP status in the
        // diagnostics, or the error would read as an HTTP failure with status 200.
        diagnostics diag;
        diag.request_id = request_.request_id;
        diag.message = answer.error_message;
        diag.category = answer.category;
        return Step::finish(failure(make_error_code(errc::request_failed), std::move(diag)));
      }
      case AnswerKind::malformed: break;
    }
    std::string message =
        "retrieve_future answered something that is neither a result nor a status: " + answer.problem +
        " (content type '" + std::string(response.content_type()) + "')";
    if (unreadable_answers_ < max_unreadable_answers) return ask_again_after_unreadable(response, message);
    const bool json_or_unlabelled = response.is_json() || response.content_type().empty();
    const errc code = json_or_unlabelled ? errc::decode_error : errc::protocol_error;
    message += "; " + std::to_string(unreadable_answers_ + 1) + " such answers in a row";
    return Step::finish(answer_failure(code, response, std::move(message)));
  }

  Step ask_again_after_unreadable(const http::Response& response, const std::string& problem) {
    const milliseconds delay = unreadable_backoff_base * (1 << unreadable_answers_);
    ++unreadable_answers_;
    if (request_.warn) {
      std::string line = "future " + request_.request_id + ": " + problem;
      const std::string_view server_id = response.header("x-request-id");
      if (!server_id.empty()) line += " (request id " + std::string(server_id) + ")";
      line += "; asking again in " + std::to_string(delay.count()) + " ms (" + std::to_string(unreadable_answers_) +
              " of " + std::to_string(max_unreadable_answers) + ")";
      request_.warn(line);
    }
    Step step = Step::sleep(delay);
    step.asks_again_after_unreadable = true;
    return step;
  }

  PollOutcome answer_failure(errc code, const http::Response& response, std::string message) const {
    diagnostics diag;
    diag.http_status = response.status;
    diag.request_id = request_.request_id;
    diag.message = std::move(message);
    diag.body_excerpt = response.body.substr(0, 512);
    return failure(make_error_code(code), std::move(diag));
  }

  Step on_transport_failure(boost::system::error_code ec, diagnostics diag) {
    if (ec == errc::timeout && read_timeout_is_deadline_) return Step::finish(timed_out());
    if (ec == errc::connection_failed || ec == errc::timeout) return Step::sleep(next_backoff());
    return Step::finish(fatal(ec, std::move(diag)));
  }

  // min(2^c, 30) s with c = consecutive 429s and connection failures (doc/protocol.md#futures).
  milliseconds next_backoff() {
    const int c = std::min(connection_error_retries_++, 5);
    return std::min<milliseconds>(seconds(1LL << c), max_backoff);
  }

  PollOutcome expired(diagnostics diag) const {
    with_future_id(diag);
    diag.message = "future " + request_.request_id +
                   " expired (HTTP 410): the server no longer has its result. A sampling request may be "
                   "resubmitted; a training operation must not be, it may already have run";
    return failure(make_error_code(errc::gone), std::move(diag));
  }

  PollOutcome fatal(boost::system::error_code ec, diagnostics diag) const {
    with_future_id(diag);
    diag.message = "retrieving the result of future " + request_.request_id + ": " + diag.message;
    return failure(ec, std::move(diag));
  }

  void with_future_id(diagnostics& diag) const {
    if (diag.request_id.empty()) diag.request_id = request_.request_id;
  }

  void note_queue_state(const PollAnswer& answer) {
    if (answer.queue_state == QueueState::unknown && !answer.queue_state_reason) return;
    const TimePoint now = clock_.now();
    const bool changed =
        answer.queue_state != progress_.queue_state || answer.queue_state_reason != progress_.queue_state_reason;
    progress_.queue_state = answer.queue_state;
    progress_.queue_state_reason = answer.queue_state_reason;
    if (changed && request_.observer != nullptr) {
      report_state(request_, progress_, state_of(answer.queue_state), {}, now);
    }
    if (changed && request_.on_queue_state) {
      request_.on_queue_state(QueueStateReport(answer.queue_state, answer.queue_state_reason, progress_.waited(now)));
    }
    const bool warning_due = !last_warning_ || now - *last_warning_ >= warning_interval;
    if (answer.queue_state != QueueState::active && request_.warn && warning_due) {
      last_warning_ = now;
      request_.warn(queue_state_warning(request_.subject, request_.subject_text(), answer.queue_state,
                                        answer.queue_state_reason));
    }
  }

  PollRequest& request_;
  PollProgress& progress_;
  http::Clock& clock_;
  const ClientOptions& options_;
  std::int64_t iteration_ = 0;
  bool allow_metadata_only_ = true;
  bool read_timeout_is_deadline_ = false;
  int connection_error_retries_ = 0;
  int bad_request_retries_ = 0;
  int unreadable_answers_ = 0;  ///< consecutive answers that were neither a result nor a status
  std::optional<TimePoint> last_warning_;
};

}  // namespace

namespace {

// Out of line: locals of the poll coroutine take heap for as long as the result is pending.
void fail_with_current_exception(const PollRequest& request, PollOutcome& outcome);

void report_poll_retry(const PollRequest& request, boost::system::error_code ec, int status, const Step& step,
                       std::int64_t polls_sent) {
  RetryScheduled event;
  event.layer = RetryLayer::future_poll;
  event.path = wire::paths::retrieve_future.full();
  const std::string reason = request.observer->redact(http::failure_reason(
      status, ec, step.asks_again_after_unreadable ? std::string_view("unreadable answer") : std::string_view()));
  event.reason = reason;
  event.status = status;
  event.delay = step.action == Step::Action::sleep_then_poll ? step.delay : milliseconds(0);
  event.attempt = static_cast<int>(polls_sent + 1);
  request.observer->retry_scheduled(event);
  if (status != 429 || step.action != Step::Action::sleep_then_poll) return;
  BackoffStarted started;
  started.cause = BackoffCause::rate_limited;
  started.layer = RetryLayer::future_poll;
  started.path = event.path;
  started.delay = step.delay;
  request.observer->backoff_started(started);
}

void report_poll_backoff_over(const PollRequest& request, std::chrono::steady_clock::time_point since) {
  BackoffEnded ended;
  ended.cause = BackoffCause::rate_limited;
  ended.layer = RetryLayer::future_poll;
  ended.path = wire::paths::retrieve_future.full();
  ended.waited = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - since);
  request.observer->backoff_ended(ended);
}

// The loop's next step after an answer; a poll sent again after a failed or unreadable one is a retry
// of future polling (ServiceClient::counters()). A function of its own: its locals stay out of the poll's frame.
// A finishing step's outcome is moved to `outcome`.
Move counted_step(http::RequestTally& tally, const PollRequest& request, const PollProgress& progress, PollLoop& loop,
                  boost::system::error_code ec, http::Response&& response, diagnostics&& diag, PollOutcome& outcome) {
  const bool failed = ec && response.status != 408;  // a 408 says "not ready yet", as try_again does
  const int status = response.status;
  Step step = loop.on_answer(ec, std::move(response), std::move(diag));
  if ((failed || step.asks_again_after_unreadable) && step.action != Step::Action::finish) {
    tally.note_retry();
    if (request.observer != nullptr) report_poll_retry(request, ec, status, step, progress.polls_sent);
  }
  if (step.action == Step::Action::finish) outcome = std::move(step.outcome);
  return static_cast<const Move&>(step);
}

// Tells the observer (not null) how the poll ends.
void report_end(const PollRequest& request, const PollProgress& progress, http::Clock& clock,
                const PollOutcome& outcome) {
  const FutureState state = outcome.error ? FutureState::failed : FutureState::complete;
  report_state(request, progress, state, outcome.error, clock.now());
}

// Ends a poll early (deadline, cancellation): `early` is what the loop says, told to the observer
// first. Out of line, as the other helpers: a temporary in the coroutine would be frame.
void end_early(const PollRequest& request, const PollProgress& progress, http::Clock& clock, PollOutcome early,
               PollOutcome& outcome) {
  if (request.observer != nullptr) report_end(request, progress, clock, early);
  outcome = std::move(early);
}

void time_out(const PollRequest& request, const PollProgress& progress, http::Clock& clock, const PollLoop& loop,
              PollOutcome& outcome) {
  end_early(request, progress, clock, loop.timed_out(), outcome);
}

void cancel(const PollRequest& request, const PollProgress& progress, http::Clock& clock, const PollLoop& loop,
            PollOutcome& outcome) {
  end_early(request, progress, clock, loop.cancelled(), outcome);
}

// What escapes the poll loop: Asio throws operation_aborted from a co_await that starts after
// the coroutine was cancelled (between two polls); any other exception is a request we could not
// make.
detail::ExceptionMapping poll_exceptions() {
  detail::ExceptionMapping mapping;
  mapping.aborted = errc::cancelled;
  mapping.other = errc::invalid_argument;
  return mapping;
}

void fail_with_current_exception(const PollRequest& request, PollOutcome& outcome) {
  outcome = PollOutcome();  // nothing of a half-made outcome
  diagnostics diag;
  outcome.error = detail::current_exception_error(diag, poll_exceptions());
  outcome.diag = std::move(diag);
  outcome.diag.request_id = request.request_id;
  outcome.diag.message = "waiting for future " + request.request_id + ": " + outcome.diag.message;
}

}  // namespace

// One coroutine for the whole loop (each frame of a pending poll is heap held per request), whose
// outcome is the caller's. What does not suspend is in the helpers above: a temporary or a
// local here takes frame, and a frame over 1 KiB misses both Asio's and glibc's per-thread caches.
asio::awaitable<void> poll_future_into(http::HttpClient& client, PollRequest& request, PollOutcome& outcome) {
  PollProgress own_progress;  // in the frame: most polls share theirs with nobody
  PollProgress* const progress = request.progress ? request.progress.get() : &own_progress;
  outcome = PollOutcome();
  try {
    PollLoop loop(request, *progress, client.clock(), client.options());
    if (request.observer != nullptr) report_state(request, *progress, FutureState::waiting, {}, client.clock().now());
    std::shared_ptr<async::BudgetReservation> reservation;
    for (;;) {
      if (loop.deadline_passed()) {
        time_out(request, *progress, client.clock(), loop, outcome);
        break;
      }
      const http::Request poll = loop.next_request();
      // The answer's diagnostics are written to the outcome's (no second set in the frame):
      // counted_step takes them from there before it writes a finishing outcome.
      auto [ec, response] = co_await client.send(poll, &outcome.diag);
      const Move move = counted_step(client.tally(), request, *progress, loop, ec, std::move(response),
                                     std::move(outcome.diag), outcome);
      if (move.action == Step::Action::finish) {
        outcome.reservation = std::move(reservation);
        if (request.observer != nullptr) report_end(request, *progress, client.clock(), outcome);
        break;
      }
      if (!reservation && progress->payload_size && request.response_budget != nullptr) {
        // complete_metadata: hold the announced bytes before fetching them (doc/protocol.md#futures,
        // doc/protocol.md#pools-timeouts-and-throttles).
        const std::int64_t bytes = *progress->payload_size;
        co_await request.response_budget->acquire(bytes);
        reservation = std::make_shared<async::BudgetReservation>(*request.response_budget, bytes);
      }
      if (move.action == Step::Action::sleep_then_poll) {
        const auto sleep_started = std::chrono::steady_clock::now();
        const boost::system::error_code slept = co_await http::sleep_for(client.clock(), loop.capped(move.delay));
        if (request.observer != nullptr && move.backs_off) report_poll_backoff_over(request, sleep_started);
        if (slept) {
          cancel(request, *progress, client.clock(), loop, outcome);
          break;
        }
      }
    }
  } catch (const std::exception&) {
    fail_with_current_exception(request, outcome);
  }
}

asio::awaitable<PollOutcome> poll_future(http::HttpClient& client, PollRequest request) {
  PollOutcome outcome;
  co_await poll_future_into(client, request, outcome);
  co_return outcome;
}

}  // namespace tinker::client::futures
