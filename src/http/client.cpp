// HttpClient: pools per origin and purpose, and transport retries (doc/protocol.md#transport-retries)
// around request assembly (request_assembly.hpp), the pool, connect() and exchange().
#include "http/client.hpp"

#include "http/connection.hpp"
#include "http/error_mapping.hpp"
#include "http/headers.hpp"
#include "http/observer.hpp"
#include "http/proxy.hpp"
#include "http/request_assembly.hpp"
#include "http/retry_policy.hpp"
#include "http/tls.hpp"
#include "http/url.hpp"

#include <tinker/codec.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <array>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace tinker::http {
namespace {

namespace asio = boost::asio;
using Outcome = HttpClient::Outcome;

// A parsed base or absolute URL: where to connect and the path prefix to put in front.
using Target = AbsoluteUrl;

// What a failed connect leaves for the retry decision: no response, the connect's error class.
ExchangeResult connect_failure(ConnectResult&& failed) {
  ExchangeResult result;
  result.error = failed.error;
  result.reason = std::move(failed.reason);
  return result;
}

// Only a connection that sat idle in the pool can have been closed by the server behind our
// back: its exchange failing before a single byte came back (not by our timeout or
// cancellation) means the server had closed it, and a fresh connection may try once more.
bool closed_while_idle(const ExchangeResult& result, bool was_idle) noexcept {
  return was_idle && result.error && result.nothing_received && result.error != errc::cancelled &&
         result.error != errc::timeout;
}

// The outcome of a call that failed before or between attempts by an exception: pool
// cancellation, a bad URL or header, a co_await that started after the caller's coroutine was
// cancelled. Exceptions of other types propagate (rethrown from here).
Outcome outcome_of_exception(const std::exception_ptr& failure, diagnostics* diag) {
  try {
    std::rethrow_exception(failure);
  } catch (const error& e) {
    if (diag != nullptr) *diag = e.diag();
    return Outcome{e.code(), Response()};
  } catch (const boost::system::system_error& e) {
    // A co_await that starts after the caller's coroutine was cancelled throws operation_aborted.
    const bool aborted = e.code() == asio::error::operation_aborted;
    if (diag != nullptr) {
      diag->clear();
      diag->message = aborted ? std::string("the request was cancelled") : std::string(e.what());
    }
    return Outcome{aborted ? make_error_code(errc::cancelled) : make_error_code(errc::invalid_argument), Response()};
  } catch (const std::exception& e) {
    if (diag != nullptr) {
      diag->clear();
      diag->message = e.what();
    }
    return Outcome{make_error_code(errc::invalid_argument), Response()};
  }
}

// One call as it goes on the wire, assembled before the first attempt and the same for all of
// them. It lives in send_guarded's coroutine frame (held on the heap while the call is in
// flight) and points into itself and into the request: it neither moves nor copies.
class PreparedCall {
 public:
  PreparedCall() = default;
  PreparedCall(const PreparedCall&) = delete;
  PreparedCall& operator=(const PreparedCall&) = delete;

  // The request of one attempt: the call's blocks plus that attempt's retry-count line.
  const WireRequest& wire_request(std::string_view attempt_lines) noexcept {
    wire.attempt_lines = attempt_lines;
    return wire;
  }

  std::size_t body_size() const noexcept { return wire.body_size(); }

  // Storage for a call whose views need text of its own (rare: kept out of every call's frame).
  class OwnText {
   public:
    std::string joined_path;                  ///< under a base URL with a path prefix
    std::string flat_body;                    ///< the request's spine and borrowed runs in one piece (TLS)
    std::string compressed_body;              ///< zstd
    std::unique_ptr<Target> absolute_target;  ///< storage downloads only
    std::string absolute_lines;
  };
  OwnText& own() {
    if (!own_text) own_text = std::make_unique<OwnText>();
    return *own_text;
  }

