// Training-side requests and results: models, forward/backward, optimizer, weights (spec 8.7, 8.8).
#pragma once

#include <tinker/types/common.hpp>
#include <tinker/types/datum.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace tinker {

/// AdamW hyper-parameters (spec 9.8); all fields are always sent.
class AdamParams {
 public:
  AdamParams() = default;
  explicit AdamParams(double learning_rate_) : learning_rate(learning_rate_) {}

  double learning_rate = 1e-4;
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-12;
  double weight_decay = 0.0;    ///< decoupled (AdamW)
  double grad_clip_norm = 0.0;  ///< global-norm clip; 0 = off

  friend bool operator==(const AdamParams&, const AdamParams&) = default;
};

/// LoRA adapter configuration (spec 9.9). At least one `train_*` flag must be true.
class LoraConfig {
 public:
  LoraConfig() = default;
  explicit LoraConfig(std::int64_t rank_, std::optional<std::int64_t> seed_ = std::nullopt)
      : rank(rank_), seed(seed_) {}

  std::int64_t rank = 32;
  std::optional<std::int64_t> seed;  ///< omitted = random
  bool train_unembed = true;
  bool train_mlp = true;
  bool train_attn = true;

  friend bool operator==(const LoraConfig&, const LoraConfig&) = default;
};

/// POST /api/v1/create_model (future; result CreateModelResponse).
class CreateModelRequest {
 public:
  CreateModelRequest() = default;
  CreateModelRequest(std::string session_id_, std::int64_t model_seq_id_, std::string base_model_,
                     std::optional<LoraConfig> lora_config_ = LoraConfig{})
      : session_id(std::move(session_id_)),
        model_seq_id(model_seq_id_),
        base_model(std::move(base_model_)),
        lora_config(std::move(lora_config_)) {}

  std::string session_id;
  std::int64_t model_seq_id = 0;
  std::string base_model;
  std::optional<JsonObject> user_metadata;
  std::optional<LoraConfig> lora_config;

  friend bool operator==(const CreateModelRequest&, const CreateModelRequest&) = default;
};

class CreateModelResponse {
 public:
  CreateModelResponse() = default;
  explicit CreateModelResponse(std::string model_id_) : model_id(std::move(model_id_)) {}

  std::string model_id;

  friend bool operator==(const CreateModelResponse&, const CreateModelResponse&) = default;
};

/// POST /api/v1/get_info.
class GetInfoRequest {
 public:
  GetInfoRequest() = default;
  explicit GetInfoRequest(std::string model_id_) : model_id(std::move(model_id_)) {}

  std::string model_id;

  friend bool operator==(const GetInfoRequest&, const GetInfoRequest&) = default;
};

/// `model_data` of a get_info response; the tokenizer is chosen from it (spec 11.7).
class ModelData {
 public:
  ModelData() = default;
  ModelData(std::optional<std::string> model_name_, std::optional<std::string> tokenizer_id_,
            std::optional<std::string> arch_ = std::nullopt)
      : arch(std::move(arch_)), model_name(std::move(model_name_)), tokenizer_id(std::move(tokenizer_id_)) {}

  std::optional<std::string> arch;
  std::optional<std::string> model_name;
  std::optional<std::string> tokenizer_id;

  friend bool operator==(const ModelData&, const ModelData&) = default;
};

class GetInfoResponse {
 public:
  GetInfoResponse() = default;
  GetInfoResponse(std::string model_id_, ModelData model_data_)
      : model_id(std::move(model_id_)), model_data(std::move(model_data_)) {}

  std::string model_id;
  ModelData model_data;
  std::optional<bool> is_lora;
  std::optional<std::int64_t> lora_rank;
  std::optional<std::string> model_name;

  friend bool operator==(const GetInfoResponse&, const GetInfoResponse&) = default;
};

/// POST /api/v1/unload_model (future; result UnloadModelResponse).
class UnloadModelRequest {
 public:
  UnloadModelRequest() = default;
  explicit UnloadModelRequest(std::string model_id_) : model_id(std::move(model_id_)) {}

  std::string model_id;

  friend bool operator==(const UnloadModelRequest&, const UnloadModelRequest&) = default;
};

