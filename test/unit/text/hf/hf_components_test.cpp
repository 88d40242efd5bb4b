// Hand-made tokenizer.json files for the components and options the five real files do not use,
// each compared with the reference implementation at test time.
#include "unit/text/hf/hf_test_support.hpp"

#include <gtest/gtest.h>

namespace {

using tinker::test::hf::bpe_tokenizer_json;
using tinker::test::hf::expect_matches_reference;
using tinker::test::hf::TempTokenizerDir;

// Every printable ASCII character, as a token and (with `prefix`) as a continuing token.
// An added token as tokenizer.json writes it.
boost::json::object added_token(int id, const char* content, bool single_word, bool lstrip, bool rstrip,
                                bool normalized, bool special) {
  return boost::json::object{{"id", id},          {"content", content}, {"single_word", single_word},
                             {"lstrip", lstrip},  {"rstrip", rstrip},   {"normalized", normalized},
                             {"special", special}};
}

// A special added token with no matching options (the usual [CLS], <s>, ...).
boost::json::object special_token(int id, const char* content) {
  return added_token(id, content, false, false, false, false, true);
}

std::vector<std::string> ascii_vocab(const std::string& prefix, const std::string& suffix) {
  std::vector<std::string> vocab{"[UNK]", "[CLS]", "[SEP]"};
  for (char c = '!'; c <= '~'; ++c) {
    vocab.emplace_back(1, c);
    if (!prefix.empty()) vocab.push_back(prefix + std::string(1, c));
    if (!suffix.empty()) vocab.push_back(std::string(1, c) + suffix);
  }
  return vocab;
}

const std::vector<std::string> english_cases{"Hello world",
                                             "hello, world!",
                                             "  Leading and trailing  ",
                                             "HELLO hello HeLLo",
                                             "don't stop",
                                             "",
                                             "caf\xC3\xA9 na\xC3\xAFve \xE6\x97\xA5\xE6\x9C\xAC",
                                             "a1b2 c3d4 12345",
                                             "tab\tand\nnewline",
                                             "hello?"};

void check(const boost::json::object& json, const std::vector<std::string>& cases) {
  TempTokenizerDir dir;
  const auto file = dir.write("tokenizer.json", boost::json::serialize(json));
  const auto tokenizer = tinker::load_tokenizer_json(file, "hand-made");
  EXPECT_GT(tokenizer->encode(cases.front()).size(), 1U);  // the case that matches is not a trivial one
  expect_matches_reference(*tokenizer, file, cases);
}

// WordPiece-style BPE: continuing_subword_prefix "##", an unknown token (fused), Lowercase + Strip
// normalizers, Whitespace pre-tokenizer, RobertaProcessing and the WordPiece decoder with cleanup.
TEST(HfComponents, SubwordPrefixUnknownTokensWordPieceDecoderAndRoberta) {
  auto vocab = ascii_vocab("##", "");
  for (const char* token : {"he", "hel", "hell", "hello", "##ll", "##llo", "wo", "wor", "world", "##ld"}) {
    vocab.emplace_back(token);
  }
  auto json = bpe_tokenizer_json(vocab,
                                 {{"h", "##e"},
                                  {"he", "##l"},
                                  {"##l", "##l"},
                                  {"##ll", "##o"},
                                  {"hel", "##l"},
                                  {"hell", "##o"},
                                  {"w", "##o"},
                                  {"wo", "##r"},
                                  {"##l", "##d"},
                                  {"wor", "##ld"}},
                                 false);
  auto& model = json["model"].as_object();
  model["unk_token"] = "[UNK]";
  model["fuse_unk"] = true;
  model["continuing_subword_prefix"] = "##";
  json["normalizer"] = boost::json::object{
      {"type", "Sequence"},
      {"normalizers",
       boost::json::array{boost::json::object{{"type", "Lowercase"}},
                          boost::json::object{{"type", "Strip"}, {"strip_left", true}, {"strip_right", true}}}}};
  json["pre_tokenizer"] = boost::json::object{{"type", "Whitespace"}};
  json["post_processor"] = boost::json::object{{"type", "RobertaProcessing"},
                                               {"sep", boost::json::array{"[SEP]", 2}},
                                               {"cls", boost::json::array{"[CLS]", 1}},
                                               {"trim_offsets", true},
                                               {"add_prefix_space", false}};
  json["decoder"] = boost::json::object{{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", true}};
  json["added_tokens"] =
      boost::json::array{special_token(0, "[UNK]"), special_token(1, "[CLS]"), special_token(2, "[SEP]")};
  auto cases = english_cases;
  cases.emplace_back("[CLS] hello [SEP] world");
  check(json, cases);
}

// end_of_word_suffix with the BPE decoder, ignore_merges, Punctuation and Digits pre-tokenizers,
// NFKC, BertProcessing, merges as ["a", "b"] pairs.
TEST(HfComponents, EndOfWordSuffixIgnoreMergesPunctuationDigitsAndBert) {
  auto vocab = ascii_vocab("", "</w>");
  for (const char* token : {"he", "hel", "hello</w>", "lo</w>", "wor", "world</w>", "ld</w>", "12", "don"}) {
    vocab.emplace_back(token);
  }
  vocab.emplace_back("worl");  // reachable whole only: ignore_merges emits it without merging
  vocab.emplace_back("wo");
  vocab.emplace_back("do");
  auto json = bpe_tokenizer_json(vocab,
                                 {{"h", "e"},
                                  {"he", "l"},
                                  {"l", "o</w>"},
                                  {"hel", "lo</w>"},
                                  {"w", "o"},
                                  {"wo", "r"},
                                  {"l", "d</w>"},
                                  {"wor", "ld</w>"},
                                  {"1", "2"},
                                  {"d", "o"},
                                  {"do", "n"}},
                                 true);
  auto& model = json["model"].as_object();
  model["unk_token"] = "[UNK]";
  model["end_of_word_suffix"] = "</w>";
  model["ignore_merges"] = true;
  json["normalizer"] = boost::json::object{{"type", "NFKC"}};
  json["pre_tokenizer"] = boost::json::object{
      {"type", "Sequence"},
      {"pretokenizers", boost::json::array{boost::json::object{{"type", "WhitespaceSplit"}},
                                           boost::json::object{{"type", "Punctuation"}, {"behavior", "Isolated"}},
                                           boost::json::object{{"type", "Digits"}, {"individual_digits", false}}}}};
  json["post_processor"] = boost::json::object{
      {"type", "BertProcessing"}, {"sep", boost::json::array{"[SEP]", 2}}, {"cls", boost::json::array{"[CLS]", 1}}};
  json["decoder"] = boost::json::object{{"type", "BPEDecoder"}, {"suffix", "</w>"}};
  auto cases = english_cases;
  cases.emplace_back("worl world hello");
  cases.emplace_back("\xEF\xBC\xA8\xEF\xBD\x85llo \xE2\x91\xA0\xE2\x91\xA1");  // full-width letters, circled digits
  check(json, cases);
}

// Metaspace (prepend_scheme first) with byte_fallback, a Prepend normalizer, TemplateProcessing
// with BOS and EOS, and the decoders of SentencePiece-style files: Replace, ByteFallback, Fuse, Strip.
TEST(HfComponents, MetaspaceByteFallbackTemplateAndStripDecoder) {
  std::vector<std::string> vocab{"<unk>", "<s>", "</s>"};
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    vocab.emplace_back(name);
  }
  for (char c = '!'; c <= '~'; ++c) vocab.emplace_back(1, c);
  vocab.emplace_back("\xE2\x96\x81");
  vocab.emplace_back("\xE2\x96\x81h");
  vocab.emplace_back("\xE2\x96\x81he");
  vocab.emplace_back("ll");
  vocab.emplace_back("\xC3\xA9");
  auto json = bpe_tokenizer_json(vocab, {{"\xE2\x96\x81", "h"}, {"\xE2\x96\x81h", "e"}, {"l", "l"}}, true);
  auto& model = json["model"].as_object();
  model["unk_token"] = "<unk>";
  model["byte_fallback"] = true;
  model["fuse_unk"] = true;
  json["normalizer"] = boost::json::object{{"type", "Prepend"}, {"prepend", "\xE2\x96\x81"}};
  json["pre_tokenizer"] = boost::json::object{
      {"type", "Metaspace"}, {"replacement", "\xE2\x96\x81"}, {"prepend_scheme", "first"}, {"split", true}};
  json["post_processor"] = boost::json::object{
      {"type", "TemplateProcessing"},
      {"single",
       boost::json::array{boost::json::object{{"SpecialToken", boost::json::object{{"id", "<s>"}, {"type_id", 0}}}},
                          boost::json::object{{"Sequence", boost::json::object{{"id", "A"}, {"type_id", 0}}}},
                          boost::json::object{{"SpecialToken", boost::json::object{{"id", "</s>"}, {"type_id", 0}}}}}},
      {"pair", boost::json::array{}},
      {"special_tokens", boost::json::object{{"<s>", boost::json::object{{"id", "<s>"},
                                                                         {"ids", boost::json::array{1}},
                                                                         {"tokens", boost::json::array{"<s>"}}}},
                                             {"</s>", boost::json::object{{"id", "</s>"},
                                                                          {"ids", boost::json::array{2}},
                                                                          {"tokens", boost::json::array{"</s>"}}}}}}};
  json["decoder"] = boost::json::object{
      {"type", "Sequence"},
      {"decoders",
       boost::json::array{
           boost::json::object{
               {"type", "Replace"}, {"pattern", boost::json::object{{"String", "\xE2\x96\x81"}}}, {"content", " "}},
           boost::json::object{{"type", "ByteFallback"}}, boost::json::object{{"type", "Fuse"}},
           boost::json::object{{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}};
  json["added_tokens"] = boost::json::array{special_token(1, "<s>"), special_token(2, "</s>")};
  auto cases = english_cases;
  cases.emplace_back("hello</s>hello <s> hello");
  cases.emplace_back("\xF0\x9F\x98\x80 emoji and caf\xC3\xA9");
  check(json, cases);
}

// Added tokens with single_word, lstrip, rstrip, normalized (matched after a Lowercase normalizer)
// and not special, next to each other and overlapping; the Metaspace decoder.
TEST(HfComponents, AddedTokenOptions) {
  auto vocab = ascii_vocab("", "");
  vocab.emplace_back("\xE2\x96\x81");
  auto json = bpe_tokenizer_json(vocab, {}, false);
  json["normalizer"] = boost::json::object{{"type", "Lowercase"}};
  json["pre_tokenizer"] = boost::json::object{
      {"type", "Metaspace"}, {"replacement", "\xE2\x96\x81"}, {"prepend_scheme", "always"}, {"split", false}};
  json["decoder"] = boost::json::object{
      {"type", "Metaspace"}, {"replacement", "\xE2\x96\x81"}, {"prepend_scheme", "always"}, {"split", false}};
  const int base = static_cast<int>(vocab.size());
  json["added_tokens"] = boost::json::array{added_token(base, "<mask>", false, true, true, false, true),
                                            added_token(base + 1, "cat", true, false, false, false, false),
                                            added_token(base + 2, "Dog", false, false, false, true, false),
                                            added_token(base + 3, "<sep>", false, false, true, false, true),
                                            added_token(base + 4, "<sepx>", false, true, false, false, true)};
  check(json, {"a <mask> b", "a    <mask>    b", "cat concat cat_ cats (cat) cat", "DOG dog Dog hotdog",
               "x<sep>   y <sepx>z", "<sep><sep>  <mask><mask>", "  <mask>", "cat", ""});
}

}  // namespace