  /// Method, origin-form target (the request's path, or joined_path), origin lines (Host,
  /// standard headers, credential: base_lines, or absolute_lines), the checked call headers and
  /// the body (the request's, flat_body or compressed_body; with borrowed runs, its spine).
  WireRequest wire;
  const Target* target = nullptr;  ///< the base URL, or absolute_target
  ConnectionPool* pool = nullptr;  ///< the pool of the target's origin and the request's purpose
  ExchangeLimits limits;
  int max_retries = 0;

  // Storage for the views above, when the request does not hold what they show.
  std::shared_ptr<const std::string> base_lines;           ///< kept: set_credential may replace the client's meanwhile
  std::array<char, idempotency_key_size> generated_key{};  ///< every poll needs a key: no heap string
  std::unique_ptr<OwnText> own_text;
};

}  // namespace

class HttpClient::Impl : public std::enable_shared_from_this<Impl> {
 public:
  Impl(asio::any_io_executor executor, ClientOptions options, std::shared_ptr<Clock> clock, RandomUnit random)
      : executor_(std::move(executor)),
        options_(std::move(options)),
        credential_(options_.api_key),
        clock_(clock ? std::move(clock) : make_system_clock(executor_)),
        random_(random ? std::move(random) : default_random_unit()),
        standard_headers_(standard_headers(options_)),
        proxy_(ProxySettings::from_environment()),
        base_(parse_absolute_url(options_.base_url, "base_url")),
        sweep_timer_(executor_) {
    connect_settings_.connect_timeout = options_.timeouts.connect;
    connect_settings_.verify_peer = options_.tls.verify_peer;
    connect_settings_.proxy = &proxy_;
    base_header_lines_ = std::make_shared<const std::string>(
        origin_header_lines(base_.endpoint, standard_headers_, credential_.reveal()));
  }

  static asio::awaitable<Outcome> send(std::shared_ptr<Impl> self, Request request, diagnostics* diag);
  asio::awaitable<Outcome> send_guarded(const Request& request, diagnostics* diag);
  asio::awaitable<bool> open_in_slot(const PreparedCall& call, Lease& lease, ExchangeResult& result,
                                     std::chrono::steady_clock::time_point started, int attempt_index);
  asio::awaitable<bool> wait_before_retry(const PreparedCall& call, const ExchangeResult& result,
                                          boost::system::error_code ec, std::chrono::milliseconds delay,
                                          int attempt_index);
  void start_sweeper();
  void shutdown();
  PoolStats stats(PoolKind kind) const;
  void set_credential(Secret credential);
  void set_observer(std::shared_ptr<Observer> observer);
  Observer* observer() const noexcept { return observer_.get(); }

  asio::any_io_executor executor_;
  RequestTally tally_;
  const ClientOptions& options() const noexcept { return options_; }
  Clock& clock() const noexcept { return *clock_; }

 private:
  void prepare_call(const Request& request, PreparedCall& call);
  std::string_view target_under_base(std::string_view path, PreparedCall& call) const;
  std::optional<std::chrono::milliseconds> next_attempt_delay(boost::system::error_code ec, const Response& response,
                                                              int attempt_index, int max_retries) const;
  ConnectionPool& pool_for(const Target& target, PoolKind kind);
  const PoolLimits& limits_for(PoolKind kind) const;
  void describe_failure(diagnostics* diag, const ExchangeResult& result) const;
  void redact_previous_credentials(diagnostics& diag) const;
  static asio::awaitable<void> sweep_loop(std::shared_ptr<Impl> self);
  void report_exchange(const PreparedCall& call, const ExchangeResult& result,
                       std::chrono::steady_clock::time_point start, int attempt_index) const;
  void report_retry(const PreparedCall& call, const ExchangeResult& result, boost::system::error_code ec,
                    std::chrono::milliseconds delay, int next_attempt) const;
  void report_backoff(const PreparedCall& call, std::optional<std::chrono::milliseconds> planned,
                      std::chrono::steady_clock::time_point start) const;

