// The session-less entry points (doc/protocol.md#bootstrap-and-lifecycle): RestClient's calls and
// ServiceClient::get_server_capabilities. Each bootstraps the holder's configuration (no
// session) and then makes its call with layers 1 and 2.
#include <tinker/rest_client.hpp>
#include <tinker/service_client.hpp>

#include "api/endpoints.hpp"
#include "client/rest/support.hpp"

namespace tinker::client::rest {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;

asio::awaitable<OperationResult<WeightsInfoResponse>> weights_info_op(std::shared_ptr<ClientHolder> holder,
                                                                      std::string tinker_path, diagnostics& diag) {
  WeightsInfoResponse out;
  if (auto ec = co_await holder->ensure_config(diag)) co_return OperationResult<WeightsInfoResponse>(ec, out);
  const WeightsInfoRequest request(std::move(tinker_path));
  const error_code ec = co_await api::weights_info(holder->http(), request, out, diag, holder->layer_two());
  co_return OperationResult<WeightsInfoResponse>(ec, std::move(out));
}

asio::awaitable<OperationResult<GetSamplerResponse>> get_sampler_op(std::shared_ptr<ClientHolder> holder,
                                                                    std::string sampler_id, diagnostics& diag) {
  GetSamplerResponse out;
  if (auto ec = co_await holder->ensure_config(diag)) co_return OperationResult<GetSamplerResponse>(ec, out);
  const error_code ec = co_await api::get_sampler(holder->http(), sampler_id, out, diag, holder->layer_two());
  co_return OperationResult<GetSamplerResponse>(ec, std::move(out));
}

asio::awaitable<OperationResult<GetServerCapabilitiesResponse>> server_capabilities_op(
    std::shared_ptr<ClientHolder> holder, diagnostics& diag) {
  GetServerCapabilitiesResponse out;
  if (auto ec = co_await holder->ensure_config(diag)) {
    co_return OperationResult<GetServerCapabilitiesResponse>(ec, out);
  }
  const error_code ec = co_await api::get_server_capabilities(holder->http(), out, diag, holder->layer_two());
  co_return OperationResult<GetServerCapabilitiesResponse>(ec, std::move(out));
}

}  // namespace

}  // namespace tinker::client::rest

namespace tinker::detail {

using namespace client::rest;  // the operations above

void rest_get_weights_info(std::shared_ptr<ClientHolder> holder, std::string tinker_path, diagnostics* diag,
                           Handler<WeightsInfoResponse> handler) {
  spawn_rest_call(std::move(holder), diag, std::move(handler), &weights_info_op, std::move(tinker_path));
}

void rest_get_sampler(std::shared_ptr<ClientHolder> holder, std::string sampler_id, diagnostics* diag,
                      Handler<GetSamplerResponse> handler) {
  spawn_rest_call(std::move(holder), diag, std::move(handler), &get_sampler_op, std::move(sampler_id));
}

void service_get_server_capabilities(HolderPtr holder, diagnostics* diag,
                                     Handler<GetServerCapabilitiesResponse> handler) {
  spawn_rest_call(std::move(holder), diag, std::move(handler), &server_capabilities_op);
}

}  // namespace tinker::detail
