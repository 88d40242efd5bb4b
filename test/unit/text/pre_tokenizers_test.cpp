#include "text/pre_tokenizer.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tinker::tokenizer_detail {
namespace {

std::vector<std::string> run(const PreTokenizer& pre_tokenizer, std::string_view text, bool starts_input = true) {
  Pieces pieces(text);
  pre_tokenizer.pre_tokenize(pieces, SectionContext(starts_input));
  std::vector<std::string> out;
  for (std::size_t i = 0; i < pieces.size(); ++i) out.emplace_back(pieces[i]);
  return out;
}

using Strings = std::vector<std::string>;

// Hugging Face's own test vectors (tokenizers/src/pre_tokenizers/split.rs), pattern \w+|[^\w\s]+ inverted.
TEST(TextSplit, EveryBehaviorWithInvertedWordPattern) {
  const std::string text = "How are you doing?";
  const auto split = [&](SplitBehavior behavior) {
    return run(*make_split_pre_tokenizer("\\w+|[^\\w\\s]+", true, behavior, true), text);
  };
  EXPECT_EQ(split(SplitBehavior::removed), (Strings{"How", "are", "you", "doing", "?"}));
  EXPECT_EQ(split(SplitBehavior::isolated), (Strings{"How", " ", "are", " ", "you", " ", "doing", "?"}));
  EXPECT_EQ(split(SplitBehavior::merged_with_previous), (Strings{"How ", "are ", "you ", "doing", "?"}));
  EXPECT_EQ(split(SplitBehavior::merged_with_next), (Strings{"How", " are", " you", " doing", "?"}));
  EXPECT_EQ(split(SplitBehavior::contiguous), (Strings{"How", " ", "are", " ", "you", " ", "doing?"}));
}

TEST(TextSplit, StringPatternAndRegexAgree) {
  EXPECT_EQ(run(*make_split_pre_tokenizer("\\s+", true, SplitBehavior::removed, false), "Hey, man!"),
            (Strings{"Hey,", "man!"}));
  EXPECT_EQ(run(*make_split_pre_tokenizer(" ", false, SplitBehavior::removed, false), "Hey, man!"),
            (Strings{"Hey,", "man!"}));
  // Inverted literal: the text between the matches is the delimiter.
  EXPECT_EQ(run(*make_split_pre_tokenizer("Hello", false, SplitBehavior::removed, true), "Hello Hello Hello"),
            (Strings{"Hello", "Hello", "Hello"}));
  // A literal with regex metacharacters is matched literally.
  EXPECT_EQ(run(*make_split_pre_tokenizer("a.b", false, SplitBehavior::isolated, false), "xa.bya-b"),
            (Strings{"x", "a.b", "ya-b"}));
}

TEST(TextSplit, MergedBehaviorsWithAdjacentDelimiters) {
  // Gemma's Split(" ", MergedWithPrevious): consecutive delimiters are not merged with each other.
  const auto previous = make_split_pre_tokenizer(" ", false, SplitBehavior::merged_with_previous, false);
  EXPECT_EQ(run(*previous, "a  b "), (Strings{"a ", " ", "b "}));
  EXPECT_EQ(run(*previous, " a"), (Strings{" ", "a"}));
  const auto next = make_split_pre_tokenizer(" ", false, SplitBehavior::merged_with_next, false);
  EXPECT_EQ(run(*next, "a  b "), (Strings{"a", " ", " b", " "}));
  const auto contiguous = make_split_pre_tokenizer(" ", false, SplitBehavior::contiguous, false);
  EXPECT_EQ(run(*contiguous, "a  b "), (Strings{"a", "  ", "b", " "}));
}

TEST(TextSplit, InvalidRegexNamesThePattern) {
  try {
    make_split_pre_tokenizer("(unclosed", true, SplitBehavior::isolated, false);
    FAIL() << "no exception";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("(unclosed"), std::string::npos) << e.what();
  }
}

TEST(TextByteLevel, GptTwoSplitPrefixSpaceAndMapping) {
  const auto plain = make_byte_level_pre_tokenizer(false, true, false);
  EXPECT_EQ(run(*plain, "Hello world's  123\n"), (Strings{"Hello", " world", "'s", " ", " 123", "\n"}));
  const auto prefixed = make_byte_level_pre_tokenizer(true, false, true);
  EXPECT_EQ(run(*prefixed, "Hi"), (Strings{"ĠHi"}));
  EXPECT_EQ(run(*prefixed, " Hi"), (Strings{"ĠHi"}));
  const auto mapped = make_byte_level_pre_tokenizer(false, false, true);
  EXPECT_EQ(run(*mapped, "a\né"), (Strings{"aĊÃ©"}));
}