  ClientOptions options_;
  Secret credential_;                         ///< sent in X-API-Key; starts as options_.api_key
  std::vector<Secret> previous_credentials_;  ///< replaced ones, still redacted
  std::shared_ptr<Clock> clock_;
  RandomUnit random_;
  std::vector<Header> standard_headers_;
  ProxySettings proxy_;
  ConnectSettings connect_settings_;
  Target base_;
  /// origin_header_lines of the base URL, with the credential. Shared with the calls assembled
  /// from it: set_credential replaces it while they may still wait for a connection or a retry.
  std::shared_ptr<const std::string> base_header_lines_;
  std::map<std::pair<std::string, PoolKind>, std::unique_ptr<ConnectionPool>> pools_;
  std::array<ConnectionPool*, 5> base_pools_{};  ///< pools_ entries of the base origin, by kind
  asio::steady_timer sweep_timer_;
  bool shut_down_ = false;
  std::shared_ptr<Observer> observer_;
  // observer_ when it wants to hear of exchanges / of retries, else null: one test per exchange.
  Observer* exchange_observer_ = nullptr;
  Observer* event_observer_ = nullptr;
};

const PoolLimits& HttpClient::Impl::limits_for(PoolKind kind) const {
  switch (kind) {
    case PoolKind::session: return options_.pools.session;
    case PoolKind::training: return options_.pools.training;
    case PoolKind::sampling: return options_.pools.sampling;
    case PoolKind::futures: return options_.pools.futures;
    case PoolKind::storage: return options_.pools.storage;
  }
  return options_.pools.training;
}

ConnectionPool& HttpClient::Impl::pool_for(const Target& target, PoolKind kind) {
  const bool base_origin = &target == &base_;
  ConnectionPool*& cached = base_pools_[static_cast<std::size_t>(kind)];
  if (base_origin && cached != nullptr) return *cached;
  auto& pool = pools_[{target.origin_key, kind}];
  if (!pool) pool = std::make_unique<ConnectionPool>(executor_, limits_for(kind));
  if (target.endpoint.tls && !connect_settings_.tls_context)
    connect_settings_.tls_context = make_tls_context(options_.tls);
  if (base_origin) cached = pool.get();
  return *pool;
}

void HttpClient::Impl::describe_failure(diagnostics* diag, const ExchangeResult& result) const {
  if (diag == nullptr) return;
  diag->clear();
  if (result.response.status != 0) {
    fill_diagnostics(result.response, *diag, credential_.reveal(), clock_->now(), options_.retry.max_retry_after);
  } else {
    diag->message = redact(result.reason, credential_.reveal());
  }
  redact_previous_credentials(*diag);
}

void HttpClient::Impl::redact_previous_credentials(diagnostics& diag) const {
  for (const Secret& previous : previous_credentials_) {
    diag.message = redact(std::move(diag.message), previous.reveal());
    diag.request_id = redact(std::move(diag.request_id), previous.reveal());
    diag.body_excerpt = redact(std::move(diag.body_excerpt), previous.reveal());
  }
}

void HttpClient::Impl::set_credential(Secret credential) {
  Secret old = std::exchange(credential_, std::move(credential));
  try {
    base_header_lines_ = std::make_shared<const std::string>(
        origin_header_lines(base_.endpoint, standard_headers_, credential_.reveal()));
  } catch (...) {
    credential_ = std::move(old);
    throw;
  }
  // Keep redacting what we sent before (a JWT's refresh, the API key behind it). Bounded: a
  // long-running client refreshes its JWT every hour or so.
  constexpr std::size_t max_remembered = 16;
  if (!old.empty() && old != credential_) {
    std::erase(previous_credentials_, old);
    if (previous_credentials_.size() >= max_remembered) previous_credentials_.erase(previous_credentials_.begin() + 1);
    previous_credentials_.push_back(std::move(old));
  }
  if (observer_) observer_->add_secret(credential_);
}

