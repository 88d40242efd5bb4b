// See components.hpp. Field names and defaults are those of the reference's serialized form.
#include "text/hf/components.hpp"

#include <tinker/error.hpp>

#include <utility>
#include <vector>

namespace tinker::tokenizer_detail::hf {
namespace {

std::string_view type_of(const JsonObject& spec) {
  return spec.string("type");
}

[[noreturn]] void unsupported(const JsonObject& spec, std::string_view what, std::string_view supported) {
  spec.fail_at("type", "unsupported " + std::string(what) + " type \"" + std::string(type_of(spec)) +
                           "\" (supported: " + std::string(supported) + ")");
}

// A factory's own error (a regex that does not compile) gets the file and JSON path in front.
template <class Make>
auto with_path(const JsonObject& spec, std::string_view key, Make&& make) {
  try {
    return make();
  } catch (const error& e) {
    spec.fail_at(key, e.what());
  }
}

class Pattern {
 public:
  std::string text;
  bool is_regex = false;
};

// {"String": "..."} or {"Regex": "..."}.
Pattern pattern_of(const JsonObject& spec, std::string_view key = "pattern") {
  const JsonObject pattern = spec.child(key);
  if (const auto text = pattern.optional_string("String")) return Pattern{std::string(*text), false};
  if (const auto text = pattern.optional_string("Regex")) return Pattern{std::string(*text), true};
  pattern.fail("expected {\"String\": ...} or {\"Regex\": ...}");
}

SplitBehavior behavior_of(const JsonObject& spec, std::string_view key, SplitBehavior fallback) {
  const auto name = spec.optional_string(key);
  if (!name) return fallback;
  if (*name == "Removed") return SplitBehavior::removed;
  if (*name == "Isolated") return SplitBehavior::isolated;
  if (*name == "MergedWithPrevious") return SplitBehavior::merged_with_previous;
  if (*name == "MergedWithNext") return SplitBehavior::merged_with_next;
  if (*name == "Contiguous") return SplitBehavior::contiguous;
  spec.fail_at(key, "unknown behavior \"" + std::string(*name) +
                        "\" (expected Removed, Isolated, MergedWithPrevious, MergedWithNext or Contiguous)");
}

// Metaspace's prepend_scheme, with the older add_prefix_space: false meaning "never".
PrependScheme prepend_scheme_of(const JsonObject& spec) {
  PrependScheme scheme = PrependScheme::always;
  if (const auto name = spec.optional_string("prepend_scheme")) {
    if (*name == "always") {
      scheme = PrependScheme::always;
    } else if (*name == "first") {
      scheme = PrependScheme::first;
    } else if (*name == "never") {
      scheme = PrependScheme::never;
    } else {
      spec.fail_at("prepend_scheme",
                   "unknown prepend_scheme \"" + std::string(*name) + "\" (expected always, first or never)");
    }
  }
  if (!spec.boolean("add_prefix_space", true)) {
    if (scheme != PrependScheme::never && spec.find("prepend_scheme") != nullptr) {
      spec.fail_at("add_prefix_space", "add_prefix_space false contradicts the prepend_scheme");
    }
    scheme = PrependScheme::never;
  }
  return scheme;
}

// A single character (Metaspace's replacement, Strip's content).
std::string character_of(const JsonObject& spec, std::string_view key) {
  const std::string_view text = spec.string(key);
  const auto lead = text.empty() ? 0 : static_cast<unsigned char>(text[0]);
  const std::size_t length = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
  if (text.empty() || text.size() != length) spec.fail_at(key, "expected a single character");
  return std::string(text);
}

template <class Component, class Load>
std::vector<std::unique_ptr<Component>> load_steps(const JsonObject& spec, std::string_view key, Load&& load) {
  std::vector<std::unique_ptr<Component>> steps;
  const auto& items = spec.array(key);
  const std::string path = spec.path_of(key);
  for (std::size_t i = 0; i < items.size(); ++i) {
    auto step = load(JsonObject(spec.file(), items[i], json_path(path, i)), i + 1 == items.size());
    if (step) steps.push_back(std::move(step));
  }
  return steps;
}

}  // namespace

// ---- Normalizers -----------------------------------------------------------------------------

std::unique_ptr<Normalizer> load_normalizer(const JsonObject& spec) {
  const std::string_view type = type_of(spec);
  if (type == "NFC") return make_unicode_normalizer(UnicodeForm::nfc);
  if (type == "NFD") return make_unicode_normalizer(UnicodeForm::nfd);
  if (type == "NFKC") return make_unicode_normalizer(UnicodeForm::nfkc);
  if (type == "NFKD") return make_unicode_normalizer(UnicodeForm::nfkd);
  if (type == "Lowercase") return make_lowercase_normalizer();
  if (type == "Prepend") return make_prepend_normalizer(std::string(spec.string("prepend")));
  if (type == "Strip")
    return make_strip_normalizer(spec.boolean("strip_left", true), spec.boolean("strip_right", true));
  if (type == "Replace") {
    Pattern pattern = pattern_of(spec);
    std::string content(spec.string("content"));
    return with_path(spec, "pattern", [&] {
      return make_replace_normalizer(std::move(pattern.text), pattern.is_regex, std::move(content));
    });
  }
  if (type == "Sequence") {
    auto steps =
        load_steps<Normalizer>(spec, "normalizers", [](const JsonObject& step, bool) { return load_normalizer(step); });
    if (steps.empty()) return nullptr;
    if (steps.size() == 1) return std::move(steps.front());
    return make_sequence_normalizer(std::move(steps));
  }
  unsupported(spec, "normalizer", "NFC, NFD, NFKC, NFKD, Lowercase, Prepend, Replace, Strip, Sequence");
}

// ---- Pre-tokenizers --------------------------------------------------------------------------

bool ends_in_byte_level(const JsonObject& spec) {
  const std::string_view type = type_of(spec);
  if (type == "ByteLevel") return true;
  if (type != "Sequence") return false;
  const auto& steps = spec.array("pretokenizers");
  if (steps.empty()) return false;
  return ends_in_byte_level(
      JsonObject(spec.file(), steps.back(), json_path(spec.path_of("pretokenizers"), steps.size() - 1)));
}

std::unique_ptr<PreTokenizer> load_pre_tokenizer(const JsonObject& spec, bool raw_bytes) {
  const std::string_view type = type_of(spec);
  if (type == "Split") {
    Pattern pattern = pattern_of(spec);
    const SplitBehavior behavior = behavior_of(spec, "behavior", SplitBehavior::removed);
    if (spec.find("behavior") == nullptr) spec.fail_at("behavior", "missing (required)");
    const bool invert = spec.boolean("invert", false);
    return with_path(spec, "pattern", [&] {
      return make_split_pre_tokenizer(std::move(pattern.text), pattern.is_regex, behavior, invert);
    });
  }
  if (type == "ByteLevel") {
    return make_byte_level_pre_tokenizer(spec.boolean("add_prefix_space", true), spec.boolean("use_regex", true),
                                         !raw_bytes);
  }
  if (type == "Metaspace") {
    return make_metaspace_pre_tokenizer(character_of(spec, "replacement"), prepend_scheme_of(spec),
                                        spec.boolean("split", true));
  }
  if (type == "Digits") return make_digits_pre_tokenizer(spec.boolean("individual_digits", false));
  if (type == "Punctuation")
    return make_punctuation_pre_tokenizer(behavior_of(spec, "behavior", SplitBehavior::isolated));
  if (type == "Whitespace") return make_whitespace_pre_tokenizer();
  if (type == "WhitespaceSplit") return make_whitespace_split_pre_tokenizer();
  if (type == "Sequence") {
    auto steps = load_steps<PreTokenizer>(spec, "pretokenizers", [raw_bytes](const JsonObject& step, bool last) {
      return load_pre_tokenizer(step, raw_bytes && last);
    });
    if (steps.size() == 1) return std::move(steps.front());
    return make_sequence_pre_tokenizer(std::move(steps));
  }
  unsupported(spec, "pre-tokenizer",
              "Split, ByteLevel, Metaspace, Digits, Punctuation, Whitespace, WhitespaceSplit, Sequence");
}

// ---- Post-processors -------------------------------------------------------------------------

namespace {

// A template piece given as a string, as the reference parses it: "$A", "$B", "$", "$<type id>"
// (sequence A) with an optional ":<type id>", anything else a special token's name.
bool string_piece_is_sequence(const JsonObject& spec, std::string_view path, std::string_view piece,
                              std::string& special) {
  const std::string_view name = piece.substr(0, piece.find(':'));
  if (!name.starts_with('$')) {
    special = std::string(name);
    return false;
  }
  const std::string_view rest = name.substr(1);
  if (rest == "B" || rest == "b") spec.file().fail(path, "the single template uses sequence B");
  if (rest.empty() || rest == "A" || rest == "a") return true;
  if (rest.find_first_not_of("0123456789") != std::string_view::npos) {
    spec.file().fail(path, "cannot read template piece \"" + std::string(piece) + "\"");
  }
  return true;
}

std::vector<TemplateItem> single_template(const JsonObject& spec) {
  const JsonObject specials = spec.child("special_tokens");
  const auto ids_of = [&](const std::string& name, std::string_view path) {
    const auto* entry = specials.find(name);
    if (entry == nullptr) spec.file().fail(path, "special token \"" + name + "\" is not in special_tokens");
    const JsonObject token(spec.file(), *entry, specials.path_of(name));
    std::vector<TokenId> ids;
    const auto& list = token.array("ids");
    for (std::size_t i = 0; i < list.size(); ++i) {
      ids.push_back(
          static_cast<TokenId>(json_unsigned(spec.file(), list[i], json_path(token.path_of("ids"), i), INT32_MAX)));
    }
    return ids;
  };
  std::vector<TemplateItem> items;
  const auto add_piece = [&](const boost::json::value& piece, const std::string& path) {
    std::string special;
    if (piece.is_string()) {
      if (string_piece_is_sequence(spec, path, json_string(spec.file(), piece, path), special)) {
        items.emplace_back(true, std::vector<TokenId>{});
      } else {
        items.emplace_back(false, ids_of(special, path));
      }
      return;
    }
    const JsonObject object(spec.file(), piece, path);
    if (const auto* sequence = object.find("Sequence")) {
      const JsonObject inner(spec.file(), *sequence, object.path_of("Sequence"));
      if (inner.string("id") != "A") inner.fail_at("id", "the single template uses sequence B");
      items.emplace_back(true, std::vector<TokenId>{});
    } else if (const auto* token = object.find("SpecialToken")) {
      const JsonObject inner(spec.file(), *token, object.path_of("SpecialToken"));
      items.emplace_back(false, ids_of(std::string(inner.string("id")), inner.path_of("id")));
    } else {
      object.fail("expected {\"Sequence\": ...} or {\"SpecialToken\": ...}");
    }
  };
  const auto& single = spec.require("single");
  if (single.is_string()) {
    // The reference also takes a template as one string of space-separated pieces.
    const std::string_view text = json_string(spec.file(), single, spec.path_of("single"));
    for (std::size_t start = 0; start <= text.size();) {
      const std::size_t end = std::min(text.find(' ', start), text.size());
      add_piece(boost::json::value(boost::json::string_view(text.data() + start, end - start)), spec.path_of("single"));
      start = end + 1;
    }
  } else {
    const auto& pieces = spec.array("single");
    for (std::size_t i = 0; i < pieces.size(); ++i) add_piece(pieces[i], json_path(spec.path_of("single"), i));
  }
  return items;
}

// RobertaProcessing / BertProcessing: "cls" and "sep" as ["<token>", id].
TokenId pair_id(const JsonObject& spec, std::string_view key) {
  const auto& pair = spec.array(key);
  if (pair.size() != 2 || !pair[0].is_string()) spec.fail_at(key, "expected [\"<token>\", <id>]");
  return static_cast<TokenId>(json_unsigned(spec.file(), pair[1], json_path(spec.path_of(key), 1), INT32_MAX));
}

}  // namespace

std::unique_ptr<PostProcessor> load_post_processor(const JsonObject& spec) {
  const std::string_view type = type_of(spec);
  if (type == "TemplateProcessing") return make_template_processor(single_template(spec));
  if (type == "ByteLevel") return make_no_op_processor();
  if (type == "RobertaProcessing" || type == "BertProcessing") {
    std::vector<TemplateItem> items;
    items.emplace_back(false, std::vector<TokenId>{pair_id(spec, "cls")});
    items.emplace_back(true, std::vector<TokenId>{});
    items.emplace_back(false, std::vector<TokenId>{pair_id(spec, "sep")});
    return make_template_processor(std::move(items));
  }
  if (type == "Sequence") {
    return make_sequence_processor(load_steps<PostProcessor>(
        spec, "processors", [](const JsonObject& step, bool) { return load_post_processor(step); }));
  }
  unsupported(spec, "post-processor", "TemplateProcessing, ByteLevel, RobertaProcessing, BertProcessing, Sequence");
}

// ---- Decoders --------------------------------------------------------------------------------

std::unique_ptr<Decoder> load_decoder(const JsonObject& spec) {
  const std::string_view type = type_of(spec);
  if (type == "ByteLevel") return make_byte_level_decoder();
  if (type == "Metaspace") {
    const PrependScheme scheme = prepend_scheme_of(spec);
    return make_metaspace_decoder(character_of(spec, "replacement"),
                                  scheme == PrependScheme::never   ? MetaspacePrependScheme::never
                                  : scheme == PrependScheme::first ? MetaspacePrependScheme::first
                                                                   : MetaspacePrependScheme::always);
  }
  if (type == "ByteFallback") return make_byte_fallback_decoder();
  if (type == "Fuse") return make_fuse_decoder();
  if (type == "Strip") {
    return make_strip_decoder(character_of(spec, "content"), spec.unsigned_integer("start", UINT32_MAX),
                              spec.unsigned_integer("stop", UINT32_MAX));
  }
  if (type == "Replace") {
    Pattern pattern = pattern_of(spec);
    std::string content(spec.string("content"));
    return with_path(spec, "pattern", [&] {
      return make_replace_decoder(std::move(pattern.text), pattern.is_regex, std::move(content));
    });
  }
  if (type == "WordPiece") {
    return make_word_piece_decoder(std::string(spec.optional_string("prefix").value_or("##")),
                                   spec.boolean("cleanup", true));
  }
  if (type == "BPEDecoder") return make_bpe_decoder(std::string(spec.optional_string("suffix").value_or("</w>")));
  if (type == "Sequence") {
    return make_sequence_decoder(
        load_steps<Decoder>(spec, "decoders", [](const JsonObject& step, bool) { return load_decoder(step); }));
  }
  unsupported(spec, "decoder",
              "ByteLevel, Metaspace, ByteFallback, Fuse, Strip, Replace, WordPiece, BPEDecoder, Sequence");
}

}  // namespace tinker::tokenizer_detail::hf