class UnloadModelResponse {
 public:
  UnloadModelResponse() = default;
  explicit UnloadModelResponse(std::string model_id_) : model_id(std::move(model_id_)) {}

  std::string model_id;

  friend bool operator==(const UnloadModelResponse&, const UnloadModelResponse&) = default;
};

/// POST /api/v1/forward_backward (future; result ForwardBackwardOutput).
///
/// `forward_only` exists only in the protobuf form (spec 17); the JSON form is always a full
/// forward+backward, so encoding a forward-only request as JSON is an error: send a
/// ForwardRequest to the legacy /api/v1/forward instead.
class ForwardBackwardRequest {
 public:
  ForwardBackwardRequest() = default;
  ForwardBackwardRequest(std::string model_id_, std::int64_t seq_id_, ForwardBackwardInput input_,
                         bool forward_only_ = false)
      : forward_backward_input(std::move(input_)),
        model_id(std::move(model_id_)),
        seq_id(seq_id_),
        forward_only(forward_only_) {}

  ForwardBackwardInput forward_backward_input;
  std::string model_id;
  std::int64_t seq_id = 0;
  bool forward_only = false;

  friend bool operator==(const ForwardBackwardRequest&, const ForwardBackwardRequest&) = default;
};

/// POST /api/v1/forward (legacy JSON form used by SDKs <= 0.24.1).
class ForwardRequest {
 public:
  ForwardRequest() = default;
  ForwardRequest(std::string model_id_, std::int64_t seq_id_, ForwardBackwardInput input_)
      : forward_input(std::move(input_)), model_id(std::move(model_id_)), seq_id(seq_id_) {}

  ForwardBackwardInput forward_input;
  std::string model_id;
  std::int64_t seq_id = 0;

  friend bool operator==(const ForwardRequest&, const ForwardRequest&) = default;
};

/// POST /api/v1/optim_step (future; result OptimStepResponse).
class OptimStepRequest {
 public:
  OptimStepRequest() = default;
  OptimStepRequest(std::string model_id_, std::int64_t seq_id_, AdamParams adam_params_)
      : adam_params(adam_params_), model_id(std::move(model_id_)), seq_id(seq_id_) {}

  AdamParams adam_params;
  std::string model_id;
  std::int64_t seq_id = 0;

  friend bool operator==(const OptimStepRequest&, const OptimStepRequest&) = default;
};

class OptimStepResponse {
 public:
  OptimStepResponse() = default;
  explicit OptimStepResponse(std::optional<Metrics> metrics_) : metrics(std::move(metrics_)) {}

  std::optional<Metrics> metrics;

  friend bool operator==(const OptimStepResponse&, const OptimStepResponse&) = default;
};

/// POST /api/v1/save_weights (future; result SaveWeightsResponse): TrainingClient::save_state.
class SaveWeightsRequest {
 public:
  SaveWeightsRequest() = default;
  SaveWeightsRequest(std::string model_id_, std::int64_t seq_id_, std::string name,
                     std::optional<std::int64_t> ttl_seconds_ = std::nullopt, bool overwrite_ = false)
      : model_id(std::move(model_id_)),
        path(std::move(name)),
        seq_id(seq_id_),
        ttl_seconds(ttl_seconds_),
        overwrite(overwrite_) {}

  std::string model_id;
  std::optional<std::string> path;  ///< the checkpoint *name*, e.g. "step-0100"
  std::optional<std::int64_t> seq_id;
  std::optional<std::int64_t> ttl_seconds;  ///< absent = never expires
  bool overwrite = false;

  friend bool operator==(const SaveWeightsRequest&, const SaveWeightsRequest&) = default;
};

class SaveWeightsResponse {
 public:
  SaveWeightsResponse() = default;
  explicit SaveWeightsResponse(std::string path_) : path(std::move(path_)) {}

  std::string path;  ///< tinker://<model_id>/weights/<name>

  friend bool operator==(const SaveWeightsResponse&, const SaveWeightsResponse&) = default;
};

