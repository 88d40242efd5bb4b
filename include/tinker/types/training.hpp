/// \file
/// Training-side requests and results on the wire: models, forward/backward, optimizer, weights
/// (`doc/protocol.md#endpoints`, `doc/protocol.md#core-types`).
#pragma once

#include <tinker/types/common.hpp>
#include <tinker/types/datum.hpp>
#include <tinker/types/optimizer.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace tinker {

/// LoRA adapter configuration. At least one `train_*` flag must be true.
class LoraConfig {
 public:
  /// Rank 32 on every layer kind, random initialisation.
  LoraConfig() = default;
  /// Rank `rank_` on every layer kind, seeded by `seed_`.
  explicit LoraConfig(std::int64_t rank_, std::optional<std::int64_t> seed_ = std::nullopt)
      : rank(rank_), seed(seed_) {}

  std::int64_t rank = 32;            ///< rank of the low-rank update
  std::optional<std::int64_t> seed;  ///< initialisation seed; omitted = random
  bool train_unembed = true;         ///< LoRA on the unembedding layer
  bool train_mlp = true;             ///< LoRA on the MLP (or MoE) layers
  bool train_attn = true;            ///< LoRA on the attention layers

  /// Equal when every field is equal.
  friend bool operator==(const LoraConfig&, const LoraConfig&) = default;
};

/// POST /api/v1/create_model (future; result CreateModelResponse).
class CreateModelRequest {
 public:
  /// An empty request.
  CreateModelRequest() = default;
  /// Model number `model_seq_id_` of `session_id_`, on `base_model_` with `lora_config_`.
  CreateModelRequest(std::string session_id_, std::int64_t model_seq_id_, std::string base_model_,
                     std::optional<LoraConfig> lora_config_ = LoraConfig{})
      : session_id(std::move(session_id_)),
        model_seq_id(model_seq_id_),
        base_model(std::move(base_model_)),
        lora_config(std::move(lora_config_)) {}

  std::string session_id;                   ///< the owning session
  std::int64_t model_seq_id = 0;            ///< the session's model counter, from 0
  std::string base_model;                   ///< e.g. "Qwen/Qwen3-8B"
  std::optional<JsonObject> user_metadata;  ///< free-form, shown by the REST listings
  std::optional<LoraConfig> lora_config;    ///< the adapter (the SDK always sends one)
  /// The model's optimizer for its life; omitted (as for AdamW, the default) = AdamW
  /// (`doc/training.md#optimizers`).
  std::optional<OptimizerConfig> optimizer_config;

  /// Equal when every field is equal.
  friend bool operator==(const CreateModelRequest&, const CreateModelRequest&) = default;
};

/// Result of create_model.
class CreateModelResponse {
 public:
  /// An empty result.
  CreateModelResponse() = default;
  /// The new model `model_id_`.
  explicit CreateModelResponse(std::string model_id_) : model_id(std::move(model_id_)) {}

  /// `<session_id>:train:<model_seq_id>`.
  std::string model_id;

  /// Equal when every field is equal.
  friend bool operator==(const CreateModelResponse&, const CreateModelResponse&) = default;
};

/// POST /api/v1/get_info.
class GetInfoRequest {
 public:
  /// An empty request.
  GetInfoRequest() = default;
  /// The info of `model_id_`.
  explicit GetInfoRequest(std::string model_id_) : model_id(std::move(model_id_)) {}

  /// The model asked about.
  std::string model_id;

  /// Equal when every field is equal.
  friend bool operator==(const GetInfoRequest&, const GetInfoRequest&) = default;
};

/// `model_data` of a get_info response; the tokenizer is chosen from it (`doc/tokenizers.md`).
class ModelData {
 public:
  /// No data.
  ModelData() = default;
  /// The data of a model named `model_name_` with tokenizer `tokenizer_id_`.
  ModelData(std::optional<std::string> model_name_, std::optional<std::string> tokenizer_id_,
            std::optional<std::string> arch_ = std::nullopt)
      : arch(std::move(arch_)), model_name(std::move(model_name_)), tokenizer_id(std::move(tokenizer_id_)) {}

