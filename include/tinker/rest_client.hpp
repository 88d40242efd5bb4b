// RestClient (spec 14): management calls that need no session. This stage provides the calls
// that creating a training client from a checkpoint needs; the full list comes with issue 6.
#pragma once

#include <tinker/async.hpp>
#include <tinker/types/checkpoint.hpp>
#include <tinker/types/session.hpp>

#include <memory>
#include <string>

namespace tinker {

namespace detail {
class ClientHolder;
void rest_get_weights_info(std::shared_ptr<ClientHolder> holder, std::string tinker_path, diagnostics* diag,
                           Handler<WeightsInfoResponse> handler);
void rest_get_sampler(std::shared_ptr<ClientHolder> holder, std::string sampler_id, diagnostics* diag,
                      Handler<GetSamplerResponse> handler);
}  // namespace detail

/// A cheap handle; copies share the connection pools of the ServiceClient that made them.
class RestClient {
 public:
  explicit RestClient(std::shared_ptr<detail::ClientHolder> holder) : holder_(std::move(holder)) {}

  /// POST /api/v1/weights_info for a `tinker://` checkpoint path: base model and LoRA settings.
  template <class Token = default_token>
  auto async_get_weights_info(std::string tinker_path, Token&& token = {}) const {
    return detail::start<WeightsInfoResponse>(std::forward<Token>(token), nullptr, &detail::rest_get_weights_info,
                                              holder_, std::move(tinker_path));
  }
  template <class Token = default_token>
  auto async_get_weights_info(std::string tinker_path, diagnostics& diag, Token&& token = {}) const {
    return detail::start<WeightsInfoResponse>(std::forward<Token>(token), &diag, &detail::rest_get_weights_info,
                                              holder_, std::move(tinker_path));
  }

  /// GET /api/v1/samplers/{id}: the base model (and checkpoint) a sampler serves.
  template <class Token = default_token>
  auto async_get_sampler(std::string sampler_id, Token&& token = {}) const {
    return detail::start<GetSamplerResponse>(std::forward<Token>(token), nullptr, &detail::rest_get_sampler, holder_,
                                             std::move(sampler_id));
  }
  template <class Token = default_token>
  auto async_get_sampler(std::string sampler_id, diagnostics& diag, Token&& token = {}) const {
    return detail::start<GetSamplerResponse>(std::forward<Token>(token), &diag, &detail::rest_get_sampler, holder_,
                                             std::move(sampler_id));
  }

 private:
  std::shared_ptr<detail::ClientHolder> holder_;
};

}  // namespace tinker