TEST(TextByteLevel, PrefixSpaceGoesToEveryPieceAsHuggingFaceDoes) {
  std::vector<std::unique_ptr<PreTokenizer>> steps;
  steps.push_back(make_split_pre_tokenizer("-", false, SplitBehavior::removed, false));
  steps.push_back(make_byte_level_pre_tokenizer(true, false, false));
  EXPECT_EQ(run(*make_sequence_pre_tokenizer(std::move(steps)), "a-b"), (Strings{" a", " b"}));
}

TEST(TextByteLevel, TablesRoundTripEveryByte) {
  std::vector<std::string> seen;
  for (int byte = 0; byte < 256; ++byte) {
    const std::string& c = byte_level_char(static_cast<unsigned char>(byte));
    EXPECT_EQ(byte_level_byte(c), byte) << byte;
    seen.push_back(c);
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(std::unique(seen.begin(), seen.end()), seen.end()) << "two bytes share a character";
  EXPECT_EQ(byte_level_char(' '), "Ġ");
  EXPECT_EQ(byte_level_char('A'), "A");
  EXPECT_EQ(byte_level_char(0xAD), "Ń");
  EXPECT_EQ(byte_level_byte("ab"), -1);
  EXPECT_EQ(byte_level_byte("€"), -1);
  EXPECT_EQ(byte_level_byte(""), -1);
}

TEST(TextMetaspace, PrependSchemes) {
  const auto always = make_metaspace_pre_tokenizer("▁", PrependScheme::always, true);
  EXPECT_EQ(run(*always, "Hey friend!"), (Strings{"▁Hey", "▁friend!"}));
  EXPECT_EQ(run(*always, "Hey friend!", false), (Strings{"▁Hey", "▁friend!"}));
  EXPECT_EQ(run(*always, "  a"), (Strings{"▁", "▁a"}));
  const auto first = make_metaspace_pre_tokenizer("▁", PrependScheme::first, true);
  EXPECT_EQ(run(*first, "Hey friend!"), (Strings{"▁Hey", "▁friend!"}));
  EXPECT_EQ(run(*first, "Hey friend!", false), (Strings{"Hey", "▁friend!"}));
  const auto never = make_metaspace_pre_tokenizer("▁", PrependScheme::never, true);
  EXPECT_EQ(run(*never, "Hey friend!"), (Strings{"Hey", "▁friend!"}));
  const auto unsplit = make_metaspace_pre_tokenizer("▁", PrependScheme::always, false);
  EXPECT_EQ(run(*unsplit, "Hey friend!"), (Strings{"▁Hey▁friend!"}));
}

TEST(TextDigits, IndividualAndContiguous) {
  EXPECT_EQ(run(*make_digits_pre_tokenizer(true), "Hey 123 friend!"), (Strings{"Hey ", "1", "2", "3", " friend!"}));
  EXPECT_EQ(run(*make_digits_pre_tokenizer(false), "Hey 123 friend!"), (Strings{"Hey ", "123", " friend!"}));
  // Any Unicode number (N*), as Rust's char::is_numeric.
  EXPECT_EQ(run(*make_digits_pre_tokenizer(false), "x٣٤½y"), (Strings{"x", "٣٤½", "y"}));
}

TEST(TextPunctuation, BehaviorsAndUnicodePunctuation) {
  EXPECT_EQ(run(*make_punctuation_pre_tokenizer(SplitBehavior::isolated), "Hey friend!     How are you?!?"),
            (Strings{"Hey friend", "!", "     How are you", "?", "!", "?"}));
  EXPECT_EQ(run(*make_punctuation_pre_tokenizer(SplitBehavior::removed), "a«b»c$d"), (Strings{"a", "b", "c", "d"}));
  EXPECT_EQ(run(*make_punctuation_pre_tokenizer(SplitBehavior::merged_with_previous), "a,b。c"),
            (Strings{"a,", "b。", "c"}));
}

TEST(TextWhitespace, WordsAndWhitespaceSplit) {
  EXPECT_EQ(run(*make_whitespace_pre_tokenizer(), "Hey man!\tGood-bye"),
            (Strings{"Hey", "man", "!", "Good", "-", "bye"}));
  // \w as Oniguruma: combining marks are word characters.
  EXPECT_EQ(run(*make_whitespace_pre_tokenizer(), "cafe\xCC\x81!"), (Strings{"cafe\xCC\x81", "!"}));
  EXPECT_EQ(run(*make_whitespace_split_pre_tokenizer(), " Hey\u3000man!\n"), (Strings{"Hey", "man!"}));
}

TEST(TextSequence, StepsRunInOrder) {
  std::vector<std::unique_ptr<PreTokenizer>> steps;
  steps.push_back(make_whitespace_split_pre_tokenizer());
  steps.push_back(make_digits_pre_tokenizer(true));
  EXPECT_EQ(run(*make_sequence_pre_tokenizer(std::move(steps)), "ab12 c3"), (Strings{"ab", "1", "2", "c", "3"}));
}

}  // namespace
}  // namespace tinker::tokenizer_detail
