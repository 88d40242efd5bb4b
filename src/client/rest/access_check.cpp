// ServiceClient::async_check_access (doc/service.md#checking-access): is the service reachable with
// this client's credential? Answered by one get_server_capabilities sent once, as the Python SDK's
// `tinker auth status` and `raise_if_tinker_not_accessible` do, so that a 402 (a billing hold,
// which ordinary calls wait out) and a 401 are reported at once.
#include <tinker/service_client.hpp>

#include "api/endpoints.hpp"
#include "client/rest/operation.hpp"
#include "client/session/holder_impl.hpp"

namespace tinker::client::rest {
namespace {

boost::asio::awaitable<OperationResult<GetServerCapabilitiesResponse>> check_access_op(
    std::shared_ptr<ClientHolder> holder, diagnostics& diag) {
  GetServerCapabilitiesResponse out;
  // The bootstrap (client/config, the JWT exchange on servers that use them) is the holder's usual one.
  if (auto ec = co_await holder->ensure_config(diag)) co_return OperationResult<GetServerCapabilitiesResponse>(ec, out);
  const boost::system::error_code ec = co_await api::get_server_capabilities_once(holder->http(), out, diag);
  co_return OperationResult<GetServerCapabilitiesResponse>(ec, std::move(out));
}

}  // namespace
}  // namespace tinker::client::rest

namespace tinker::detail {

void service_check_access(HolderPtr holder, diagnostics* diag, Handler<GetServerCapabilitiesResponse> handler) {
  client::rest::spawn_rest_call(std::move(holder), diag, std::move(handler), &client::rest::check_access_op);
}

}  // namespace tinker::detail
