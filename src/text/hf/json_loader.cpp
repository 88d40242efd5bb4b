// load_tokenizer_json: tokenizer.json -> HfTokenizer. The vocabulary and merges are streamed into
// the model's tables while the file is parsed (model_stream.hpp); the rest is read from the document.
//
// "truncation" and "padding" are ignored: they only matter for batch encoding to fixed lengths,
// and Python's transformers sets them per call too.
#include "text/hf/components.hpp"
#include "text/hf/hf_tokenizer.hpp"
#include "text/hf/json_reader.hpp"
#include "text/hf/model_stream.hpp"

#include <tinker/error.hpp>
#include <tinker/tokenizer.hpp>

namespace tinker {
namespace tokenizer_detail::hf {
namespace {

// Ids index flat tables, so a hostile file must not make them huge: 16M ids is 60 times the
// largest vocabulary served today.
constexpr std::uint64_t max_token_id = (1U << 24) - 1;

BpeOptions bpe_options(const JsonObject& model) {
  BpeOptions options;
  if (const auto* dropout = model.find("dropout")) {
    if (!dropout->is_number() || dropout->to_number<double>() != 0.0) {
      model.fail_at("dropout", "BPE dropout is not supported (it makes encoding random); expected null");
    }
  }
  if (const auto unk = model.optional_string("unk_token")) options.unk_token = std::string(*unk);
  options.continuing_subword_prefix = std::string(model.optional_string("continuing_subword_prefix").value_or(""));
  options.end_of_word_suffix = std::string(model.optional_string("end_of_word_suffix").value_or(""));
  options.fuse_unk = model.boolean("fuse_unk", false);
  options.byte_fallback = model.boolean("byte_fallback", false);
  options.ignore_merges = model.boolean("ignore_merges", false);
  return options;
}

// The merges as the streaming parse collected them; their rank is their order.
void add_merges(const JsonObject& model, StreamedModel& streamed) {
  const auto missing = streamed.builder.add_merges(streamed.merges.size(), [&](std::size_t i) {
    return std::pair{streamed.left(streamed.merges[i]), streamed.right(streamed.merges[i])};
  });
  if (missing) {
    model.file().fail(json_path(model.path_of("merges"), streamed.merges[missing->first].index),
                      "the merge names \"" + missing->second + "\", which is not in model.vocab");
  }
}

std::vector<AddedToken> read_added_tokens(const JsonObject& root) {
  std::vector<AddedToken> tokens;
  const auto* list = root.find("added_tokens");
  if (list == nullptr) return tokens;
  const auto& items = json_array(root.file(), *list, "added_tokens");
  tokens.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    const JsonObject item(root.file(), items[i], json_path("added_tokens", i));
    item.unsigned_integer("id", max_token_id);  // checked; the id itself is assigned as the reference does
    AddedToken token;
    token.content = std::string(item.string("content"));
    token.single_word = item.boolean("single_word", false);
    token.lstrip = item.boolean("lstrip", false);
    token.rstrip = item.boolean("rstrip", false);
    token.normalized = item.boolean("normalized", true);
    token.special = item.boolean("special", false);
    tokens.push_back(std::move(token));
  }
  return tokens;
}

std::unique_ptr<BpeModel> read_model(const JsonObject& root, StreamedModel& streamed, bool byte_level_pieces) {
  const JsonObject model = root.child("model");
  if (const auto type = model.optional_string("type"); type && *type != "BPE") {
    model.fail_at("type", "unsupported model type \"" + std::string(*type) + "\" (supported: BPE)");
  }
  // What was not streamed was missing or not an object / array: these fail naming it.
  if (!streamed.vocab_streamed) model.child("vocab").fail("not read (a second model object?)");
  if (!streamed.merges_streamed) model.array("merges");
  streamed.builder.set_options(bpe_options(model));
  add_merges(model, streamed);
  return streamed.builder.build(byte_level_pieces);
}

HfParts read_parts(const JsonObject& root, StreamedModel& streamed) {
  if (const auto version = root.optional_string("version"); version && *version != "1.0") {
    root.fail_at("version", "unknown tokenizer.json version \"" + std::string(*version) + "\" (expected 1.0)");
  }
  HfParts parts;
  const bool has_pre_tokenizer = root.find("pre_tokenizer") != nullptr;
  parts.model = read_model(root, streamed, has_pre_tokenizer && ends_in_byte_level(root.child("pre_tokenizer")));
  if (root.find("normalizer") != nullptr) parts.normalizer = load_normalizer(root.child("normalizer"));
  if (has_pre_tokenizer)
    parts.pre_tokenizer = load_pre_tokenizer(root.child("pre_tokenizer"), parts.model->raw_bytes());
  if (root.find("post_processor") != nullptr) parts.post_processor = load_post_processor(root.child("post_processor"));
  if (root.find("decoder") != nullptr) parts.decoder = load_decoder(root.child("decoder"));
  parts.added = AddedVocabulary(read_added_tokens(root), *parts.model, parts.normalizer.get());
  return parts;
}

TokenizerConfig config_beside(const std::filesystem::path& file) {
  const auto directory = file.parent_path();
  std::error_code ec;
  if (std::filesystem::is_regular_file(directory / "tokenizer_config.json", ec)) {
    return read_tokenizer_config(directory / "tokenizer_config.json");
  }
  TokenizerConfig config;
  if (std::filesystem::is_regular_file(directory / "chat_template.jinja", ec)) {
    config.chat_template = read_text_file(directory / "chat_template.jinja");
  }
  return config;
}

}  // namespace

}  // namespace tokenizer_detail::hf

std::shared_ptr<const Tokenizer> load_tokenizer_json(const std::filesystem::path& file, std::string id) {
  namespace hf = tokenizer_detail::hf;
  hf::HfParts parts;
  {
    hf::StreamedModel streamed;
    const hf::JsonFile json(file, streamed);
    parts = hf::read_parts(hf::JsonObject(json, json.root(), ""), streamed);
  }  // the document is freed before the tokenizer is built
  return std::make_shared<hf::HfTokenizer>(std::move(id), file, hf::config_beside(file), std::move(parts));
}

}  // namespace tinker
