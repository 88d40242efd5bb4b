// The tiktoken backend against npm `tiktoken` (OpenAI's Rust core as WebAssembly), run at test time
// by test/tokenizer_reference/tiktoken_reference.js, and its handling of malformed files and of
// Kimi's special tokens.
#include <tinker/error.hpp>
#include <tinker/tokenizer.hpp>

#include "support/kimi_tokenizer.hpp"
#include "support/tokenizer_reference.hpp"
#include "support/tokenizer_test_support.hpp"

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace tinker {
namespace {

using test::TempDir;
using test::write_file;

std::vector<std::string> all_cases() {
  auto cases = test::read_corpus(test::corpus_file("corpus.txt"));
  const auto multiline = test::read_escaped_corpus(test::corpus_file("corpus_multiline.txt"));
  cases.insert(cases.end(), multiline.begin(), multiline.end());
  return cases;
}

std::vector<std::vector<TokenId>> reference_ids(const std::vector<std::string>& args) {
  std::vector<std::vector<TokenId>> out;
  for (const std::string& line : test::run_node_script(test::reference_script("tiktoken_reference.js"), args)) {
    const boost::json::value parsed = boost::json::parse(line);
    if (!parsed.is_array()) throw std::runtime_error("tiktoken_reference.js printed " + line);
    std::vector<TokenId> ids;
    for (const auto& id : parsed.as_array()) {
      if (!id.is_number()) throw std::runtime_error("tiktoken_reference.js printed " + line);
      ids.push_back(static_cast<TokenId>(id.to_number<std::int64_t>()));
    }
    out.push_back(std::move(ids));
  }
  return out;
}

// Writes the encoding's ranks as a tiktoken file into `dir`.
std::filesystem::path write_ranks(const TempDir& dir, const std::string& encoding) {
  const auto file = dir.path() / (encoding + ".tiktoken");
  test::run_node_script(test::reference_script("tiktoken_reference.js"), {"ranks", encoding, file.string()});
  return file;
}

void expect_equal_to_reference(const std::string& encoding, TiktokenOptions options, int vocab_size) {
  TempDir dir;
  const auto tokenizer = load_tiktoken_tokenizer(write_ranks(dir, encoding), encoding, std::move(options));
  EXPECT_EQ(tokenizer->vocab_size(), vocab_size);
  const auto cases = all_cases();
  ASSERT_GT(cases.size(), 300U);
  const test::CasesFile cases_file(cases);
  const auto expected = reference_ids({"encode", encoding, cases_file.path().string()});
  ASSERT_EQ(expected.size(), cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto ids = tokenizer->encode(cases[i]);
    EXPECT_EQ(ids, expected[i]) << "case " << i << ": " << cases[i];
    EXPECT_EQ(tokenizer->decode(ids), cases[i]) << "case " << i;
  }
}

TEST(TiktokenTokenizer, Cl100kBaseEqualsTiktoken) {
  expect_equal_to_reference("cl100k_base", TiktokenOptions::cl100k_base(), 100277);
}

TEST(TiktokenTokenizer, O200kBaseEqualsTiktoken) {
  expect_equal_to_reference("o200k_base", TiktokenOptions::o200k_base(), 200019);
}

using test::kimi_original_pattern;  // Kimi K2's pattern as tokenization_kimi.py writes it

// Kimi's pattern uses class intersections; ours is a lookahead translation of it. tiktoken's
// engine (fancy-regex) runs the original: same ids on the corpus with cl100k's ranks.
TEST(TiktokenTokenizer, KimiPatternTranslationSplitsAsTheOriginal) {
  const std::string original = kimi_original_pattern();
  TempDir dir;
  write_file(dir.path() / "kimi_pattern.txt", original);
  TiktokenOptions options = TiktokenOptions::kimi_k2();
  options.num_reserved_special_tokens = 0;
  const auto tokenizer = load_tiktoken_tokenizer(write_ranks(dir, "cl100k_base"), "kimi-split", options);
  const auto cases = all_cases();
  const test::CasesFile cases_file(cases);
  const auto expected =
      reference_ids({"encode", "cl100k_base", cases_file.path().string(), (dir.path() / "kimi_pattern.txt").string()});
  ASSERT_EQ(expected.size(), cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(tokenizer->encode(cases[i]), expected[i]) << "case " << i << ": " << cases[i];
  }
}

// A small rank file: every byte, then a few merges.
std::string small_ranks() {
  static const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const auto base64 = [](std::string_view bytes) {
    std::string out;
    std::size_t i = 0;
    for (; i + 3 <= bytes.size(); i += 3) {
      const unsigned v = (static_cast<unsigned char>(bytes[i]) << 16) |
                         (static_cast<unsigned char>(bytes[i + 1]) << 8) | static_cast<unsigned char>(bytes[i + 2]);
      for (int s = 18; s >= 0; s -= 6) out += alphabet[(v >> s) & 63];
    }
    if (bytes.size() - i == 1) {
      const unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
      out += alphabet[(v >> 18) & 63];
      out += alphabet[(v >> 12) & 63];
      out += "==";
    } else if (bytes.size() - i == 2) {
      const unsigned v = (static_cast<unsigned char>(bytes[i]) << 16) | (static_cast<unsigned char>(bytes[i + 1]) << 8);
      out += alphabet[(v >> 18) & 63];
      out += alphabet[(v >> 12) & 63];
      out += alphabet[(v >> 6) & 63];
      out += '=';
    }
    return out;
  };
  std::string file;
  int rank = 0;
  for (int byte = 0; byte < 256; ++byte) {
    file += base64(std::string(1, static_cast<char>(byte))) + " " + std::to_string(rank++) + "\n";
  }
  for (const char* merge : {"he", "ll", "llo", "hello", " w", "or", " wor", "ld"}) {
    file += base64(merge) + " " + std::to_string(rank++) + "\n";
  }
  return file;  // ranks 0..263
}

TEST(TiktokenTokenizer, KimiSpecialTokensFromTheConfigAndReservedIds) {
  TempDir dir;
  write_file(dir.path() / "tiktoken.model", small_ranks());
  write_file(dir.path() / "tokenizer_config.json", R"({
    "added_tokens_decoder": {
      "264": {"content": "[BOS]", "special": true},
      "265": {"content": "[EOS]", "special": true},
      "267": {"content": "<|im_end|>", "special": true}
    },
    "bos_token": "[BOS]", "eos_token": {"content": "[EOS]"}, "pad_token": "<|im_end|>",
    "chat_template": "{{ messages }}"
  })");
  const auto tokenizer = load_tiktoken_tokenizer(dir.path() / "tiktoken.model", "kimi-test");
  EXPECT_EQ(tokenizer->vocab_size(), 264 + 256);
  EXPECT_EQ(tokenizer->bos_id(), 264);
  EXPECT_EQ(tokenizer->eos_id(), 265);
  EXPECT_EQ(tokenizer->pad_id(), 267);
  EXPECT_EQ(tokenizer->chat_template(), "{{ messages }}");
  EXPECT_EQ(tokenizer->id_to_token(266), "<|reserved_token_266|>");
  EXPECT_EQ(tokenizer->token_to_id("<|reserved_token_519|>"), 519);
  EXPECT_EQ(tokenizer->token_to_id("<|reserved_token_264|>"), std::nullopt);  // 264 has a name
  EXPECT_TRUE(tokenizer->is_special(266));
  EXPECT_FALSE(tokenizer->is_special(263));
  EXPECT_EQ(tokenizer->id_to_token(259), "hello");
  // Merges by rank; special text anywhere in the input is matched.
  const std::vector<TokenId> ids = tokenizer->encode("[BOS]hello world<|im_end|>");
  EXPECT_EQ(ids, (std::vector<TokenId>{264, 259, 262, 263, 267}));
  EXPECT_EQ(tokenizer->decode(ids), "[BOS]hello world<|im_end|>");
  EXPECT_EQ(tokenizer->decode(ids, true), "hello world");
  // A multi-byte character cut by the end of the ids decodes to U+FFFD.
  const auto euro = tokenizer->encode("\xE2\x82\xAC");
  ASSERT_EQ(euro.size(), 3U);
  EXPECT_EQ(tokenizer->decode(std::vector<TokenId>(euro.begin(), euro.begin() + 2)), "\xEF\xBF\xBD");
}

// Long pieces take a different merge (a priority queue) than short ones; both must pick the
// pairs tiktoken picks. Words of pseudo-random letters merge in many steps; lengths straddle the
// switch between the two merges.
std::vector<std::string> long_piece_cases() {
  std::uint32_t state = 12345;
  const auto next = [&](std::size_t bound) {
    state = state * 1664525U + 1013904223U;
    return static_cast<std::size_t>(state >> 8) % bound;
  };
  const auto word = [&](const std::vector<std::string>& alphabet, std::size_t bytes) {
    std::string out;
    while (out.size() < bytes) out += alphabet[next(alphabet.size())];
    return out;
  };
  const std::vector<std::string> latin = {"a", "b", "c", "d", "e", "i", "l", "n", "o", "r", "s", "t", "th", "qu"};
  const std::vector<std::string> thai = {"ก", "า", "ร", "น", "ม", "ส", "ี", "่", "เ", "ด"};
  const std::vector<std::string> punctuation = {"=", "-", "*", "/", "#", "~", "_", "+", "<", ">"};
  std::vector<std::string> cases;
  for (const std::size_t bytes : {2U, 17U, 63U, 64U, 65U, 66U, 130U, 1000U, 10000U}) {
    cases.push_back(word(latin, bytes));
    cases.push_back("Über" + word(latin, bytes));
    cases.push_back(word(thai, bytes));
    cases.push_back(word(punctuation, bytes));
    cases.push_back("x" + std::string(bytes, ' ') + "y\t" + std::string(bytes, '\t') + "\n");
  }
  cases.push_back(std::string(10000, 'a'));
  cases.push_back("a" + word(latin, 10000) + " " + word(thai, 3000) + " " + word(latin, 10000));
  return cases;
}

void expect_long_pieces_equal(const std::string& encoding, TiktokenOptions options) {
  TempDir dir;
  const auto tokenizer = load_tiktoken_tokenizer(write_ranks(dir, encoding), encoding, std::move(options));
  const auto cases = long_piece_cases();
  const test::CasesFile cases_file(cases);
  const auto expected = reference_ids({"encode", encoding, cases_file.path().string()});
  ASSERT_EQ(expected.size(), cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto ids = tokenizer->encode(cases[i]);
    EXPECT_EQ(ids, expected[i]) << "case " << i << " (" << cases[i].size() << " bytes): " << cases[i].substr(0, 80);
    EXPECT_EQ(tokenizer->decode(ids), cases[i]) << "case " << i;
  }
}

TEST(TiktokenTokenizer, LongPiecesEqualTiktoken) {
  expect_long_pieces_equal("o200k_base", TiktokenOptions::o200k_base());
  expect_long_pieces_equal("cl100k_base", TiktokenOptions::cl100k_base());
}

// Repeated pieces come from a per-thread cache of recent pieces: the answers must be the merge's,
// on every thread (encode_batch), and each tokenizer must get its own (two tokenizers alternating
// on one thread, whose pieces are the same text with different ids).
TEST(TiktokenTokenizer, RepeatedPiecesGiveTheSameIdsOnEveryThreadAndTokenizer) {
  TempDir dir;
  const auto o200k = load_tiktoken_tokenizer(write_ranks(dir, "o200k_base"), "o200k", TiktokenOptions::o200k_base());
  const auto cl100k =
      load_tiktoken_tokenizer(write_ranks(dir, "cl100k_base"), "cl100k", TiktokenOptions::cl100k_base());
  const auto cases = all_cases();
  const test::CasesFile cases_file(cases);
  const auto expected_o200k = reference_ids({"encode", "o200k_base", cases_file.path().string()});
  const auto expected_cl100k = reference_ids({"encode", "cl100k_base", cases_file.path().string()});
  ASSERT_EQ(expected_o200k.size(), cases.size());
  ASSERT_EQ(expected_cl100k.size(), cases.size());
  for (int round = 0; round < 2; ++round) {
    for (std::size_t i = 0; i < cases.size(); ++i) {
      EXPECT_EQ(o200k->encode(cases[i]), expected_o200k[i]) << "round " << round << ", case " << i;
      EXPECT_EQ(cl100k->encode(cases[i]), expected_cl100k[i]) << "round " << round << ", case " << i;
    }
  }
  std::vector<std::string> batch;
  for (int copy = 0; copy < 3; ++copy) batch.insert(batch.end(), cases.begin(), cases.end());
  const auto batch_ids = o200k->encode_batch(batch, false, 2);
  ASSERT_EQ(batch_ids.size(), batch.size());
  for (std::size_t i = 0; i < batch.size(); ++i) {
    EXPECT_EQ(batch_ids[i], expected_o200k[i % cases.size()]) << "batch item " << i;
  }
}

// A directory shaped as Kimi K2's (tiktoken.model and a tokenizer_config.json with the fields
// Kimi's has), found and loaded as load_tokenizer does for a model: specials from
// added_tokens_decoder right after the ranks, BOS/EOS/PAD/UNK by name, the chat template, and
// ordinary text split by Kimi's pattern exactly as tiktoken splits it with the original pattern.
TEST(TiktokenTokenizer, KimiShapedDirectoryLoadsThroughLoadTokenizer) {
  TempDir dir;
  const auto kimi_dir = dir.path() / "kimi";
  std::filesystem::create_directories(kimi_dir);
  std::filesystem::rename(write_ranks(dir, "cl100k_base"), kimi_dir / "tiktoken.model");
  const TokenId base = 100256;  // cl100k's ranks are 0..100255; Kimi's specials follow its ranks
  const std::vector<std::pair<std::string, TokenId>> specials = {{"[BOS]", base},
                                                                 {"[EOS]", base + 1},
                                                                 {"<|im_end|>", base + 2},
                                                                 {"<|im_user|>", base + 3},
                                                                 {"<|im_assistant|>", base + 4},
                                                                 {"<|im_system|>", base + 10},
                                                                 {"<|im_middle|>", base + 17},
                                                                 {"[UNK]", base + 254},
                                                                 {"[PAD]", base + 255}};
  std::string decoder;
  for (const auto& [content, id] : specials) {
    if (!decoder.empty()) decoder += ",\n";
    decoder += "\"" + std::to_string(id) + "\": {\"content\": \"" + content +
               "\", \"lstrip\": false, \"normalized\": false, \"rstrip\": false, \"single_word\": false, "
               "\"special\": true}";
  }
  const std::string chat_template =
      "{%- for message in messages -%}<|im_{{ message.role }}|>{{ message.content }}<|im_end|>{%- endfor -%}";
  write_file(kimi_dir / "tokenizer_config.json",
             "{\n\"added_tokens_decoder\": {\n" + decoder +
                 "\n},\n\"additional_special_tokens\": [\"<|im_end|>\", \"<|im_user|>\"],\n"
                 "\"auto_map\": {\"AutoTokenizer\": [\"tokenization_kimi.TikTokenTokenizer\", null]},\n"
                 "\"bos_token\": \"[BOS]\", \"clean_up_tokenization_spaces\": false, \"eos_token\": \"[EOS]\",\n"
                 "\"extra_special_tokens\": {}, \"model_max_length\": 1000000000000000019884624838656,\n"
                 "\"pad_token\": \"[PAD]\", \"tokenizer_class\": \"TikTokenTokenizer\", \"unk_token\": \"[UNK]\",\n"
                 "\"chat_template\": \"" +
                 chat_template + "\"\n}\n");

  const TokenizerFile file = find_tokenizer_file(TokenizerRef("moonshotai/Kimi-K2-Instruct"),
                                                 test::environment({{"TINKER_TOKENIZER_PATH", kimi_dir.string()}}));
  ASSERT_EQ(file.format, TokenizerFormat::tiktoken);
  const auto tokenizer = load_tokenizer(file, "moonshotai/Kimi-K2-Instruct");
  EXPECT_EQ(tokenizer->vocab_size(), base + 256);
  EXPECT_EQ(tokenizer->bos_id(), base);
  EXPECT_EQ(tokenizer->eos_id(), base + 1);
  EXPECT_EQ(tokenizer->pad_id(), base + 255);
  EXPECT_EQ(tokenizer->unk_id(), base + 254);
  EXPECT_EQ(tokenizer->chat_template(), chat_template);
  EXPECT_EQ(tokenizer->token_to_id("<|im_middle|>"), base + 17);
  EXPECT_EQ(tokenizer->id_to_token(base + 5), "<|reserved_token_" + std::to_string(base + 5) + "|>");

  // Corpus lines that do not spell one of these specials, each wrapped in two of them.
  std::vector<std::string> cases;
  for (const std::string& line : all_cases()) {
    const bool spells_special = line.find("<|reserved_token_") != std::string::npos ||
                                std::any_of(specials.begin(), specials.end(), [&](const auto& special) {
                                  return line.find(special.first) != std::string::npos;
                                });
    if (!spells_special) cases.push_back(line);
  }
  ASSERT_GT(cases.size(), 300U);
  write_file(dir.path() / "kimi_pattern.txt", kimi_original_pattern());
  const test::CasesFile cases_file(cases);
  const auto expected =
      reference_ids({"encode", "cl100k_base", cases_file.path().string(), (dir.path() / "kimi_pattern.txt").string()});
  ASSERT_EQ(expected.size(), cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    std::vector<TokenId> wrapped = {base};
    wrapped.insert(wrapped.end(), expected[i].begin(), expected[i].end());
    wrapped.push_back(base + 2);
    const auto ids = tokenizer->encode("[BOS]" + cases[i] + "<|im_end|>");
    EXPECT_EQ(ids, wrapped) << "case " << i << ": " << cases[i];
    EXPECT_EQ(tokenizer->decode(ids, true), cases[i]) << "case " << i;
  }
}

void expect_malformed(const std::string& content, const std::string& expected) {
  TempDir dir;
  const auto file = dir.path() / "tiktoken.model";
  write_file(file, content);
  try {
    load_tiktoken_tokenizer(file, "bad", TiktokenOptions::o200k_base());
    FAIL() << "loaded: " << content;
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::invalid_configuration);
    const std::string message = e.what();
    EXPECT_NE(message.find(file.string()), std::string::npos) << message;
    EXPECT_NE(message.find(expected), std::string::npos) << message;
  }
}