void HttpClient::Impl::set_observer(std::shared_ptr<Observer> observer) {
  observer_ = std::move(observer);
  exchange_observer_ = observer_ && observer_->watches_exchanges() ? observer_.get() : nullptr;
  event_observer_ = observer_ && observer_->watches_events() ? observer_.get() : nullptr;
  if (!observer_) return;
  observer_->add_secret(options_.api_key);
  observer_->add_secret(credential_);
  for (const Secret& previous : previous_credentials_) observer_->add_secret(previous);
}

// One line and one RequestFinished per exchange (doc/observability.md); only when observed.
void HttpClient::Impl::report_exchange(const PreparedCall& call, const ExchangeResult& result,
                                       std::chrono::steady_clock::time_point start, int attempt_index) const {
  RequestFinished event;
  event.method = to_string(call.wire.method);
  const std::string path = exchange_observer_->event_path(call.wire.target);
  event.path = path;
  event.status = result.response.status;
  const std::string error = result.error && result.response.status == 0
                                ? observer_->redact(failure_reason(0, result.error, result.reason))
                                : std::string();
  event.error = error;
  event.duration = elapsed_since(start);
  event.attempt = attempt_index + 1;
  event.bytes_sent = call.body_size();
  event.bytes_received = result.response.body.size();
  event.request_id = result.response.header("x-request-id");
  exchange_observer_->request_finished(event, call.wire.target);
}

void HttpClient::Impl::report_retry(const PreparedCall& call, const ExchangeResult& result,
                                    boost::system::error_code ec, std::chrono::milliseconds delay,
                                    int next_attempt) const {
  RetryScheduled event;
  event.layer = RetryLayer::transport;
  const std::string path = event_observer_->event_path(call.wire.target);
  event.path = path;
  const std::string reason = event_observer_->redact(
      failure_reason(result.response.status, ec, result.response.status == 0 ? result.reason : ""));
  event.reason = reason;
  event.status = result.response.status;
  event.delay = delay;
  event.attempt = next_attempt;
  event_observer_->retry_scheduled(event);
  if (result.response.status == 429) {
    BackoffStarted started;
    started.cause = BackoffCause::rate_limited;
    started.layer = RetryLayer::transport;
    started.path = event.path;
    started.delay = delay;
    event_observer_->backoff_started(started);
  }
}

// After the wait of a 429 (`planned` set) that report_retry announced.
void HttpClient::Impl::report_backoff(const PreparedCall& call, std::optional<std::chrono::milliseconds> planned,
                                      std::chrono::steady_clock::time_point start) const {
  if (!planned) return;
  BackoffEnded ended;
  ended.cause = BackoffCause::rate_limited;
  ended.layer = RetryLayer::transport;
  const std::string path = event_observer_->event_path(call.wire.target);
  ended.path = path;
  ended.waited = std::chrono::duration_cast<std::chrono::milliseconds>(elapsed_since(start));
  event_observer_->backoff_ended(ended);
}

// The origin-form target of `path` under the base URL: the path itself when the base URL has
// no path prefix (the usual case, and no string to build), else join_path's, kept in `joined`.
std::string_view HttpClient::Impl::target_under_base(std::string_view path, PreparedCall& call) const {
  const bool root = base_.path.empty() || base_.path == "/";
  if (root && path.starts_with('/')) return path;
  std::string& joined = call.own().joined_path;
  joined = join_path(base_.path, path);
  return joined;
}

