// The tokenizer.json components other than the model and the added tokens, read from their JSON
// objects: normalizer, pre_tokenizer, post_processor, decoder. An unsupported "type" fails naming
// it and its JSON path.
#pragma once

#include "text/hf/decoders.hpp"
#include "text/hf/json_reader.hpp"
#include "text/hf/post_processors.hpp"
#include "text/pre_tokenizer.hpp"

#include <memory>

namespace tinker::tokenizer_detail::hf {

/// Null for a normalizer that does nothing (an empty Sequence).
std::unique_ptr<Normalizer> load_normalizer(const JsonObject& spec);
/// True when the last step of the pre-tokenizer is ByteLevel (the model may then take raw bytes).
bool ends_in_byte_level(const JsonObject& spec);
/// With `raw_bytes`, the last ByteLevel step leaves pieces as raw bytes (see ends_in_byte_level).
std::unique_ptr<PreTokenizer> load_pre_tokenizer(const JsonObject& spec, bool raw_bytes);
std::unique_ptr<PostProcessor> load_post_processor(const JsonObject& spec);
std::unique_ptr<Decoder> load_decoder(const JsonObject& spec);

}  // namespace tinker::tokenizer_detail::hf
