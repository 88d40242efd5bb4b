// Finishing the session (doc/service.md#finishing-a-session): ServiceClient::async_finish_session,
// and the finish that the holder's shutdown sends when none was requested before.
//
// One finish per session, ever: the first request (explicit or by shutdown) marks the holder, stops
// the heartbeat, and makes ensure_session fail from then on. A finish that fails on the wire is not
// sent again: the server ends a silent session by itself, so a second attempt buys nothing but
// shutdown time.
#include "api/endpoints.hpp"
#include "client/session/holder_impl.hpp"
#include "client/session/operation_launch.hpp"

#include <tinker/service_client.hpp>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

namespace tinker::client::session {

namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using FinishOutcome = async::OperationResult<std::monostate>;

FinishOutcome finish_failure(errc code, std::string message, diagnostics& diag) {
  diag.clear();
  diag.message = std::move(message);
  return FinishOutcome(make_error_code(code), std::monostate());
}

asio::awaitable<FinishOutcome> finish_session_op(HolderPtr holder, ClientSessionFinishReason reason,
                                                 std::optional<std::string> detail, diagnostics& diag) {
  if (reason.kind == ClientSessionFinishReason::Kind::unknown) {
    co_return finish_failure(
        errc::invalid_argument,
        "finish_session: reason must be success, errored or interrupted, got \"" + reason.type_name + "\"", diag);
  }
  if (error_code ec = co_await holder->ensure_config(diag)) co_return FinishOutcome(ec, std::monostate());
  ClientHolder::Impl& impl = holder->impl();
  if (impl.finish_requested) {
    finished_session_error(impl, diag);
    co_return FinishOutcome(make_error_code(errc::invalid_argument), std::monostate());
  }
  std::optional<FinishSessionRequest> request = begin_finish(*holder, std::move(reason), std::move(detail));
  if (!request) {
    co_return finish_failure(errc::invalid_argument,
                             "finish_session: this client has no session yet (nothing was created through it)", diag);
  }
  const error_code ec = co_await api::finish_session(holder->http(), *request, diag, holder->retry_call());
  co_return FinishOutcome(ec, std::monostate());
}

void stop_heartbeat(ClientHolder::Impl& impl) {
  if (impl.heartbeat_lifetime) impl.heartbeat_lifetime->stop();
}

}  // namespace

error_code finished_session_error(const ClientHolder::Impl& impl, diagnostics& diag) {
  diag.clear();
  diag.message = "the session " + impl.current_session_id() + " was finished (" + to_string(impl.finish_reason) +
                 "); create a new ServiceClient for a new session";
  return make_error_code(errc::invalid_argument);
}

std::optional<FinishSessionRequest> begin_finish(ClientHolder& holder, ClientSessionFinishReason reason,
                                                 std::optional<std::string> detail) {
  ClientHolder::Impl& impl = holder.impl();
  const std::string session_id = impl.current_session_id();
  if (impl.finish_requested || session_id.empty()) return std::nullopt;
  impl.finish_requested = true;
  impl.finish_reason = reason;
  stop_heartbeat(impl);
  return FinishSessionRequest(session_id, std::move(reason), std::move(detail));
}

asio::awaitable<void> finish_at_shutdown(std::shared_ptr<ClientHolder> holder, FinishSessionRequest request) {
  ClientHolder::Impl& impl = holder->impl();
  // Bounded like the final telemetry flush it runs beside: one telemetry timeout, one attempt.
  auto deadline = std::make_shared<Lifetime>(impl.executor);
  asio::steady_timer expiry(impl.executor, impl.options.client.timeouts.telemetry);
  expiry.async_wait([deadline](error_code ec) {
    if (ec != asio::error::operation_aborted) deadline->stop();
  });
  diagnostics diag;
  auto operation = api::finish_session(*impl.http, request, diag, holder->retry_call(), /*retry_call=*/false);
  const std::optional<error_code> outcome = co_await run_unless_stopped(deadline, std::move(operation));
  expiry.cancel();
  if (!outcome) {
    holder->log(LogLevel::debug, "finishing the session " + request.session_id + " at shutdown timed out");
  } else if (*outcome) {
    std::string text = outcome->message();
    if (!diag.message.empty()) text += ": " + diag.message;
    holder->log(LogLevel::debug, "finishing the session " + request.session_id + " at shutdown failed (" + text + ")");
  }
  end_final_task(*holder);
}

}  // namespace tinker::client::session

namespace tinker::detail {

void service_finish_session(HolderPtr h, ClientSessionFinishReason reason, std::optional<std::string> detail,
                            diagnostics* d, Handler<std::monostate> handler) {
  HolderPtr reporter = h;
  client::session::spawn_reported<std::monostate>(std::move(reporter), false, d, std::move(handler),
                                                  &client::session::finish_session_op, std::move(h), std::move(reason),
                                                  std::move(detail));
}

void set_shutdown_finish_reason(const HolderPtr& h, ClientSessionFinishReason reason) {
  if (!h) return;
  // The holder lives on its io thread; this runs before a shutdown posted after it.
  boost::asio::post(h->executor(), [holder = h, reason = std::move(reason)]() mutable {
    holder->impl().shutdown_finish_reason = std::move(reason);
  });
}

}  // namespace tinker::detail
