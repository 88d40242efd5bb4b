// Bad tokenizer.json files: each fails with tinker::error (invalid_configuration) naming the file
// and the JSON path or byte position of the problem; none crashes.
#include "unit/text/hf/hf_test_support.hpp"

#include <tinker/error.hpp>

#include <gtest/gtest.h>

namespace {

using tinker::test::hf::bpe_tokenizer_json;
using tinker::test::hf::load_error;
using tinker::test::hf::TempTokenizerDir;

boost::json::object small_tokenizer() {
  return bpe_tokenizer_json({"a", "b", "ab", "c"}, {{"a", "b"}}, false);
}

void expect_contains(const std::string& message, const std::string& part) {
  EXPECT_NE(message.find(part), std::string::npos) << "\"" << part << "\" not in: " << message;
}

TEST(HfLoaderErrors, TruncatedFileNamesTheEnd) {
  const std::string text = boost::json::serialize(small_tokenizer());
  const auto message = load_error(text.substr(0, text.size() / 2));
  expect_contains(message, "truncated");
  expect_contains(message, "byte offset " + std::to_string(text.size() / 2));
}

TEST(HfLoaderErrors, MalformedJsonNamesLineAndColumn) {
  const auto message = load_error("{\n  \"model\": [1,,2]\n}");
  expect_contains(message, "malformed JSON at line 2, column 15");
}

TEST(HfLoaderErrors, EmptyAndMissingFiles) {
  expect_contains(load_error(""), "empty");
  try {
    tinker::load_tokenizer_json("/nonexistent/tokenizer.json", "x");
    FAIL();
  } catch (const tinker::error& e) {
    expect_contains(e.what(), "/nonexistent/tokenizer.json: no such file");
  }
}

TEST(HfLoaderErrors, WrongTypesNameTheirJsonPath) {
  auto json = small_tokenizer();
  json["model"].as_object()["merges"].as_array()[0] = 5;
  expect_contains(load_error(boost::json::serialize(json)), "model.merges[0]: expected \"left right\"");

  json = small_tokenizer();
  json["model"].as_object()["vocab"].as_object()["b"] = "one";
  expect_contains(load_error(boost::json::serialize(json)), "model.vocab.b: expected a non-negative integer");

  json = small_tokenizer();
  json["model"].as_object()["vocab"].as_object()["a b"] = -1;
  expect_contains(load_error(boost::json::serialize(json)), "model.vocab[\"a b\"]: expected a non-negative integer");

  json = small_tokenizer();
  json["pre_tokenizer"] = boost::json::object{
      {"type", "Sequence"},
      {"pretokenizers",
       boost::json::array{boost::json::object{{"type", "Split"}, {"pattern", 7}, {"behavior", "Isolated"}}}}};
  expect_contains(load_error(boost::json::serialize(json)),
                  "pre_tokenizer.pretokenizers[0].pattern: expected an object");

  json = small_tokenizer();
  json["added_tokens"] = boost::json::array{boost::json::object{{"id", 9}, {"content", 3}}};
  expect_contains(load_error(boost::json::serialize(json)),
                  "added_tokens[0].content: expected a string, found a number");

  json = small_tokenizer();
  json["model"].as_object().erase("vocab");
  expect_contains(load_error(boost::json::serialize(json)), "model.vocab: missing");
}

TEST(HfLoaderErrors, UnsupportedComponentsNameTheirType) {
  auto json = small_tokenizer();
  json["normalizer"] = boost::json::object{{"type", "BertNormalizer"}};
  expect_contains(load_error(boost::json::serialize(json)),
                  "normalizer.type: unsupported normalizer type \"BertNormalizer\"");

  json = small_tokenizer();
  json["decoder"] =
      boost::json::object{{"type", "Sequence"}, {"decoders", boost::json::array{boost::json::object{{"type", "CTC"}}}}};
  expect_contains(load_error(boost::json::serialize(json)),
                  "decoder.decoders[0].type: unsupported decoder type \"CTC\"");

  json = small_tokenizer();
  json["model"].as_object()["type"] = "WordPiece";
  expect_contains(load_error(boost::json::serialize(json)), "model.type: unsupported model type \"WordPiece\"");

  json = small_tokenizer();
  json["model"].as_object()["dropout"] = 0.1;
  expect_contains(load_error(boost::json::serialize(json)), "model.dropout: BPE dropout is not supported");

  json = small_tokenizer();
  json["pre_tokenizer"] = boost::json::object{
      {"type", "Split"}, {"pattern", boost::json::object{{"Regex", "(unclosed"}}}, {"behavior", "Isolated"}};
  expect_contains(load_error(boost::json::serialize(json)), "pre_tokenizer.pattern:");
}

TEST(HfLoaderErrors, MergesNamingTokensOutsideTheVocabulary) {
  auto json = bpe_tokenizer_json({"a", "b", "ab"}, {{"a", "b"}, {"a", "z"}}, false);
  expect_contains(load_error(boost::json::serialize(json)),
                  "model.merges[1]: the merge names \"z\", which is not in model.vocab");
  json = bpe_tokenizer_json({"a", "b"}, {{"a", "b"}}, true);
  expect_contains(load_error(boost::json::serialize(json)), "model.merges[0]: the merge names \"ab\"");
  json = small_tokenizer();
  json["model"].as_object()["merges"] = boost::json::array{"a b c"};
  expect_contains(load_error(boost::json::serialize(json)),
                  "model.merges[0]: expected two tokens separated by one space");
}

// Every prefix of a valid file, and the file with single bytes changed, fails cleanly or loads;
// nothing crashes (the loader takes untrusted files).
TEST(HfLoaderErrors, CutAndDamagedFilesNeverCrash) {
  auto json = small_tokenizer();
  json["added_tokens"] = boost::json::array{boost::json::object{{"id", 4}, {"content", "<s>"}, {"special", true}}};
  json["decoder"] = boost::json::object{{"type", "ByteLevel"}};
  const std::string text = boost::json::serialize(json);
  TempTokenizerDir dir;
  int loaded = 0;
  for (std::size_t cut = 0; cut <= text.size(); ++cut) {
    for (const char damage : {'\0', '"', '{', '9', '\xff'}) {
      std::string bytes = text.substr(0, cut);
      if (damage != '\0' && cut < text.size()) bytes += damage + text.substr(cut + 1);
      const auto file = dir.write("tokenizer.json", bytes);
      try {
        const auto tokenizer = tinker::load_tokenizer_json(file, "fuzz");
        tokenizer->decode(tokenizer->encode("abc <s> ab"));
        ++loaded;
      } catch (const tinker::error& e) {
        EXPECT_EQ(e.code(), tinker::errc::invalid_configuration) << e.what();
      }
    }
  }
  EXPECT_GT(loaded, 0);
}

}  // namespace
