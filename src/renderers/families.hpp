// Constructors of the renderer families, one per name make_renderer knows. Each family lives in
// its own file (role_colon.cpp, llama3.cpp, qwen3.cpp, deepseek_v3.cpp, gpt_oss.cpp, kimi_k2.cpp).
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
std::unique_ptr<Renderer> make_deepseekv3(TokenizerPtr tokenizer);
std::unique_ptr<Renderer> make_deepseekv3_thinking(TokenizerPtr tokenizer);
std::unique_ptr<Renderer> make_gpt_oss_no_sysprompt(TokenizerPtr tokenizer);
std::unique_ptr<Renderer> make_gpt_oss_medium_reasoning(TokenizerPtr tokenizer);
std::unique_ptr<Renderer> make_kimi_k2(TokenizerPtr tokenizer);

/// "role_colon, llama3, ...": for error messages.
std::string joined_renderer_names();

}  // namespace tinker::renderers::detail
