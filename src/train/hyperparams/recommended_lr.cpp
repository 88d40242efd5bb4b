// get_lr: the cookbook's recommended learning rate, lr = 5e-5 * (10 for LoRA) *
// (2000 / hidden_size) ^ exponent, with a per-family exponent (Llama 0.781, Qwen 0.0775).
#include <tinker/error.hpp>
#include <tinker/model_name.hpp>
#include <tinker/train/hyperparams.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <string>
#include <utility>

namespace tinker::train {
namespace {
namespace recommended_lr {

constexpr double base_lr = 5e-05;
constexpr double lora_multiplier = 10.0;
constexpr double llama_exponent = 0.781;
constexpr double qwen_exponent = 0.0775;

// hidden_size of the Llama and Qwen models Tinker serves (from their config.json; Qwen3-VL and
// Qwen3.5/3.6 keep it under text_config).
constexpr std::array<std::pair<std::string_view, int>, 26> hidden_sizes = {{
    {"meta-llama/Llama-3.2-1B", 2048},
    {"meta-llama/Llama-3.2-3B", 3072},
    {"meta-llama/Llama-3.1-8B", 4096},
    {"meta-llama/Llama-3.1-8B-Instruct", 4096},
    {"meta-llama/Llama-3.1-70B", 8192},
    {"meta-llama/Llama-3.3-70B-Instruct", 8192},
    {"Qwen/Qwen3-235B-A22B-Instruct-2507", 4096},
    {"Qwen/Qwen3-30B-A3B-Instruct-2507", 2048},
    {"Qwen/Qwen3-30B-A3B", 2048},
    {"Qwen/Qwen3-30B-A3B-Base", 2048},
    {"Qwen/Qwen3-32B", 5120},
    {"Qwen/Qwen3-8B", 4096},
    {"Qwen/Qwen3-8B-Base", 4096},
    {"Qwen/Qwen3-4B-Instruct-2507", 2560},
    {"Qwen/Qwen3-VL-235B-A22B-Instruct", 4096},
    {"Qwen/Qwen3-VL-30B-A3B-Instruct", 2048},
    {"Qwen/Qwen3.5-397B-A17B", 4096},
    {"Qwen/Qwen3.5-35B-A3B", 2048},
    {"Qwen/Qwen3.5-35B-A3B-Base", 2048},
    {"Qwen/Qwen3.5-27B", 5120},
    {"Qwen/Qwen3.5-9B", 4096},
    {"Qwen/Qwen3.5-9B-Base", 4096},
    {"Qwen/Qwen3.5-4B", 2560},
    {"Qwen/Qwen3.6-27B", 5120},
    {"Qwen/Qwen3.6-35B-A3B", 2048},
    {"Qwen/Qwen3.8-27B", 5120},
}};

std::string lowercase(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace recommended_lr
}  // namespace

double get_lr(std::string_view model_name, bool is_lora) {
  const auto model = model_lookup_name(model_name);
  const auto lower = recommended_lr::lowercase(model);
  double exponent = 0.0;
  if (lower.find("llama") != std::string::npos) {
    exponent = recommended_lr::llama_exponent;
  } else if (lower.find("qwen") != std::string::npos) {
    exponent = recommended_lr::qwen_exponent;
  } else {
    // The cookbook has no calibrated exponent for other families (DeepSeek, Kimi, gpt-oss,
    // Nemotron, Inkling): it refuses rather than guess, and so does this.
    throw error(errc::invalid_argument, "get_lr: no calibrated learning-rate formula for \"" + std::string(model) +
                                            "\" (only the Llama and Qwen families): set the learning rate yourself");
  }
  const auto found = std::find_if(recommended_lr::hidden_sizes.begin(), recommended_lr::hidden_sizes.end(),
                                  [&](const auto& entry) { return entry.first == model; });
  if (found == recommended_lr::hidden_sizes.end()) {
    throw error(errc::invalid_argument, "get_lr: the hidden size of \"" + std::string(model) +
                                            "\" is not known: set the learning rate yourself");
  }
  const double lr = is_lora ? recommended_lr::base_lr * recommended_lr::lora_multiplier : recommended_lr::base_lr;
  return lr * std::pow(2000.0 / found->second, exponent);
}

}  // namespace tinker::train
