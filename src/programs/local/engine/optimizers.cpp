// Each model's optimizer (doc/local.md#dimuon): AdamW or Dimuon, fixed when the model is created
// (create_model's optimizer_config; for create-via-load the caller's, else the checkpoint's when its
// optimizer state is loaded) and kept in training checkpoints with the optimizer state.
#include "programs/local/engine/engine_impl.hpp"

#include <variant>

namespace tinker::local::engine_detail {

std::optional<std::string> optimizer_problem(const OptimizerConfig& config, std::string_view field) {
  if (const auto* unknown = std::get_if<UnknownOptimizerConfig>(&config)) {
    return std::string(field) + ".type: unknown optimizer \"" + unknown->type + "\" (tinker-local has adamw, dimuon)";
  }
  if (const auto* dimuon = std::get_if<DimuonOptimizerConfig>(&config); dimuon != nullptr && dimuon->version != 1) {
    return std::string(field) + ".version: dimuon version " + std::to_string(dimuon->version) +
           " is not known (tinker-local has version 1)";
  }
  return std::nullopt;
}

OptimizerConfig checkpoint_optimizer(const CheckpointMeta& meta) {
  if (meta.optimizer_type == "dimuon") return DimuonOptimizerConfig();
  return AdamOptimizerConfig();
}

OptimParams optim_params_for(const OptimStepRequest& request, const ModelRecord& model) {
  if (request.adam_params && request.optim_params) {
    throw HttpError(400, "optim_step: adam_params and optim_params are mutually exclusive");
  }
  if (!request.adam_params && !request.optim_params) {
    throw HttpError(400, "optim_step: optim_params (or adam_params) is required");
  }
  OptimParams params = request.optim_params ? *request.optim_params : OptimParams(*request.adam_params);
  if (!params_match(model.optimizer, params)) {
    throw HttpError(400, "optim_step: " + std::string(optimizer_type(params)) + " parameters do not match model " +
                             model.id + "'s optimizer " + std::string(optimizer_type(model.optimizer)));
  }
  return params;
}

}  // namespace tinker::local::engine_detail
