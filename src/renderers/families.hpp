// Constructors of the built-in renderer families, one per name make_renderer knows. Each family
// lives in its own file (role_colon.cpp, llama3.cpp, qwen3.cpp, qwen3_5.cpp, qwen3_vl.cpp,
// deepseek_v3.cpp, gpt_oss.cpp, kimi_k2.cpp, kimi_k25.cpp, nemotron3.cpp).
#pragma once

#include <tinker/renderers.hpp>

#include <memory>
#include <string>

namespace tinker::renderers::detail {

using TokenizerPtr = std::shared_ptr<const Tokenizer>;

std::unique_ptr<Renderer> make_role_colon(TokenizerPtr tokenizer);
std::unique_ptr<Renderer> make_llama3(TokenizerPtr tokenizer);

std::unique_ptr<Renderer> make_qwen3(TokenizerPtr tokenizer);
std::unique_ptr<Renderer> make_qwen3_disable_thinking(TokenizerPtr tokenizer);
std::unique_ptr<Renderer> make_qwen3_instruct(TokenizerPtr tokenizer);
std::unique_ptr<Renderer> make_qwen3_vl(TokenizerPtr tokenizer);
std::unique_ptr<Renderer> make_qwen3_vl_instruct(TokenizerPtr tokenizer);
std::unique_ptr<Renderer> make_qwen3_5(TokenizerPtr tokenizer);
std::unique_ptr<Renderer> make_qwen3_5_disable_thinking(TokenizerPtr tokenizer);
std::unique_ptr<Renderer> make_qwen3_8_xhigh_reasoning(TokenizerPtr tokenizer);
std::unique_ptr<Renderer> make_qwen3_8_medium_reasoning(TokenizerPtr tokenizer);
std::unique_ptr<Renderer> make_qwen3_8_low_reasoning(TokenizerPtr tokenizer);
std::unique_ptr<Renderer> make_qwen3_8_disable_thinking(TokenizerPtr tokenizer);

std::unique_ptr<Renderer> make_deepseekv3(TokenizerPtr tokenizer);
std::unique_ptr<Renderer> make_deepseekv3_disable_thinking(TokenizerPtr tokenizer);
std::unique_ptr<Renderer> make_deepseekv3_thinking(TokenizerPtr tokenizer);

std::unique_ptr<Renderer> make_gpt_oss_no_sysprompt(TokenizerPtr tokenizer);
std::unique_ptr<Renderer> make_gpt_oss_low_reasoning(TokenizerPtr tokenizer);
std::unique_ptr<Renderer> make_gpt_oss_medium_reasoning(TokenizerPtr tokenizer);
std::unique_ptr<Renderer> make_gpt_oss_high_reasoning(TokenizerPtr tokenizer);

std::unique_ptr<Renderer> make_kimi_k2(TokenizerPtr tokenizer);
std::unique_ptr<Renderer> make_kimi_k25(TokenizerPtr tokenizer);
std::unique_ptr<Renderer> make_kimi_k25_disable_thinking(TokenizerPtr tokenizer);
std::unique_ptr<Renderer> make_kimi_k26(TokenizerPtr tokenizer);
std::unique_ptr<Renderer> make_kimi_k26_disable_thinking(TokenizerPtr tokenizer);
std::unique_ptr<Renderer> make_kimi_k26_preserve_thinking(TokenizerPtr tokenizer);

std::unique_ptr<Renderer> make_nemotron3(TokenizerPtr tokenizer);
std::unique_ptr<Renderer> make_nemotron3_disable_thinking(TokenizerPtr tokenizer);
std::unique_ptr<Renderer> make_nemotron3_preserve_thinking(TokenizerPtr tokenizer);
std::unique_ptr<Renderer> make_nemotron3_low_thinking(TokenizerPtr tokenizer);
std::unique_ptr<Renderer> make_nemotron3_ultra(TokenizerPtr tokenizer);
std::unique_ptr<Renderer> make_nemotron3_ultra_disable_thinking(TokenizerPtr tokenizer);
std::unique_ptr<Renderer> make_nemotron3_ultra_medium_thinking(TokenizerPtr tokenizer);
std::unique_ptr<Renderer> make_nemotron3_ultra_preserve_thinking(TokenizerPtr tokenizer);

/// "role_colon, llama3, ...": for error messages (registered families included).
std::string joined_renderer_names();

}  // namespace tinker::renderers::detail