  std::optional<std::string> arch;          ///< architecture, e.g. "qwen3"
  std::optional<std::string> model_name;    ///< the base model; get_tokenizer needs it
  std::optional<std::string> tokenizer_id;  ///< Hugging Face repo id of the tokenizer; empty: from model_name

  /// Equal when every field is equal.
  friend bool operator==(const ModelData&, const ModelData&) = default;
};

/// Answer of get_info (TrainingClient::async_get_info).
class GetInfoResponse {
 public:
  /// An empty answer.
  GetInfoResponse() = default;
  /// The info of `model_id_`.
  GetInfoResponse(std::string model_id_, ModelData model_data_)
      : model_id(std::move(model_id_)), model_data(std::move(model_data_)) {}

  std::string model_id;                   ///< the model asked about
  ModelData model_data;                   ///< base model, architecture and tokenizer
  std::optional<bool> is_lora;            ///< a LoRA adapter (always, for models made by this SDK)
  std::optional<std::int64_t> lora_rank;  ///< the adapter's rank
  std::optional<std::string> model_name;  ///< the base model (use model_data.model_name)

  /// Equal when every field is equal.
  friend bool operator==(const GetInfoResponse&, const GetInfoResponse&) = default;
};

/// POST /api/v1/unload_model (future; result UnloadModelResponse). Part of the protocol; no
/// client call sends it (a model ends with its session).
class UnloadModelRequest {
 public:
  /// An empty request.
  UnloadModelRequest() = default;
  /// Unload `model_id_`.
  explicit UnloadModelRequest(std::string model_id_) : model_id(std::move(model_id_)) {}

  /// The model to unload.
  std::string model_id;

  /// Equal when every field is equal.
  friend bool operator==(const UnloadModelRequest&, const UnloadModelRequest&) = default;
};

/// Result of unload_model.
class UnloadModelResponse {
 public:
  /// An empty result.
  UnloadModelResponse() = default;
  /// `model_id_` was unloaded.
  explicit UnloadModelResponse(std::string model_id_) : model_id(std::move(model_id_)) {}

  /// The unloaded model.
  std::string model_id;

  /// Equal when every field is equal.
  friend bool operator==(const UnloadModelResponse&, const UnloadModelResponse&) = default;
};

/// POST /api/v1/forward_backward (future; result ForwardBackwardOutput).
///
/// `forward_only` exists only in the protobuf form (`doc/protocol.md#protobuf`); the JSON form is
/// always a full forward+backward, so encoding a forward-only request as JSON is an error: send a
/// ForwardRequest to the legacy /api/v1/forward instead.
class ForwardBackwardRequest {
 public:
  /// An empty request.
  ForwardBackwardRequest() = default;
  /// `input_` on `model_id_` as its operation `seq_id_`.
  ForwardBackwardRequest(std::string model_id_, std::int64_t seq_id_, ForwardBackwardInput input_,
                         bool forward_only_ = false)
      : forward_backward_input(std::move(input_)),
        model_id(std::move(model_id_)),
        seq_id(seq_id_),
        forward_only(forward_only_) {}

  ForwardBackwardInput forward_backward_input;  ///< the batch (one chunk of the caller's) and the loss
  std::string model_id;                         ///< the model
  /// The model's operation number, from 1 (`doc/training.md#ordering-and-pipelining`).
  std::int64_t seq_id = 0;
  bool forward_only = false;  ///< no backward pass (TrainingClient::async_forward)

  /// Equal when every field is equal.
  friend bool operator==(const ForwardBackwardRequest&, const ForwardBackwardRequest&) = default;
};

/// POST /api/v1/forward (legacy JSON form used by SDKs <= 0.24.1).
class ForwardRequest {
 public:
  /// An empty request.
  ForwardRequest() = default;
  /// `input_` on `model_id_` as its operation `seq_id_`.
  ForwardRequest(std::string model_id_, std::int64_t seq_id_, ForwardBackwardInput input_)
      : forward_input(std::move(input_)), model_id(std::move(model_id_)), seq_id(seq_id_) {}

  ForwardBackwardInput forward_input;  ///< the batch and the loss
  std::string model_id;                ///< the model
  std::int64_t seq_id = 0;             ///< the model's operation number, from 1

  /// Equal when every field is equal.
  friend bool operator==(const ForwardRequest&, const ForwardRequest&) = default;
};

