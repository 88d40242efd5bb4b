// tinker::model_lookup_name: base model names with a ":peft:<context length>" suffix are looked up
// by the part before the first ':'.
#include <tinker/model_name.hpp>

#include <gtest/gtest.h>

namespace tinker {
namespace {

TEST(ModelLookupName, StripsEverythingFromTheFirstColon) {
  static_assert(model_lookup_name("Qwen/Qwen3-8B") == "Qwen/Qwen3-8B");
  EXPECT_EQ(model_lookup_name("Qwen/Qwen3.5-397B-A17B:peft:262144"), "Qwen/Qwen3.5-397B-A17B");
  EXPECT_EQ(model_lookup_name("a:b:c"), "a");
  EXPECT_EQ(model_lookup_name(":peft:1"), "");
  EXPECT_EQ(model_lookup_name(""), "");
}

TEST(ModelNameSuffix, IsEverythingFromTheFirstColon) {
  EXPECT_EQ(model_name_suffix("moonshotai/Kimi-K2.6:peft:131072"), ":peft:131072");
  EXPECT_EQ(model_name_suffix("a:b:c"), ":b:c");
  EXPECT_EQ(model_name_suffix("moonshotai/Kimi-K2.6"), "");
}

}  // namespace
}  // namespace tinker
