// The session-less entry points (doc/protocol.md#bootstrap-and-lifecycle): RestClient's calls and
// ServiceClient::get_server_capabilities. Each bootstraps the holder's configuration (no
// session) and then makes its call with transport and call retries.
#include <tinker/rest_client.hpp>
#include <tinker/service_client.hpp>

#include "api/endpoints.hpp"
#include "client/rest/operation.hpp"
#include "client/session/holder_impl.hpp"

namespace tinker::client::rest {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;

asio::awaitable<OperationResult<WeightsInfoResponse>> weights_info_op(std::shared_ptr<ClientHolder> holder,
                                                                      std::string tinker_path, diagnostics& diag) {
  WeightsInfoResponse out;
  if (auto ec = co_await holder->ensure_config(diag)) co_return OperationResult<WeightsInfoResponse>(ec, out);
  const WeightsInfoRequest request(std::move(tinker_path));
  const error_code ec = co_await api::weights_info(holder->http(), request, out, diag, holder->retry_call());
  co_return OperationResult<WeightsInfoResponse>(ec, std::move(out));
}

asio::awaitable<OperationResult<GetSamplerResponse>> get_sampler_op(std::shared_ptr<ClientHolder> holder,
                                                                    std::string sampler_id, diagnostics& diag) {
  GetSamplerResponse out;
  if (auto ec = co_await holder->ensure_config(diag)) co_return OperationResult<GetSamplerResponse>(ec, out);
  const error_code ec = co_await api::get_sampler(holder->http(), sampler_id, out, diag, holder->retry_call());
  co_return OperationResult<GetSamplerResponse>(ec, std::move(out));
}

error_code whoami_unavailable(diagnostics& diag, std::string why) {
  diag.clear();
  diag.message = "whoami needs a JWT to read the identity from, and " + std::move(why);
  return make_error_code(errc::invalid_configuration);
}

// The claims whoami reads (doc/rest.md#whoami): those of the JWT exchanged at auth/token when the server uses JWTs,
// else those of an API key that is itself a JWT issued by "passport-...".
error_code identity_claims(const ClientHolder& holder, session::JwtClaims& out, diagnostics& diag) {
  const ClientHolder::Impl& impl = holder.impl();
  if (impl.jwt_auth) {
    if (!impl.jwt_claims) {
      diag.clear();
      diag.message = "whoami: the JWT from auth/token cannot be decoded";
      return make_error_code(errc::protocol_error);
    }
    out = *impl.jwt_claims;
    return {};
  }
  const std::string& key = impl.options.client.api_key.reveal();
  if (!session::looks_like_jwt(key)) {
    return whoami_unavailable(diag,
                              "the server has JWT auth off (client/config pjwt_auth_enabled) while the "
                              "credential is a plain API key");
  }
  std::optional<session::JwtClaims> claims = session::decode_jwt_claims(key);
  if (!claims || !claims->iss || !claims->iss->starts_with("passport-")) {
    return whoami_unavailable(diag, "the server has JWT auth off while the API key is not a JWT issued by passport-");
  }
  out = std::move(*claims);
  return {};
}

asio::awaitable<OperationResult<WhoamiResponse>> whoami_op(std::shared_ptr<ClientHolder> holder, diagnostics& diag) {
  using Outcome = OperationResult<WhoamiResponse>;
  if (auto ec = co_await holder->ensure_config(diag)) co_return Outcome(ec, WhoamiResponse());
  session::JwtClaims claims;
  if (error_code ec = identity_claims(*holder, claims, diag)) co_return Outcome(ec, WhoamiResponse());
  if (!claims.sub || claims.sub->empty()) {
    diag.clear();
    diag.message = "whoami: the JWT has no sub claim";
    co_return Outcome(make_error_code(errc::protocol_error), WhoamiResponse());
  }
  co_return Outcome(error_code(), WhoamiResponse(std::move(*claims.sub), std::move(claims.email)));
}

asio::awaitable<OperationResult<GetServerCapabilitiesResponse>> server_capabilities_op(
    std::shared_ptr<ClientHolder> holder, diagnostics& diag) {
  GetServerCapabilitiesResponse out;
  if (auto ec = co_await holder->ensure_config(diag)) {
    co_return OperationResult<GetServerCapabilitiesResponse>(ec, out);
  }
  const error_code ec = co_await api::get_server_capabilities(holder->http(), out, diag, holder->retry_call());
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

void rest_whoami(std::shared_ptr<ClientHolder> holder, diagnostics* diag, Handler<WhoamiResponse> handler) {
  spawn_rest_call(std::move(holder), diag, std::move(handler), &whoami_op);
}

void service_get_server_capabilities(HolderPtr holder, diagnostics* diag,
                                     Handler<GetServerCapabilitiesResponse> handler) {
  spawn_rest_call(std::move(holder), diag, std::move(handler), &server_capabilities_op);
}

}  // namespace tinker::detail
