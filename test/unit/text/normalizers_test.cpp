#include "text/pre_tokenizer.hpp"

#include <gtest/gtest.h>

#include <string>

namespace tinker::tokenizer_detail {
namespace {

std::string normalized(const Normalizer& normalizer, std::string text) {
  normalizer.normalize(text);
  return text;
}

TEST(TextNormalizer, UnicodeForms) {
  const std::string composed = "caf\xC3\xA9";     // é as one code point
  const std::string decomposed = "cafe\xCC\x81";  // e + combining acute
  EXPECT_EQ(normalized(*make_unicode_normalizer(UnicodeForm::nfc), decomposed), composed);
  EXPECT_EQ(normalized(*make_unicode_normalizer(UnicodeForm::nfd), composed), decomposed);
  EXPECT_EQ(normalized(*make_unicode_normalizer(UnicodeForm::nfc), "plain ascii"), "plain ascii");
  // Compatibility characters: the fi ligature, full-width letters, superscript two, Roman numeral.
  const std::string compat = "\xEF\xAC\x81 \xEF\xBC\xA1 x\xC2\xB2 \xE2\x85\xA3";
  EXPECT_EQ(normalized(*make_unicode_normalizer(UnicodeForm::nfkc), compat), "fi A x2 IV");
  EXPECT_EQ(normalized(*make_unicode_normalizer(UnicodeForm::nfc), compat), compat);
  EXPECT_EQ(normalized(*make_unicode_normalizer(UnicodeForm::nfkd), "\xEF\xAC\x81\xC3\xA9"), "fie\xCC\x81");
  // Hangul syllables compose and decompose.
  EXPECT_EQ(normalized(*make_unicode_normalizer(UnicodeForm::nfd), "\xED\x95\x9C"),
            "\xE1\x84\x92\xE1\x85\xA1\xE1\x86\xAB");
}

TEST(TextNormalizer, LowercaseAsRust) {
  const auto lower = make_lowercase_normalizer();
  EXPECT_EQ(normalized(*lower, "Hello WORLD"), "hello world");
  EXPECT_EQ(normalized(*lower, "ÀÉÎ ΑΒΓ Дом"), "àéî αβγ дом");
  EXPECT_EQ(normalized(*lower, "\xC4\xB0"), "i\xCC\x87");   // İ lowercases to two code points
  EXPECT_EQ(normalized(*lower, "ΟΔΟΣ ΣΑ Σ"), "οδοσ σα σ");  // per character: no final-sigma rule
}

TEST(TextNormalizer, PrependReplaceStripSequence) {
  EXPECT_EQ(normalized(*make_prepend_normalizer("▁"), "hi"), "▁hi");
  EXPECT_EQ(normalized(*make_prepend_normalizer("▁"), ""), "");
  EXPECT_EQ(normalized(*make_replace_normalizer(" ", false, "▁"), " a b "), "▁a▁b▁");
  EXPECT_EQ(normalized(*make_replace_normalizer("\\s+", true, " "), "a \t\n b"), "a b");
  EXPECT_EQ(normalized(*make_strip_normalizer(true, true), "\u3000 a b \n"), "a b");
  EXPECT_EQ(normalized(*make_strip_normalizer(true, false), "  a "), "a ");
  EXPECT_EQ(normalized(*make_strip_normalizer(false, true), "  a "), "  a");
  EXPECT_EQ(normalized(*make_strip_normalizer(true, true), "   "), "");
  std::vector<std::unique_ptr<Normalizer>> steps;
  steps.push_back(make_strip_normalizer(true, true));
  steps.push_back(make_lowercase_normalizer());
  steps.push_back(make_prepend_normalizer("_"));
  EXPECT_EQ(normalized(*make_sequence_normalizer(std::move(steps)), " AB "), "_ab");
}

}  // namespace
}  // namespace tinker::tokenizer_detail
