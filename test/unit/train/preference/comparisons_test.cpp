// comparison_from_record and read_comparisons: the preference record shapes DPO reads.
#include <tinker/train/preference.hpp>

#include "support/expect_error.hpp"
#include "support/temp_files.hpp"

#include <gtest/gtest.h>

namespace tinker::train {
namespace {

using renderers::Message;
using test::expect_tinker_error;

TEST(PreferenceRecords, TheCookbooksShapes) {
  const auto simple = comparison_from_record(R"({"prompt": "Hi?", "chosen": "Hello.", "rejected": "No."})");
  ASSERT_TRUE(simple.has_value());
  EXPECT_EQ(simple->prompt, std::vector<Message>{Message("user", "Hi?")});
  EXPECT_EQ(simple->chosen, std::vector<Message>{Message("assistant", "Hello.")});
  EXPECT_EQ(simple->rejected, std::vector<Message>{Message("assistant", "No.")});

  const auto whole = comparison_from_record(
      R"({"chosen": [{"role": "user", "content": "Hi?"}, {"role": "assistant", "content": "Hello."}],
          "rejected": [{"role": "user", "content": "Hi?"}, {"role": "assistant", "content": "No."}]})");
  EXPECT_EQ(whole, simple);

  const auto labeled = comparison_from_record(
      R"({"comparison": {"prompt_conversation": [{"role": "user", "content": "Hi?"}],
          "completion_A": [{"role": "assistant", "content": "No."}],
          "completion_B": [{"role": "assistant", "content": "Hello."}]}, "label": "B"})");
  EXPECT_EQ(labeled, simple);
  EXPECT_FALSE(
      comparison_from_record(
          R"({"comparison": {"prompt_conversation": [], "completion_A": [], "completion_B": []}, "label": "Tie"})")
          .has_value());
}

TEST(PreferenceRecords, BadRecordsNameTheFieldAndTheLine) {
  expect_tinker_error(errc::invalid_argument, "\"rejected\"", [] { comparison_from_record(R"({"chosen": "a"})"); });
  expect_tinker_error(errc::invalid_argument, "label", [] {
    comparison_from_record(R"({"comparison": {"prompt_conversation": [], "completion_A": [], "completion_B": []},
                               "label": "C"})");
  });
  expect_tinker_error(errc::invalid_argument, "rejected: no message after the prompt", [] {
    comparison_from_record(R"({"chosen": [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}],
                               "rejected": [{"role": "user", "content": "x"}]})");
  });
  expect_tinker_error(errc::invalid_argument, "chosen: expected a string or an array",
                      [] { comparison_from_record(R"({"prompt": "p", "chosen": 3, "rejected": "r"})"); });
  const test::TempFile file(
      "{\"prompt\": \"p\", \"chosen\": \"c\", \"rejected\": \"r\"}\n\n"
      "{\"comparison\": {\"prompt_conversation\": [], \"completion_A\": [], \"completion_B\": []}, \"label\": "
      "\"Tie\"}\n"
      "{\"prompt\": \"p\"}\n",
      ".jsonl");
  expect_tinker_error(errc::invalid_argument, ".jsonl:4:", [&] { read_comparisons(file.path()); });
}

TEST(PreferenceRecords, ReadSkipsTiesAndSystemPromptsLead) {
  const test::TempFile file(
      "{\"system\": \"Be brief.\", \"prompt\": \"p\", \"chosen\": \"c\", \"rejected\": \"r\"}\n"
      "{\"comparison\": {\"prompt_conversation\": [], \"completion_A\": [], \"completion_B\": []}, \"label\": "
      "\"Tie\"}\n",
      ".jsonl");
  const auto comparisons = read_comparisons(file.path());
  ASSERT_EQ(comparisons.size(), 1u);
  EXPECT_EQ(comparisons[0].prompt, (std::vector<Message>{Message("system", "Be brief."), Message("user", "p")}));
}

}  // namespace
}  // namespace tinker::train