TEST(TiktokenTokenizer, MalformedFilesNameTheFileAndLine) {
  expect_malformed("IQ== 0\nI*== 1\n", "line 2: the token is not valid base64");
  expect_malformed("IQ== 0\nIg==\n", "line 2: expected \"<base64 token> <rank>\", found no rank");
  expect_malformed("IQ== 0\nIg== x1\n", "line 2: the rank is not a number");
  expect_malformed("IQ== 0\nIg== \n", "line 2: the rank is not a number");
  expect_malformed("IQ== 0\n\nIg== 0\n", "line 3: rank 0 appears twice");
  expect_malformed("IQ== 0\nIQ== 1\n", "line 2: the token appears twice");
  expect_malformed("IQ 0\n", "line 1: the token is not valid base64");
  expect_malformed("", "holds no ranks");
  expect_malformed("IQ== 9999999999\n", "line 1: the rank is too large");
}

TEST(TiktokenTokenizer, MissingFileAndBadConfigFail) {
  TempDir dir;
  EXPECT_THROW(load_tiktoken_tokenizer(dir.path() / "absent.model", "x"), error);
  write_file(dir.path() / "tiktoken.model", small_ranks());
  write_file(dir.path() / "tokenizer_config.json", R"({"added_tokens_decoder": {"x": {"content": "a"}}})");
  try {
    load_tiktoken_tokenizer(dir.path() / "tiktoken.model", "x");
    FAIL() << "loaded";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("$.added_tokens_decoder[\"x\"]"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tinker