/// POST /api/v1/optim_step (future; result OptimStepResponse). Exactly one of `adam_params` (the
/// 0.25 form) and `optim_params` (later servers) is sent (`doc/training.md#optimizers`).
class OptimStepRequest {
 public:
  /// An empty request.
  OptimStepRequest() = default;
  /// One AdamW step of `model_id_` in the 0.25 form (`adam_params`), as its operation `seq_id_`.
  OptimStepRequest(std::string model_id_, std::int64_t seq_id_, AdamParams adam_params_)
      : adam_params(adam_params_), model_id(std::move(model_id_)), seq_id(seq_id_) {}
  /// One step of `model_id_` in the later form (`optim_params`), as its operation `seq_id_`.
  OptimStepRequest(std::string model_id_, std::int64_t seq_id_, OptimParams optim_params_)
      : optim_params(std::move(optim_params_)), model_id(std::move(model_id_)), seq_id(seq_id_) {}

  std::optional<AdamParams> adam_params;    ///< the 0.25 form: AdamW hyper-parameters
  std::optional<OptimParams> optim_params;  ///< the later form: the optimizer's hyper-parameters
  std::string model_id;                     ///< the model
  std::int64_t seq_id = 0;                  ///< the model's operation number, from 1

  /// Equal when every field is equal.
  friend bool operator==(const OptimStepRequest&, const OptimStepRequest&) = default;
};

/// Result of optim_step.
class OptimStepResponse {
 public:
  /// No metrics.
  OptimStepResponse() = default;
  /// A result with `metrics_`.
  explicit OptimStepResponse(std::optional<Metrics> metrics_) : metrics(std::move(metrics_)) {}

  /// The step's metrics, e.g. `grad_norm:mean`; the server may send none.
  std::optional<Metrics> metrics;

  /// Equal when every field is equal.
  friend bool operator==(const OptimStepResponse&, const OptimStepResponse&) = default;
};

/// POST /api/v1/save_weights (future; result SaveWeightsResponse): TrainingClient::save_state.
class SaveWeightsRequest {
 public:
  /// An empty request.
  SaveWeightsRequest() = default;
  /// Save `model_id_` as checkpoint `name`, as its operation `seq_id_`.
  SaveWeightsRequest(std::string model_id_, std::int64_t seq_id_, std::string name,
                     std::optional<std::int64_t> ttl_seconds_ = std::nullopt, bool overwrite_ = false)
      : model_id(std::move(model_id_)),
        path(std::move(name)),
        seq_id(seq_id_),
        ttl_seconds(ttl_seconds_),
        overwrite(overwrite_) {}

  std::string model_id;                     ///< the model
  std::optional<std::string> path;          ///< the checkpoint *name*, e.g. "step-0100"
  std::optional<std::int64_t> seq_id;       ///< the model's operation number (always sent by the SDK)
  std::optional<std::int64_t> ttl_seconds;  ///< lifetime in seconds; absent = never expires
  bool overwrite = false;                   ///< replace an existing checkpoint of that name
  /// Exact string pairs stored with the checkpoint; omitted when empty. With `overwrite`, the
  /// whole map replaces the old one (none given deletes the old metadata).
  std::optional<std::map<std::string, std::string>> user_metadata;

  /// Equal when every field is equal.
  friend bool operator==(const SaveWeightsRequest&, const SaveWeightsRequest&) = default;
};

/// Result of save_weights (TrainingClient::async_save_state).
class SaveWeightsResponse {
 public:
  /// An empty result.
  SaveWeightsResponse() = default;
  /// A checkpoint saved at `path_`.
  explicit SaveWeightsResponse(std::string path_) : path(std::move(path_)) {}

  std::string path;  ///< `tinker://<model_id>/weights/<name>`

  /// Equal when every field is equal.
  friend bool operator==(const SaveWeightsResponse&, const SaveWeightsResponse&) = default;
};

