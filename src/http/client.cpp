// HttpClient: pools per origin and purpose, request assembly and retry layer 1 (spec 5.1).
#include "http/client.hpp"

#include "http/connection.hpp"
#include "http/error_mapping.hpp"
#include "http/headers.hpp"
#include "http/proxy.hpp"
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

#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

namespace tinker::http {
namespace {

namespace asio = boost::asio;
using Outcome = HttpClient::Outcome;

// A parsed base or absolute URL: where to connect and the path prefix to put in front.
using Target = AbsoluteUrl;

// Spec 1.1: the base URL gets a trailing '/', the request path loses its leading '/'.
std::string join_path(std::string_view base_path, std::string_view request_path) {
  std::string path(base_path);
  if (path.empty() || path.back() != '/') path += '/';
  if (!request_path.empty() && request_path.front() == '/') request_path.remove_prefix(1);
  path += request_path;
  return path;
}

bool is_absolute_url(std::string_view path) {
  return path.starts_with("http://") || path.starts_with("https://");
}

std::string seconds_text(std::chrono::milliseconds d) {
  const auto ms = d.count();
  if (ms % 1000 == 0) return std::to_string(ms / 1000);
  return std::to_string(ms / 1000) + "." + std::to_string(ms % 1000 / 100) + std::to_string(ms % 100 / 10) +
         std::to_string(ms % 10);
}

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
    base_header_lines_ = fixed_header_lines(base_.endpoint, /*with_credentials=*/true);
  }

  static asio::awaitable<Outcome> send(std::shared_ptr<Impl> self, Request request, diagnostics* diag);
  asio::awaitable<Outcome> send_guarded(const Request& request, diagnostics* diag);
  void start_sweeper();
  void shutdown();
  PoolStats stats(PoolKind kind) const;
  void set_credential(Secret credential);

  asio::any_io_executor executor_;
  const ClientOptions& options() const noexcept { return options_; }
  Clock& clock() const noexcept { return *clock_; }

 private:
  ConnectionPool& pool_for(const Target& target, PoolKind kind);
  std::string fixed_header_lines(const Endpoint& endpoint, bool with_credentials) const;
  static std::string call_header_lines(const Request& request, std::string_view idempotency_key,
                                       std::chrono::milliseconds timeout);
  const PoolLimits& limits_for(PoolKind kind) const;
  void fail(diagnostics* diag, const ExchangeResult& result) const;
  void redact_previous_credentials(diagnostics& diag) const;
  static asio::awaitable<void> sweep_loop(std::shared_ptr<Impl> self);

