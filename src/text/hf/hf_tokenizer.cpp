// See hf_tokenizer.hpp. The steps follow the reference's encode: added tokens in the raw text,
// then per section normalization, normalized added tokens, pre-tokenization and the model; the
// post-processor only with add_special_tokens.
#include "text/hf/hf_tokenizer.hpp"

#include <algorithm>
#include <limits>

namespace tinker::tokenizer_detail::hf {

HfTokenizer::HfTokenizer(std::string id, std::filesystem::path file, TokenizerConfig config, HfParts parts)
    : Tokenizer(std::move(id), std::move(file), TokenizerFormat::tokenizer_json, std::move(config)),
      parts_(std::move(parts)) {
  // As Python's len(tokenizer): the model's entries plus the added tokens that are not among them;
  // never less than one more than the largest id, so every id encode can give decodes.
  const std::size_t entries = parts_.model->vocab_size() + parts_.added.new_entries();
  const std::size_t bound = std::max({entries, parts_.model->id_bound(), parts_.added.id_bound()});
  vocab_size_ = static_cast<int>(std::min<std::size_t>(bound, std::numeric_limits<int>::max()));
  bos_ = named_token(this->config().bos_token);
  eos_ = named_token(this->config().eos_token);
  pad_ = named_token(this->config().pad_token);
  unk_ = named_token(this->config().unk_token);
  if (!unk_) named_token(parts_.model->options().unk_token).swap(unk_);
}

std::optional<TokenId> HfTokenizer::named_token(const std::optional<std::string>& name) const {
  if (!name) return std::nullopt;
  return do_token_to_id(*name);
}

std::optional<TokenId> HfTokenizer::do_token_to_id(std::string_view token) const {
  TokenId id = parts_.added.token_to_id(token);
  if (id < 0) id = parts_.model->token_to_id(token);
  if (id < 0) return std::nullopt;
  return id;
}

std::optional<std::string_view> HfTokenizer::token_text(TokenId id) const noexcept {
  if (auto text = parts_.added.decode_text(id)) return text;
  return parts_.model->id_to_token(id);
}

std::string HfTokenizer::do_id_to_token(TokenId id) const {
  return std::string(token_text(id).value_or(""));
}

namespace {

class EncodeScratch {
 public:
  std::vector<Section> sections;
  std::vector<Section> inner_sections;
  std::string normalized;
  Pieces pieces;
};

EncodeScratch& encode_scratch() {
  thread_local EncodeScratch scratch;
  return scratch;
}

}  // namespace

std::vector<TokenId> HfTokenizer::do_encode(std::string_view text, const EncodeOptions& options) const {
  std::vector<TokenId> ids;
  ids.reserve(text.size() / 3 + 4);
  // encode_section uses the scratch's other buffers, never this one.
  std::vector<Section>& sections = encode_scratch().sections;
  sections.clear();
  const bool skip_special = options.split_special_tokens;
  parts_.added.split_raw(text, skip_special, sections);
  for (const Section& section : sections) {
    if (section.token >= 0) {
      ids.push_back(section.token);
    } else if (section.end > section.begin) {
      encode_section(text.substr(section.begin, section.end - section.begin), section.begin == 0, skip_special, ids);
    }
  }
  if (options.add_special_tokens && parts_.post_processor) parts_.post_processor->add_special_tokens(ids);
  return ids;
}

void HfTokenizer::encode_section(std::string_view text, bool starts_input, bool skip_special,
                                 std::vector<TokenId>& ids) const {
  EncodeScratch& scratch = encode_scratch();
  if (parts_.normalizer) {
    scratch.normalized.assign(text);
    parts_.normalizer->normalize(scratch.normalized);
    text = scratch.normalized;
  }
  if (!parts_.added.has_normalized_tokens(skip_special)) {
    encode_normalized(text, starts_input, ids);
    return;
  }
  scratch.inner_sections.clear();
  parts_.added.split_normalized(text, skip_special, scratch.inner_sections);
  for (const Section& section : scratch.inner_sections) {
    if (section.token >= 0) {
      ids.push_back(section.token);
    } else if (section.end > section.begin) {
      encode_normalized(text.substr(section.begin, section.end - section.begin), starts_input && section.begin == 0,
                        ids);
    }
  }
}

void HfTokenizer::encode_normalized(std::string_view text, bool starts_input, std::vector<TokenId>& ids) const {
  Pieces& pieces = encode_scratch().pieces;
  pieces.reset(text);
  if (parts_.pre_tokenizer) parts_.pre_tokenizer->pre_tokenize(pieces, SectionContext(starts_input));
  for (std::size_t i = 0; i < pieces.size(); ++i) parts_.model->tokenize(pieces[i], ids);
}

// As the reference: every id becomes its token string (added tokens first), special added tokens
// are dropped when asked, and the decoder turns the list into text; without a decoder the
// strings are joined with spaces.
std::string HfTokenizer::do_decode(std::span<const TokenId> tokens, bool skip_special_tokens) const {
  std::vector<std::string> strings;
  strings.reserve(tokens.size());
  for (const TokenId id : tokens) {
    const auto text = token_text(id);
    if (!text) continue;
    if (skip_special_tokens && parts_.added.is_special_content(*text)) continue;
    strings.emplace_back(*text);
  }
  if (parts_.decoder) parts_.decoder->decode_chain(strings);
  std::string joined;
  for (std::size_t i = 0; i < strings.size(); ++i) {
    if (i > 0 && !parts_.decoder) joined += ' ';
    joined += strings[i];
  }
  return joined;
}

std::string HfTokenizer::do_decode_ordinary(std::span<const TokenId> tokens) const {
  return do_decode(tokens, false);
}

}  // namespace tinker::tokenizer_detail::hf
