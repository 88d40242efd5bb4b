// ServiceClient::async_copy_weights (doc/service.md#copying-weights): one synchronous request that
// takes a training-client number from the session's counter, as create_model does.
#include <tinker/service_client.hpp>

#include "api/endpoints.hpp"
#include "client/handles.hpp"
#include "client/session/holder.hpp"
#include "client/session/operation_launch.hpp"
#include "core/types/checkpoint_ttl.hpp"

#include <tinker/types/checkpoint.hpp>

namespace tinker::client::session {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;

// Throws tinker::error (invalid_argument) naming the field, before anything is sent.
void check_copy_weights(const std::string& path, const CopyWeightsOptions& options) {
  try {
    (void)TinkerPath::parse(path);
  } catch (const error& e) {
    throw error(errc::invalid_argument, "copy_weights: path: " + e.diag().message);
  }
  detail::check_checkpoint_ttl("copy_weights", options.ttl_seconds);
  if (options.weights_access_token && options.weights_access_token->empty()) {
    throw error(errc::invalid_argument, "copy_weights: weights_access_token must not be empty when given");
  }
}

asio::awaitable<async::OperationResult<std::string>> copy_weights_op(HolderPtr holder, std::string path,
                                                                     CopyWeightsOptions options, diagnostics& diag) {
  using Outcome = async::OperationResult<std::string>;
  check_copy_weights(path, options);
  if (error_code ec = co_await holder->ensure_session(diag)) co_return Outcome(ec, std::string());
  CopyWeightsRequest request(holder->session_id(), holder->next_model_seq_id(), std::move(path));
  request.ttl_seconds = options.ttl_seconds;
  request.weights_access_token = std::move(options.weights_access_token);
  CopyWeightsResponse copied;
  const error_code ec = co_await api::copy_weights(holder->http(), request, copied, diag, holder->retry_call());
  if (ec) co_return Outcome(ec, std::string());
  if (copied.tinker_path.empty()) {
    diag.clear();
    diag.message = "copy_weights answered an empty tinker_path";
    co_return Outcome(make_error_code(errc::protocol_error), std::string());
  }
  co_return Outcome(error_code(), std::move(copied.tinker_path));
}

}  // namespace
}  // namespace tinker::client::session

namespace tinker::detail {

void service_copy_weights(HolderPtr h, std::string path, CopyWeightsOptions o, diagnostics* d,
                          Handler<std::string> handler) {
  HolderPtr reporter = h;  // a failure is reported to telemetry (doc/protocol.md#telemetry)
  client::session::spawn_reported<std::string>(std::move(reporter), /*session_end=*/true, d, std::move(handler),
                                               &client::session::copy_weights_op, std::move(h), std::move(path),
                                               std::move(o));
}

}  // namespace tinker::detail