namespace {

// The body as it goes out: borrowed runs are sent from where they are on plain TCP. A TLS
// stream gets the body in one piece, since each buffer of a gathered write would become a TLS
// record and a send of its own; so does a zstd frame, which is compressed from one piece.
void prepare_body(const Request& request, PreparedCall& call) {
  std::string_view body = request.body;
  if (!request.borrowed.empty()) {
    if (!request.compress_zstd && !call.target->endpoint.tls) {
      call.wire.body = body;
      call.wire.borrowed = request.borrowed;
      return;
    }
    std::string& flat = call.own().flat_body;
    flat = wire::flatten(request.body, request.borrowed);
    body = flat;
  }
  if (request.compress_zstd) {
    PreparedCall::OwnText& own = call.own();
    own.compressed_body = zstd_compress(body);
    body = own.compressed_body;
    std::string().swap(own.flat_body);  // not needed once compressed
  }
  call.wire.body = body;
}

}  // namespace

// Step 1, request building. The caller's request stays untouched (the call retries re-send it): a
// generated idempotency key and a compressed body go into `call`. Header lines are checked
// for line breaks here, before any connection is taken.
void HttpClient::Impl::prepare_call(const Request& request, PreparedCall& call) {
  std::string_view idempotency_key = request.idempotency_key;
  if (request.method != Method::get && idempotency_key.empty()) {
    write_idempotency_key(call.generated_key.data());
    idempotency_key = std::string_view(call.generated_key.data(), call.generated_key.size());
  }
  if (is_absolute_url(request.path)) {
    // Storage downloads: signed URLs, sent without credentials (doc/rest.md#checkpoint-downloads).
    PreparedCall::OwnText& own = call.own();
    own.absolute_target = std::make_unique<Target>(parse_absolute_url(request.path, "request URL"));
    own.absolute_lines = origin_header_lines(own.absolute_target->endpoint, standard_headers_, {});
    call.target = own.absolute_target.get();
    call.wire.origin_lines = own.absolute_lines;
    call.wire.target = own.absolute_target->path;
  } else {
    call.target = &base_;
    call.base_lines = base_header_lines_;
    call.wire.origin_lines = *call.base_lines;
    call.wire.target = target_under_base(request.path, call);
  }
  prepare_body(request, call);
  call.wire.method = request.method;
  call.limits.timeout = request.timeout.value_or(options_.timeouts.request);
  call.limits.max_body = options_.limits.max_response_body;
  call.limits.max_header = options_.limits.max_response_header;
  call.max_retries = request.max_retries.value_or(options_.retry.max_retries);
  call.wire.call.request = &request;
  call.wire.call.idempotency_key = idempotency_key;
  call.wire.call.read_timeout = call.limits.timeout;
  check_call_headers(call.wire.call);
  call.pool = &pool_for(*call.target, request.pool);
}

// Step 4, the retry decision of the transport retries (doc/protocol.md#transport-retries) after a failed
// attempt: the delay before the next attempt (the server's hint, else back-off with jitter), or
// nothing when the failure is final: not retryable, the call's retries used up, or the client
// shutting down.
std::optional<std::chrono::milliseconds> HttpClient::Impl::next_attempt_delay(boost::system::error_code ec,
                                                                              const Response& response,
                                                                              int attempt_index,
                                                                              int max_retries) const {
  if (!transport_should_retry(ec, response) || attempt_index >= max_retries || shut_down_) return std::nullopt;
  const Response* hint_source = response.status == 0 ? nullptr : &response;
  return transport_retry_delay(hint_source, attempt_index, clock_->now(), random_(), options_.retry);
}

// The coroutine behind async_send. It owns the request and keeps the client alive.
asio::awaitable<Outcome> HttpClient::Impl::send(std::shared_ptr<Impl> self, Request request, diagnostics* diag) {
  co_return co_await self->send_guarded(request, diag);
}