/// POST /api/v1/load_weights (future; result LoadWeightsResponse).
///
/// Two addressings: into an existing model (`model_id` + `seq_id`), or create-via-load
/// (`session_id` + `model_seq_id`, optionally `base_model` and `user_metadata`).
class LoadWeightsRequest {
 public:
  LoadWeightsRequest() = default;
  /// Legacy addressing: load `path` into the existing model.
  LoadWeightsRequest(std::string model_id_, std::int64_t seq_id_, std::string path_, bool optimizer_)
      : model_id(std::move(model_id_)), seq_id(seq_id_), path(std::move(path_)), optimizer(optimizer_) {}

  std::optional<std::string> model_id;
  std::optional<std::int64_t> seq_id;
  std::optional<std::string> session_id;
  std::optional<std::int64_t> model_seq_id;
  std::optional<std::string> base_model;
  std::optional<JsonObject> user_metadata;
  std::string path;  ///< full tinker:// path of a training checkpoint
  bool optimizer = false;
  std::optional<std::string> weights_access_token;

  friend bool operator==(const LoadWeightsRequest&, const LoadWeightsRequest&) = default;
};

class LoadWeightsResponse {
 public:
  LoadWeightsResponse() = default;

  std::optional<std::string> path;
  std::optional<std::string> model_id;

  friend bool operator==(const LoadWeightsResponse&, const LoadWeightsResponse&) = default;
};

/// POST /api/v1/save_weights_for_sampler (future). Named (`path`) saves a persistent sampler
/// checkpoint; unnamed (`sampling_session_seq_id`) yields an ephemeral sampling session.
class SaveWeightsForSamplerRequest {
 public:
  SaveWeightsForSamplerRequest() = default;
  SaveWeightsForSamplerRequest(std::string model_id_, std::int64_t seq_id_, std::optional<std::string> name,
                               std::optional<std::int64_t> ttl_seconds_ = std::nullopt)
      : model_id(std::move(model_id_)), path(std::move(name)), seq_id(seq_id_), ttl_seconds(ttl_seconds_) {}

  std::string model_id;
  std::optional<std::string> path;
  std::optional<std::int64_t> sampling_session_seq_id;
  std::optional<std::int64_t> seq_id;
  std::optional<std::int64_t> ttl_seconds;

  friend bool operator==(const SaveWeightsForSamplerRequest&, const SaveWeightsForSamplerRequest&) = default;
};

/// Result of save_weights_for_sampler: `path` for named saves, `sampling_session_id` for
/// unnamed ones.
class SaveWeightsForSamplerResponse {
 public:
  SaveWeightsForSamplerResponse() = default;

  std::optional<std::string> path;
  std::optional<std::string> sampling_session_id;

  friend bool operator==(const SaveWeightsForSamplerResponse&, const SaveWeightsForSamplerResponse&) = default;
};

TINKER_DECLARE_PRINTABLE(AdamParams);
TINKER_DECLARE_PRINTABLE(LoraConfig);
TINKER_DECLARE_PRINTABLE(CreateModelRequest);
TINKER_DECLARE_PRINTABLE(CreateModelResponse);
TINKER_DECLARE_PRINTABLE(GetInfoRequest);
TINKER_DECLARE_PRINTABLE(ModelData);
TINKER_DECLARE_PRINTABLE(GetInfoResponse);
TINKER_DECLARE_PRINTABLE(UnloadModelRequest);
TINKER_DECLARE_PRINTABLE(UnloadModelResponse);
TINKER_DECLARE_PRINTABLE(ForwardBackwardRequest);
TINKER_DECLARE_PRINTABLE(ForwardRequest);
TINKER_DECLARE_PRINTABLE(OptimStepRequest);
TINKER_DECLARE_PRINTABLE(OptimStepResponse);
TINKER_DECLARE_PRINTABLE(SaveWeightsRequest);
TINKER_DECLARE_PRINTABLE(SaveWeightsResponse);
TINKER_DECLARE_PRINTABLE(LoadWeightsRequest);
TINKER_DECLARE_PRINTABLE(LoadWeightsResponse);
TINKER_DECLARE_PRINTABLE(SaveWeightsForSamplerRequest);
TINKER_DECLARE_PRINTABLE(SaveWeightsForSamplerResponse);

}  // namespace tinker
