// The SDK's HTTP client: keep-alive connection pools per origin and purpose, TLS, proxies,
// timeouts and transport retries (doc/protocol.md#transport-retries). Everything runs on one
// io_context thread; the client must be used (and destroyed) on that thread.
#pragma once

#include "http/clock.hpp"
#include "http/message.hpp"
#include "http/request_tally.hpp"

#include <tinker/config.hpp>
#include <tinker/error.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>

#include <cstddef>
#include <memory>
#include <tuple>

namespace tinker::http {

/// Counters of one pool, for tests and diagnostics.
class Observer;

class PoolStats {
 public:
  PoolStats() = default;
  std::size_t open = 0;     ///< connections currently open (idle + in use)
  std::size_t idle = 0;     ///< connections waiting in the pool
  std::size_t created = 0;  ///< connections ever opened
  std::size_t waiting = 0;  ///< requests queued for a connection
};

class HttpClient {
 public:
  using Signature = void(boost::system::error_code, Response);
  using Handler = boost::asio::any_completion_handler<Signature>;

  /// `options` supplies the base URL, credential, timeouts, retry and pool limits, TLS and size
  /// limits. `clock` and `random` are injectable for tests (fake time, deterministic jitter).
  HttpClient(boost::asio::any_io_executor executor, ClientOptions options, std::shared_ptr<Clock> clock = nullptr,
             RandomUnit random = nullptr);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  boost::asio::any_io_executor get_executor() const noexcept;

  /// Sends `request` with transport retries. Completes with the final response when its status is
  /// below 300 (or 3xx for requests that asked for it), else with the error class of the status
  /// (errc_from_http_status) and the response; transport failures complete with
  /// connection_failed / timeout / tls_error, cancellation with cancelled. `diag` (optional,
  /// must outlive the operation) receives the HTTP status, request id, server message, category,
  /// retry-after and a body excerpt. Cancellation: per-operation, via the handler's slot.
  void async_send(Request request, diagnostics* diag, Handler handler);

  template <class Token>
  auto async_send(Request request, diagnostics& diag, Token&& token) {
    return boost::asio::async_initiate<Token, Signature>(
        [this](auto handler, Request r, diagnostics* d) { async_send(std::move(r), d, Handler(std::move(handler))); },
        token, std::move(request), &diag);
  }

  using Outcome = std::tuple<boost::system::error_code, Response>;

  /// The same as async_send for a caller that is itself a coroutine on the client's io thread:
  /// it runs inside the caller's coroutine (no co_spawn, no handler, no copy of `request`),
  /// which then must keep `request` and `diag` alive until it returns. Cancellation: the
  /// caller's own. The outcome is async_send's.
  boost::asio::awaitable<Outcome> send(const Request& request, diagnostics* diag);

  PoolStats stats(PoolKind kind) const;
  const ClientOptions& options() const noexcept;
  /// What this client sent and got back; the retry layers above it note their re-sends here too.
  RequestTally& tally() const noexcept;

  /// Replaces the credential sent in X-API-Key from the next request on (a JWT from
  /// auth/token or a credential command's output, doc/protocol.md#authentication). Requests
  /// already assembled keep the old one. Every credential this client ever had
  /// (options().api_key included) stays redacted from diagnostics. Throws tinker::error
  /// (invalid_configuration) if it contains a line break; the credential is then unchanged.
  void set_credential(Secret credential);
  Clock& clock() const noexcept;

  /// Reports every exchange and transport retry to `observer` (doc/observability.md); null: to
  /// nobody. The client's credentials, now and later, become the observer's secrets.
  void set_observer(std::shared_ptr<Observer> observer);
  /// The observer, or null; the retry layers above report through it too.
  Observer* observer() const noexcept;

  /// Closes idle connections and fails queued requests with `cancelled`; requests in flight
  /// finish normally. Called by the destructor.
  void shutdown();

 private:
  class Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace tinker::http