// Transport retries (doc/protocol.md#transport-retries) in one coroutine frame: (1) request building
// in prepare_call, then per attempt (2) acquiring a connection, (3) classifying the outcome in
// attempt_error and (4) the retry decision in next_attempt_delay. The steps that never suspend
// are plain functions. Acquiring a connection suspends only when the pool has no idle connection
// (it waits for one, or opens a new one): it is the pool's and connect()'s awaitables co_awaited
// right here, since a coroutine of its own would add a frame to every request that waits for
// the pool. Exceptions (pool cancellation, bad URLs or headers) become error codes.
asio::awaitable<Outcome> HttpClient::Impl::send_guarded(const Request& request, diagnostics* diag) {
  // One outcome, one co_return: each `co_return Outcome{...}` would hold its own temporary in the
  // frame, and a frame over 1 KiB misses both Asio's and glibc's per-thread caches.
  Outcome outcome;
  try {
    PreparedCall call;
    prepare_call(request, call);
    ExchangeResult result;
    for (int attempt_index = 0;; ++attempt_index) {
      const RetryCountLine retry_count(attempt_index);
      const WireRequest& wire = call.wire_request(retry_count.text());
      for (int tries = 0;; ++tries) {
        if (attempt_index > 0 || tries > 0) tally_.note_retry();
        std::chrono::steady_clock::time_point started{};
        if (exchange_observer_ != nullptr) started = std::chrono::steady_clock::now();
        std::optional<Lease> lease = call.pool->try_acquire();  // an idle connection or a free slot, at once
        if (!lease) lease = co_await call.pool->acquire();      // else a place in the pool's queue
        const bool was_idle = lease->reused();
        if (!was_idle && !co_await open_in_slot(call, *lease, result, started, attempt_index)) break;
        co_await exchange(*lease->connection, wire, call.limits, result);
        tally_.note_exchange(result.response.status, result.error);
        if (exchange_observer_ != nullptr) report_exchange(call, result, started, attempt_index);
        call.pool->release(std::move(lease->connection), !result.error && result.reusable);
        if (tries > 0 || !closed_while_idle(result, was_idle)) break;  // else once more, on a new connection
        if (event_observer_ != nullptr) {
          report_retry(call, result, result.error, std::chrono::milliseconds(0), attempt_index + 1);
        }
      }
      const boost::system::error_code ec = attempt_error(result.error, result.response, request.accept_redirect);
      if (!ec) {
        outcome = Outcome{ec, std::move(result.response)};
        break;
      }
      const std::optional<std::chrono::milliseconds> delay =
          next_attempt_delay(ec, result.response, attempt_index, call.max_retries);
      if (!delay) {
        describe_failure(diag, result);
        outcome = Outcome{ec, std::move(result.response)};
        break;
      }
      if (co_await wait_before_retry(call, result, ec, *delay, attempt_index)) {
        describe_failure(diag, result);
        outcome = Outcome{make_error_code(errc::cancelled), Response()};
        break;
      }
    }
  } catch (...) {
    outcome = outcome_of_exception(std::current_exception(), diag);
  }
  co_return std::move(outcome);
}

// Step 2's rare half, a coroutine of its own so that its locals are not in every call's frame:
// opens a connection in the pool slot `lease` holds. False when that failed (`result` then says
// why, and the slot is given back).
asio::awaitable<bool> HttpClient::Impl::open_in_slot(const PreparedCall& call, Lease& lease, ExchangeResult& result,
                                                     std::chrono::steady_clock::time_point started, int attempt_index) {
  ConnectResult opened = co_await connect(executor_, call.target->endpoint, connect_settings_);
  if (!opened.connection) {
    call.pool->release(nullptr, false);
    result = connect_failure(std::move(opened));
    tally_.note_connect_failure(result.error);
    if (exchange_observer_ != nullptr) report_exchange(call, result, started, attempt_index);
    co_return false;
  }
  lease.connection = std::move(opened.connection);
  co_return true;
}