  ClientOptions options_;
  Secret credential_;                         ///< sent in X-API-Key; starts as options_.api_key
  std::vector<Secret> previous_credentials_;  ///< replaced ones, still redacted
  std::shared_ptr<Clock> clock_;
  RandomUnit random_;
  std::vector<Header> standard_headers_;
  ProxySettings proxy_;
  ConnectSettings connect_settings_;
  Target base_;
  std::string base_header_lines_;
  std::map<std::pair<std::string, PoolKind>, std::unique_ptr<ConnectionPool>> pools_;
  std::array<ConnectionPool*, 5> base_pools_{};  ///< pools_ entries of the base origin, by kind
  asio::steady_timer sweep_timer_;
  bool shut_down_ = false;
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

// Host, the standard headers and the credential: the same for every request to one origin, so
// they are formatted once. Storage downloads (absolute URLs) are signed URLs and get no
// credentials (spec 8.12.5).
std::string HttpClient::Impl::fixed_header_lines(const Endpoint& endpoint, bool with_credentials) const {
  std::vector<Header> headers;
  headers.emplace_back("Host", endpoint.host_header());
  headers.insert(headers.end(), standard_headers_.begin(), standard_headers_.end());
  if (with_credentials && !credential_.empty()) headers.emplace_back("X-API-Key", credential_.reveal());
  std::string lines;
  for (const Header& header : headers) {
    if (!is_safe_header(header.name, header.value)) {
      throw error(errc::invalid_configuration,
                  "header '" + header.name + "' contains a line break (check default_headers and the credentials)");
    }
    append_header_line(lines, header.name, header.value);
  }
  return lines;
}

// The headers that stay the same for every attempt of one call, formatted once. Each is checked
// for line breaks here, before any connection is taken (header injection).
std::string HttpClient::Impl::call_header_lines(const Request& request, std::string_view idempotency_key,
                                                std::chrono::milliseconds timeout) {
  std::string lines;
  // One allocation: the fixed names and values take well under 256 bytes.
  std::size_t extra = 256 + request.accept.size() + request.content_type.size() + idempotency_key.size();
  for (const RequestHeader& header : request.headers) extra += header.name.size() + header.value.size() + 4;
  lines.reserve(extra);
  const auto add = [&lines](std::string_view name, std::string_view value) {
    if (!is_safe_header(name, value)) {
      throw error(errc::invalid_argument, "request header '" + std::string(name) + "' contains a line break");
    }
    append_header_line(lines, name, value);
  };
  // Media types are constants of the SDK (message.hpp), like the names and values formatted
  // here: they need no check.
  append_header_line(lines, "Accept", request.accept);
  if (!request.content_type.empty()) append_header_line(lines, "Content-Type", request.content_type);
  if (request.compress_zstd) append_header_line(lines, "Content-Encoding", "zstd");
  if (request.method != Method::get) add("X-Idempotency-Key", idempotency_key);
  append_header_line(lines, "x-stainless-read-timeout", seconds_text(timeout));
  for (const RequestHeader& header : request.headers) add(header.name, header.value);
  return lines;
}

void HttpClient::Impl::fail(diagnostics* diag, const ExchangeResult& result) const {
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
    base_header_lines_ = fixed_header_lines(base_.endpoint, /*with_credentials=*/true);
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
}

// The coroutine behind async_send. It owns the request and keeps the client alive.
asio::awaitable<Outcome> HttpClient::Impl::send(std::shared_ptr<Impl> self, Request request, diagnostics* diag) {
  co_return co_await self->send_guarded(request, diag);
}

// Layer 1 (spec 5.1) in one coroutine frame: assembly, attempts and their delays. Exceptions
// (pool cancellation, bad URLs or headers) become error codes.
asio::awaitable<Outcome> HttpClient::Impl::send_guarded(const Request& request, diagnostics* diag) {
  try {
    // The caller's request stays untouched (layer 2 re-sends it); a generated idempotency key and
    // a compressed body are locals (this frame is heap held while the request is in flight).
    std::array<char, idempotency_key_size> generated_key;  // every poll needs one: no heap string
    std::string_view idempotency_key = request.idempotency_key;
    if (request.method != Method::get && idempotency_key.empty()) {
      write_idempotency_key(generated_key.data());
      idempotency_key = std::string_view(generated_key.data(), generated_key.size());
    }
    std::string compressed_body;
    if (request.compress_zstd) compressed_body = zstd_compress(request.body);
    const std::string_view body = request.compress_zstd ? std::string_view(compressed_body) : request.body;
    std::unique_ptr<Target> absolute_target;  // storage downloads only
    std::string absolute_header_lines;
    if (is_absolute_url(request.path)) {
      absolute_target = std::make_unique<Target>(parse_absolute_url(request.path, "request URL"));
      absolute_header_lines = fixed_header_lines(absolute_target->endpoint, /*with_credentials=*/false);
    }
    const Target& target = absolute_target ? *absolute_target : base_;
    const std::string_view header_lines =
        absolute_target ? std::string_view(absolute_header_lines) : std::string_view(base_header_lines_);
    const std::string target_path = absolute_target ? absolute_target->path : join_path(base_.path, request.path);
    ExchangeLimits limits;
    limits.timeout = request.timeout.value_or(options_.timeouts.request);
    limits.max_body = options_.limits.max_response_body;
    limits.max_header = options_.limits.max_response_header;
    const int max_retries = request.max_retries.value_or(options_.retry.max_retries);
    const std::string call_lines = call_header_lines(request, idempotency_key, limits.timeout);
    ConnectionPool& pool = pool_for(target, request.pool);

    for (int attempt_index = 0;; ++attempt_index) {
      // "x-stainless-retry-count: <n>\r\n" formatted on the stack (a string would allocate).
      constexpr std::string_view retry_count_name = "x-stainless-retry-count: ";
      std::array<char, retry_count_name.size() + 16> attempt_buffer;
      char* attempt_end = std::copy(retry_count_name.begin(), retry_count_name.end(), attempt_buffer.data());
      attempt_end = std::to_chars(attempt_end, attempt_buffer.data() + attempt_buffer.size() - 2, attempt_index).ptr;
      *attempt_end++ = '\r';
      *attempt_end++ = '\n';
      const std::string_view attempt_lines(attempt_buffer.data(),
                                           static_cast<std::size_t>(attempt_end - attempt_buffer.data()));
      WireRequest wire;
      wire.method = request.method;
      wire.target = target_path;
      wire.header_blocks = {header_lines, call_lines, attempt_lines};
      wire.body = body;
      // One attempt, inline (a separate coroutine would be one more frame per request): a pooled
      // connection (a fresh one if a reused keep-alive connection turns out to have been closed
      // by the server), one exchange, and the connection back to the pool.
      ExchangeResult result;
      for (int tries = 0;; ++tries) {
        std::optional<Lease> ready = pool.try_acquire();
        Lease lease;
        if (ready) {
          lease = std::move(*ready);
        } else {
          lease = co_await pool.acquire();
        }
        // Only a connection that sat idle in the pool can have been closed behind our back.
        const bool was_idle = lease.reused();
        if (!lease.reused()) {
          ConnectResult connected = co_await connect(executor_, target.endpoint, connect_settings_);
          if (!connected.connection) {
            pool.release(nullptr, false);
            result = ExchangeResult();
            result.error = connected.error;
            result.reason = std::move(connected.reason);
            break;
          }
          lease.connection = std::move(connected.connection);
        }
        result = co_await exchange(*lease.connection, wire, limits);
        const bool stale = was_idle && result.error && result.nothing_received && result.error != errc::cancelled &&
                           result.error != errc::timeout;
        pool.release(std::move(lease.connection), !result.error && result.reusable);
        if (!(stale && tries == 0)) break;  // a dead keep-alive connection: once more on a new one
      }
      boost::system::error_code ec = result.error;
      if (!ec && result.response.status >= 300 && !(result.response.status < 400 && request.accept_redirect)) {
        ec = error_for_status(result.response.status);
      }
      if (!ec) co_return Outcome{ec, std::move(result.response)};

      const bool transport_failure = result.response.status == 0;
      const bool retryable =
          transport_failure ? (ec == errc::connection_failed || ec == errc::timeout)
                            : should_retry_status(result.response.status, result.response.header("x-should-retry"));
      if (!retryable || attempt_index >= max_retries || shut_down_) {
        fail(diag, result);
        co_return Outcome{ec, std::move(result.response)};
      }
      const Response* response = transport_failure ? nullptr : &result.response;
      const auto delay = layer1_retry_delay(response, attempt_index, clock_->now(), random_(), options_.retry);
      const auto sleep_error = co_await sleep_for(*clock_, delay);
      if (sleep_error) {
        fail(diag, result);
        co_return Outcome{make_error_code(errc::cancelled), Response()};
      }
    }
  } catch (const error& e) {
    if (diag != nullptr) *diag = e.diag();
    co_return Outcome{e.code(), Response()};
  } catch (const boost::system::system_error& e) {
    // A co_await that starts after the caller's coroutine was cancelled throws operation_aborted.
    const bool aborted = e.code() == asio::error::operation_aborted;
    if (diag != nullptr) {
      diag->clear();
      diag->message = aborted ? std::string("the request was cancelled") : std::string(e.what());
    }
    co_return Outcome{aborted ? make_error_code(errc::cancelled) : make_error_code(errc::invalid_argument), Response()};
  } catch (const std::exception& e) {
    if (diag != nullptr) {
      diag->clear();
      diag->message = e.what();
    }
    co_return Outcome{make_error_code(errc::invalid_argument), Response()};
  }
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

void HttpClient::set_credential(Secret credential) {
  impl_->set_credential(std::move(credential));
}

Clock& HttpClient::clock() const noexcept {
  return impl_->clock();
}

void HttpClient::shutdown() {
  impl_->shutdown();
}

}  // namespace tinker::http
