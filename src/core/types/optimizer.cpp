// Optimizer helpers of <tinker/types/optimizer.hpp>: wire type names, the params/config match and
// the client-side checks of step parameters (doc/training.md#optimizers).
#include <tinker/types/optimizer.hpp>

#include <cmath>
#include <cstdio>
#include <string>
#include <type_traits>

namespace tinker {

namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

// "12.5", "nan", "inf": std::to_string writes fixed notation with six decimals, which hides small
// learning rates; %g keeps them readable.
std::string number_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

std::string field_problem(std::string_view prefix, std::string_view field, std::string_view requirement, double value) {
  return std::string(prefix) + "." + std::string(field) + ": must be " + std::string(requirement) + ", got " +
         number_text(value);
}

std::string dimuon_problem(const DimuonParams& p) {
  constexpr std::string_view prefix = "dimuon_params";
  if (!std::isfinite(p.learning_rate) || p.learning_rate < 0.0) {
    return field_problem(prefix, "learning_rate", "finite and >= 0", p.learning_rate);
  }
  if (!std::isfinite(p.grad_clip_norm)) {
    return field_problem(prefix, "grad_clip_norm", "finite (0 or less: no clipping)", p.grad_clip_norm);
  }
  if (!(p.beta1 >= 0.0 && p.beta1 < 1.0)) return field_problem(prefix, "beta1", "in [0, 1)", p.beta1);
  if (p.damping && !(std::isfinite(*p.damping) && *p.damping > 0.0)) {
    return field_problem(prefix, "damping", "finite and > 0", *p.damping);
  }
  if (p.rank_lr_correction_exponent && !std::isfinite(*p.rank_lr_correction_exponent)) {
    return field_problem(prefix, "rank_lr_correction_exponent", "finite (0 disables)", *p.rank_lr_correction_exponent);
  }
  return {};
}

}  // namespace

std::string_view optimizer_type(const OptimizerConfig& config) noexcept {
  return std::visit(Overloaded{[](const AdamOptimizerConfig&) -> std::string_view { return "adamw"; },
                               [](const DimuonOptimizerConfig&) -> std::string_view { return "dimuon"; },
                               [](const UnknownOptimizerConfig& c) -> std::string_view { return c.type; }},
                    config);
}

std::string_view optimizer_type(const OptimParams& params) noexcept {
  return std::holds_alternative<AdamParams>(params) ? "adamw" : "dimuon";
}

bool params_match(const OptimizerConfig& config, const OptimParams& params) noexcept {
  if (std::holds_alternative<AdamOptimizerConfig>(config)) return std::holds_alternative<AdamParams>(params);
  if (std::holds_alternative<DimuonOptimizerConfig>(config)) return std::holds_alternative<DimuonParams>(params);
  return false;
}

std::string optim_params_problem(const OptimParams& params) {
  // AdamParams keep their 0.25 behaviour: the server checks them (the encoder refuses NaN and
  // infinities, which JSON cannot carry).
  const auto* dimuon = std::get_if<DimuonParams>(&params);
  return dimuon != nullptr ? dimuon_problem(*dimuon) : std::string();
}

}  // namespace tinker