// Step 4's wait before the next attempt (a coroutine of its own, as open_in_slot). True when the
// wait was cut short (the client shutting down, the call cancelled).
asio::awaitable<bool> HttpClient::Impl::wait_before_retry(const PreparedCall& call, const ExchangeResult& result,
                                                          boost::system::error_code ec, std::chrono::milliseconds delay,
                                                          int attempt_index) {
  std::optional<std::chrono::milliseconds> backoff;  // a 429's wait, when observed
  std::chrono::steady_clock::time_point wait_started{};
  if (event_observer_ != nullptr) {
    report_retry(call, result, ec, delay, attempt_index + 2);
    if (result.response.status == 429) backoff = delay;
    wait_started = std::chrono::steady_clock::now();
  }
  const auto sleep_error = co_await sleep_for(*clock_, delay);
  if (event_observer_ != nullptr) report_backoff(call, backoff, wait_started);
  co_return static_cast<bool>(sleep_error);
}

asio::awaitable<void> HttpClient::Impl::sweep_loop(std::shared_ptr<Impl> self) {
  while (!self->shut_down_) {
    self->sweep_timer_.expires_after(std::chrono::seconds(5));
    auto [ec] = co_await self->sweep_timer_.async_wait(asio::as_tuple(asio::use_awaitable));
    if (ec || self->shut_down_) co_return;
    const auto now = std::chrono::steady_clock::now();
    for (auto& [key, pool] : self->pools_) pool->sweep_idle(now);
  }
}

void HttpClient::Impl::start_sweeper() {
  asio::co_spawn(executor_, sweep_loop(shared_from_this()), asio::detached);
}

void HttpClient::Impl::shutdown() {
  shut_down_ = true;
  sweep_timer_.cancel();
  for (auto& [key, pool] : pools_) pool->shutdown();
}

PoolStats HttpClient::Impl::stats(PoolKind kind) const {
  PoolStats stats;
  for (const auto& [key, pool] : pools_) {
    if (key.second != kind) continue;
    stats.open += pool->open();
    stats.idle += pool->idle();
    stats.created += pool->created();
    stats.waiting += pool->waiting();
  }
  return stats;
}

HttpClient::HttpClient(asio::any_io_executor executor, ClientOptions options, std::shared_ptr<Clock> clock,
                       RandomUnit random)
    : impl_(std::make_shared<Impl>(std::move(executor), std::move(options), std::move(clock), std::move(random))) {
  impl_->start_sweeper();
}

HttpClient::~HttpClient() {
  shutdown();
}

asio::any_io_executor HttpClient::get_executor() const noexcept {
  return impl_->executor_;
}

void HttpClient::async_send(Request request, diagnostics* diag, Handler handler) {
  auto slot = asio::get_associated_cancellation_slot(handler);
  auto completion = [handler = std::move(handler)](std::exception_ptr failure, Outcome outcome) mutable {
    if (failure) {
      std::move(handler)(make_error_code(errc::cancelled), Response());
      return;
    }
    auto& [ec, response] = outcome;
    std::move(handler)(ec, std::move(response));
  };
  asio::co_spawn(impl_->executor_, Impl::send(impl_, std::move(request), diag),
                 asio::bind_cancellation_slot(slot, std::move(completion)));
}

// Not a coroutine itself (one frame less per request): the caller's HttpClient keeps impl_ alive.
asio::awaitable<HttpClient::Outcome> HttpClient::send(const Request& request, diagnostics* diag) {
  return impl_->send_guarded(request, diag);
}

PoolStats HttpClient::stats(PoolKind kind) const {
  return impl_->stats(kind);
}

const ClientOptions& HttpClient::options() const noexcept {
  return impl_->options();
}

RequestTally& HttpClient::tally() const noexcept {
  return impl_->tally_;
}

void HttpClient::set_credential(Secret credential) {
  impl_->set_credential(std::move(credential));
}

Clock& HttpClient::clock() const noexcept {
  return impl_->clock();
}

void HttpClient::set_observer(std::shared_ptr<Observer> observer) {
  impl_->set_observer(std::move(observer));
}

Observer* HttpClient::observer() const noexcept {
  return impl_->observer();
}

void HttpClient::shutdown() {
  impl_->shutdown();
}

}  // namespace tinker::http