/// POST /api/v1/load_weights (future; result LoadWeightsResponse).
///
/// Two addressings: into an existing model (`model_id` + `seq_id`), or create-via-load
/// (`session_id` + `model_seq_id`, optionally `base_model` and `user_metadata`).
class LoadWeightsRequest {
 public:
  /// An empty request.
  LoadWeightsRequest() = default;
  /// Legacy addressing: load `path` into the existing model.
  LoadWeightsRequest(std::string model_id_, std::int64_t seq_id_, std::string path_, bool optimizer_)
      : model_id(std::move(model_id_)), seq_id(seq_id_), path(std::move(path_)), optimizer(optimizer_) {}

  std::optional<std::string> model_id;              ///< legacy addressing: the model to load into
  std::optional<std::int64_t> seq_id;               ///< legacy addressing: its operation number
  std::optional<std::string> session_id;            ///< create-via-load: the session of the new model
  std::optional<std::int64_t> model_seq_id;         ///< create-via-load: the session's model counter
  std::optional<std::string> base_model;            ///< create-via-load: a compatible base model to use instead
  std::optional<JsonObject> user_metadata;          ///< create-via-load: the new model's metadata
  std::string path;                                 ///< full `tinker://` path of a training checkpoint
  bool optimizer = false;                           ///< also restore the optimizer state
  std::optional<std::string> weights_access_token;  ///< credential of another account that may read the checkpoint
  /// The optimizer the model has (or, create-via-load, gets); omitted = AdamW for a new model, or
  /// the checkpoint's when its optimizer state is loaded (`doc/training.md#optimizers`).
  std::optional<OptimizerConfig> optimizer_config;

  /// Equal when every field is equal.
  friend bool operator==(const LoadWeightsRequest&, const LoadWeightsRequest&) = default;
};

/// Result of load_weights.
class LoadWeightsResponse {
 public:
  /// An empty result.
  LoadWeightsResponse() = default;

  std::optional<std::string> path;      ///< the checkpoint loaded
  std::optional<std::string> model_id;  ///< the model loaded into (or created)
  /// The model's optimizer after the load; absent: not said (servers of the 0.25 protocol)
  /// (`doc/training.md#optimizers`).
  std::optional<OptimizerConfig> optimizer_config;

  /// Equal when every field is equal.
  friend bool operator==(const LoadWeightsResponse&, const LoadWeightsResponse&) = default;
};

/// POST /api/v1/save_weights_for_sampler (future). Named (`path`) saves a persistent sampler
/// checkpoint; unnamed (`sampling_session_seq_id`) yields an ephemeral sampling session.
class SaveWeightsForSamplerRequest {
 public:
  /// An empty request.
  SaveWeightsForSamplerRequest() = default;
  /// Save `model_id_` for sampling as checkpoint `name` (unnamed when empty), as its operation
  /// `seq_id_`.
  SaveWeightsForSamplerRequest(std::string model_id_, std::int64_t seq_id_, std::optional<std::string> name,
                               std::optional<std::int64_t> ttl_seconds_ = std::nullopt)
      : model_id(std::move(model_id_)), path(std::move(name)), seq_id(seq_id_), ttl_seconds(ttl_seconds_) {}

  std::string model_id;                                 ///< the model
  std::optional<std::string> path;                      ///< checkpoint name: a persistent sampler checkpoint
  std::optional<std::int64_t> sampling_session_seq_id;  ///< instead of `path`: the session's sampler counter
  std::optional<std::int64_t> seq_id;                   ///< the model's operation number (always sent by the SDK)
  std::optional<std::int64_t> ttl_seconds;              ///< lifetime in seconds; absent = never expires
  /// Exact string pairs stored with the checkpoint; omitted when empty.
  std::optional<std::map<std::string, std::string>> user_metadata;

  /// Equal when every field is equal.
  friend bool operator==(const SaveWeightsForSamplerRequest&, const SaveWeightsForSamplerRequest&) = default;
};

/// Result of save_weights_for_sampler: `path` for named saves, `sampling_session_id` for
/// unnamed ones.
class SaveWeightsForSamplerResponse {
 public:
  /// An empty result.
  SaveWeightsForSamplerResponse() = default;

  std::optional<std::string> path;                 ///< `tinker://<model_id>/sampler_weights/<name>`
  std::optional<std::string> sampling_session_id;  ///< the sampler on the saved weights

  /// Equal when every field is equal.
  friend bool operator==(const SaveWeightsForSamplerResponse&, const SaveWeightsForSamplerResponse&) = default;
};

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
