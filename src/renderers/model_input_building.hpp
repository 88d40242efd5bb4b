// Building ModelInputs message by message, shared by the Renderer base and the families that
// assemble conversations themselves (Kimi): runs of text stay one chunk, images stay whole.
#pragma once

#include <tinker/types/model_input.hpp>

#include <cstddef>
#include <optional>
#include <span>

namespace tinker::renderers::detail {

/// Appends `tokens` to the last chunk when it is text, so a conversation is one chunk per run of
/// text rather than one per message part.
void append_tokens(ModelInput& input, std::span<const TokenId> tokens);

/// Appends `chunk`: text joins the last run of text, anything else is appended whole.
void append_chunk(ModelInput& input, const ModelInputChunk& chunk);

/// The number of positions `prefix` covers when it is a prefix of `full` (both built with
/// append_tokens/append_chunk, so runs of text are single chunks): every chunk equal except the
/// last, which may be the start of `full`'s text chunk at that place. Empty when it is not a prefix.
std::optional<std::size_t> prefix_positions(const ModelInput& prefix, const ModelInput& full);

}  // namespace tinker::renderers::detail
