// Datum, loss-function inputs and outputs, forward/backward results (spec 9.3-9.6).
#pragma once

#include <tinker/types/common.hpp>
#include <tinker/types/model_input.hpp>
#include <tinker/types/tensor.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tinker {

/// Names of the built-in loss functions (spec 9.4). The wire carries the name as a string so
/// that newer server-side losses stay usable.
namespace loss_fn {
inline constexpr const char* cross_entropy = "cross_entropy";
inline constexpr const char* importance_sampling = "importance_sampling";
inline constexpr const char* ppo = "ppo";
inline constexpr const char* cispo = "cispo";
inline constexpr const char* dro = "dro";
}  // namespace loss_fn

/// Map from input name (`target_tokens`, `weights`, `advantages`, `logprobs`, ...) to tensor.
using LossFnInputs = std::map<std::string, TensorData>;
/// Per-datum outputs of a loss function (at least `logprobs`).
using LossFnOutput = std::map<std::string, TensorData>;
/// Scalar loss configuration (e.g. `clip_low_threshold`, `beta`).
using LossFnConfig = std::map<std::string, double>;
/// Metrics keyed `<name>:<reduction>` (spec 11.4).
using Metrics = std::map<std::string, double>;

/// One training example: the model input and the per-token loss inputs aligned with it.
class Datum {
 public:
  Datum() = default;
  Datum(ModelInput model_input_, LossFnInputs loss_fn_inputs_)
      : model_input(std::move(model_input_)), loss_fn_inputs(std::move(loss_fn_inputs_)) {}

  ModelInput model_input;
  LossFnInputs loss_fn_inputs;

  friend bool operator==(const Datum&, const Datum&) = default;
};

/// The batch and loss of one forward(+backward) pass.
class ForwardBackwardInput {
 public:
  ForwardBackwardInput() = default;
  ForwardBackwardInput(std::vector<Datum> data_, std::string loss_fn_,
                       std::optional<LossFnConfig> loss_fn_config_ = std::nullopt)
      : data(std::move(data_)), loss_fn(std::move(loss_fn_)), loss_fn_config(std::move(loss_fn_config_)) {}

  std::vector<Datum> data;
  std::string loss_fn = loss_fn::cross_entropy;
  std::optional<LossFnConfig> loss_fn_config;

  friend bool operator==(const ForwardBackwardInput&, const ForwardBackwardInput&) = default;
};

/// Result of forward / forward_backward.
class ForwardBackwardOutput {
 public:
  ForwardBackwardOutput() = default;
  ForwardBackwardOutput(std::string loss_fn_output_type_, std::vector<LossFnOutput> loss_fn_outputs_, Metrics metrics_)
      : loss_fn_output_type(std::move(loss_fn_output_type_)),
        loss_fn_outputs(std::move(loss_fn_outputs_)),
        metrics(std::move(metrics_)) {}

  /// Class name of the output records (e.g. "ArrayRecord"); informational.
  std::string loss_fn_output_type = "ArrayRecord";
  /// One entry per datum, in request order.
  std::vector<LossFnOutput> loss_fn_outputs;
  Metrics metrics;

  friend bool operator==(const ForwardBackwardOutput&, const ForwardBackwardOutput&) = default;
};

TINKER_DECLARE_PRINTABLE(Datum);
TINKER_DECLARE_PRINTABLE(ForwardBackwardInput);
TINKER_DECLARE_PRINTABLE(ForwardBackwardOutput);

}  // namespace tinker
