// One sample for `tinker chat` and `tinker sample`: the request, the wait (with a spinner on a
// terminal, since the protocol streams nothing), and the conversation prefix that declares the
// system prompt and tools.
#pragma once

#include "programs/cli/context.hpp"

#include <tinker/renderers.hpp>
#include <tinker/sampling_client.hpp>
#include <tinker/types/model_input.hpp>
#include <tinker/types/sampling.hpp>

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tinker::cli {

/// `num_samples` samples of `prompt`. With `spinner`, a spinner turns on the output stream until
/// the answer comes (and is erased then).
boost::asio::awaitable<std::vector<SampledSequence>> sample_sequences(Context& context, const SamplingClient& client,
                                                                      ModelInput prompt, SamplingParams params,
                                                                      std::int64_t num_samples, bool spinner);

/// The messages before a conversation: the renderer's declaration of `tools` with the system
/// prompt when there are tools, else the system message alone (nothing when it is empty too).
std::vector<renderers::Message> conversation_prefix(const renderers::Renderer& renderer,
                                                    const std::string& system_prompt,
                                                    std::span<const renderers::ToolSpec> tools);

/// The tool declarations in the file `path` (renderers::tools_from_json). Throws CliError naming
/// the file.
std::vector<renderers::ToolSpec> read_tools_file(const std::string& path);

}  // namespace tinker::cli
