// Repo ids and allow/ignore patterns as huggingface_hub checks and applies them.
#include <tinker/hub_upload.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tinker {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(HubRepoId, AcceptsWhatTheHubAccepts) {
  for (const char* id : {"gpt2", "user/my-adapter", "org_1/name.v2", "a/b", "User-Name/x_y.z"}) {
    EXPECT_EQ(hub_repo_id_problem(id), "") << id;
  }
}

TEST(HubRepoId, NamesWhatIsWrong) {
  EXPECT_THAT(hub_repo_id_problem("bad repo"), HasSubstr("the name has ' '"));
  EXPECT_THAT(hub_repo_id_problem("a/b/c"), HasSubstr("more than one '/'"));
  EXPECT_THAT(hub_repo_id_problem("user/name.git"), HasSubstr(".git"));
  EXPECT_THAT(hub_repo_id_problem("user/a--b"), HasSubstr("\"--\""));
  EXPECT_THAT(hub_repo_id_problem("user/a..b"), HasSubstr("\"..\""));
  EXPECT_THAT(hub_repo_id_problem("user/-name"), HasSubstr("start and end"));
  EXPECT_THAT(hub_repo_id_problem("/name"), HasSubstr("the namespace is empty"));
  EXPECT_THAT(hub_repo_id_problem("user/"), HasSubstr("the name is empty"));
  EXPECT_THAT(hub_repo_id_problem(std::string(97, 'a')), HasSubstr("longer than 96"));
}

TEST(HubPatterns, FollowFnmatchcase) {
  EXPECT_TRUE(hub_pattern_matches("*.json", "adapter_config.json"));
  EXPECT_TRUE(hub_pattern_matches("*.json", "sub/dir/config.json"));  // '*' crosses '/'
  EXPECT_FALSE(hub_pattern_matches("*.json", "config.jsonl"));
  EXPECT_FALSE(hub_pattern_matches("*.JSON", "config.json"));  // case-sensitive
  EXPECT_TRUE(hub_pattern_matches("adapter_?odel.*", "adapter_model.safetensors"));
  EXPECT_TRUE(hub_pattern_matches("[ab]*", "adapter"));
  EXPECT_FALSE(hub_pattern_matches("[!ab]*", "adapter"));
  EXPECT_TRUE(hub_pattern_matches("[a-c]x", "bx"));
  EXPECT_TRUE(hub_pattern_matches("[x", "[x"));               // no closing ']': a literal
  EXPECT_TRUE(hub_pattern_matches("logs/", "logs/run.txt"));  // a directory pattern gets '*'
  EXPECT_TRUE(hub_pattern_matches("**/.git/**", "a/.git/config"));
  EXPECT_TRUE(hub_pattern_matches("checkpoint_complete", "checkpoint_complete"));
  EXPECT_FALSE(hub_pattern_matches("checkpoint", "checkpoint_complete"));
  EXPECT_TRUE(hub_pattern_matches("*", ""));
  EXPECT_FALSE(hub_pattern_matches("?", ""));
}

TEST(HubPatterns, FilterKeepsAllowedAndNotIgnoredInOrder) {
  const std::vector<std::string> paths = {"README.md", "adapter_config.json", "adapter_model.safetensors",
                                          "checkpoint_complete"};
  EXPECT_EQ(hub_filter_paths(paths, {}, {}), paths);
  EXPECT_THAT(hub_filter_paths(paths, {"adapter_*"}, {}),
              ElementsAre("adapter_config.json", "adapter_model.safetensors"));
  EXPECT_THAT(hub_filter_paths(paths, {"adapter_*"}, {"*.json"}), ElementsAre("adapter_model.safetensors"));
  EXPECT_THAT(hub_filter_paths(paths, {}, {"checkpoint_complete", "*.md"}),
              ElementsAre("adapter_config.json", "adapter_model.safetensors"));
}

}  // namespace
}  // namespace tinker
