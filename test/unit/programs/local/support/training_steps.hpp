// Protocol steps over a training model, shared by the checkpoint, sampling and model tests:
// each keeps the model's seq_id counter the way a client's turnstile does
// (doc/training.md#ordering-and-pipelining).
#pragma once

#include "unit/programs/local/support/local_server.hpp"

#include <boost/json/value.hpp>

#include <optional>
#include <string>
#include <vector>

namespace tinker::local::test {

class TrainingModel {
 public:
  TrainingModel(LocalApi& api, std::string model_id) : api_(&api), model_id_(std::move(model_id)) {}

  const std::string& id() const noexcept { return model_id_; }
  std::int64_t next_seq() { return ++last_seq_; }
  void set_api(LocalApi& api) { api_ = &api; }

  /// forward_backward (cross_entropy, weights 1) on `batch`; returns the JSON result.
  boost::json::value forward_backward(const std::vector<Tokens>& batch);
  /// Forward only (protobuf request with forward_only, protobuf result): exact float logprobs.
  std::vector<std::vector<float>> forward_logprobs(const std::vector<Tokens>& batch);
  boost::json::value optim_step(double learning_rate);
  /// forward_backward + optim_step; returns the forward_backward's loss:sum.
  double train_step(const std::vector<Tokens>& batch, double learning_rate);

  /// save_weights; returns the whole HTTP answer of the future (success or failure).
  RawResponse save_weights(const std::string& name, std::optional<std::int64_t> ttl_seconds = std::nullopt,
                           bool overwrite = false);
  /// save_weights that must succeed; returns the tinker path.
  std::string save(const std::string& name);
  /// save_weights_for_sampler with a name; returns the tinker path.
  std::string save_for_sampler(const std::string& name);
  /// Ephemeral save_weights_for_sampler; returns the sampling_session_id.
  std::string save_for_sampler_ephemeral(std::int64_t sampling_session_seq_id);

 private:
  LocalApi* api_;
  std::string model_id_;
  std::int64_t last_seq_ = 0;
};

/// An asample body on a sampling session.
boost::json::object sample_body(const std::string& sampling_session_id, std::int64_t seq_id, const Tokens& prompt,
                                std::int64_t num_samples, std::int64_t max_tokens, double temperature,
                                std::optional<std::uint64_t> seed);
/// POST create_sampling_session for a base model or a tinker path; returns the id.
std::string create_sampling_session(LocalApi& api, const std::string& session, std::int64_t seq,
                                    std::optional<std::string> base_model, std::optional<std::string> model_path);

}  // namespace tinker::local::test
