// Finding tokenizer files: $TINKER_TOKENIZER_PATH (file, directory, list), the Hugging Face hub
// cache (refs/main, pinned revisions), the order of the search and the error listing every path.
#include "support/tokenizer_test_support.hpp"

#include <tinker/error.hpp>
#include <tinker/tokenizer.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using tinker::find_tokenizer_file;
using tinker::TokenizerFormat;
using tinker::TokenizerRef;
using tinker::test::environment;
using tinker::test::install_in_hub;
using tinker::test::TempDir;
using tinker::test::write_file;

constexpr std::string_view local_id = "tinker-local/tiny-sp-1k";
constexpr std::string_view commit_a = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
constexpr std::string_view commit_b = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

// The file contents do not matter to the search; distinct bytes tell the files apart.
const std::map<std::string, std::string> sp_files{{"tokenizer.model", "sp"}};

// Runs the search expecting an invalid_configuration error; returns its message.
std::string search_error(const TokenizerRef& ref, const tinker::EnvLookup& env) {
  try {
    const auto file = find_tokenizer_file(ref, env);
    ADD_FAILURE() << "found " << file.path << " instead of failing";
  } catch (const tinker::error& e) {
    EXPECT_EQ(e.code(), tinker::errc::invalid_configuration);
    return e.what();
  }
  return {};
}

// The paths listed after "looked at:", one per line.
std::vector<std::string> listed_paths(const std::string& message) {
  std::vector<std::string> paths;
  std::size_t at = message.find("looked at:");
  if (at == std::string::npos) return paths;
  while ((at = message.find("\n  ", at)) != std::string::npos) {
    at += 3;
    const std::size_t end = message.find('\n', at);
    paths.push_back(message.substr(at, end == std::string::npos ? std::string::npos : end - at));
  }
  return paths;
}

TEST(TokenizerLocate, HubCacheDirectoryFollowsHuggingFacePrecedence) {
  using tinker::hf_hub_cache_dir;
  EXPECT_EQ(hf_hub_cache_dir(environment({{"HF_HUB_CACHE", "/c"}, {"HF_HOME", "/h"}, {"HOME", "/u"}})), fs::path("/c"));
  EXPECT_EQ(hf_hub_cache_dir(environment({{"HF_HOME", "/h"}, {"XDG_CACHE_HOME", "/x"}})), fs::path("/h/hub"));
  EXPECT_EQ(hf_hub_cache_dir(environment({{"XDG_CACHE_HOME", "/x"}, {"HOME", "/u"}})), fs::path("/x/huggingface/hub"));
  EXPECT_EQ(hf_hub_cache_dir(environment({{"HOME", "/u"}})), fs::path("/u/.cache/huggingface/hub"));
  EXPECT_EQ(hf_hub_cache_dir(environment({{"HF_HUB_CACHE", ""}, {"HF_HOME", ""}, {"HOME", "/u"}})),
            fs::path("/u/.cache/huggingface/hub"));  // empty means unset
  EXPECT_EQ(hf_hub_cache_dir(environment({})), std::nullopt);
}

// Exactly the layout tinker-local writes, under the id get_info reports.
TEST(TokenizerLocate, FindsTinkerLocalsInstallUnderHfHome) {
  TempDir home;
  const auto snapshot = install_in_hub(home.path() / "hub", local_id, commit_a, sp_files);
  const auto file = find_tokenizer_file(TokenizerRef(std::string(local_id)), environment({{"HF_HOME", home.path()}}));
  EXPECT_EQ(file.path, snapshot / "tokenizer.model");
  EXPECT_EQ(file.path, home.path() / "hub/models--tinker-local--tiny-sp-1k/snapshots" / commit_a / "tokenizer.model");
  EXPECT_EQ(file.format, TokenizerFormat::sentencepiece);
  const std::vector<fs::path> expected{home.path() / "hub/models--tinker-local--tiny-sp-1k/refs/main",
                                       snapshot / "tokenizer.json", file.path};
  EXPECT_EQ(file.searched, expected);
}

TEST(TokenizerLocate, RefsFileMayEndWithANewline) {
  TempDir hub;
  install_in_hub(hub.path(), "org/tok", commit_a, sp_files, "");
  write_file(hub.path() / "models--org--tok/refs/main", std::string(commit_a) + "\n");
  const auto file = find_tokenizer_file(TokenizerRef("org/tok"), environment({{"HF_HUB_CACHE", hub.path()}}));
  EXPECT_EQ(file.path, hub.path() / "models--org--tok/snapshots" / commit_a / "tokenizer.model");
}

TEST(TokenizerLocate, PinnedCommitIsUsedInsteadOfMain) {
  TempDir hub;
  install_in_hub(hub.path(), "org/tok", commit_a, sp_files, "main");
  const auto pinned = install_in_hub(hub.path(), "org/tok", commit_b, sp_files, "");
  const auto env = environment({{"HF_HUB_CACHE", hub.path()}});
  const auto file = find_tokenizer_file(TokenizerRef("org/tok", std::string(commit_b)), env);
  EXPECT_EQ(file.path, pinned / "tokenizer.model");
  const std::vector<fs::path> expected{hub.path() / "models--org--tok/refs" / commit_b, pinned / "tokenizer.json",
                                       file.path};
  EXPECT_EQ(file.searched, expected);
}

TEST(TokenizerLocate, NamedRevisionGoesThroughItsRefsFile) {
  TempDir hub;
  install_in_hub(hub.path(), "org/tok", commit_a, sp_files, "main");
  const auto release = install_in_hub(hub.path(), "org/tok", commit_b, sp_files, "release");
  const auto file =
      find_tokenizer_file(TokenizerRef("org/tok", "release"), environment({{"HF_HUB_CACHE", hub.path()}}));
  EXPECT_EQ(file.path, release / "tokenizer.model");
}

TEST(TokenizerLocate, PinnedCommitMissingFromTheCacheIsNotReplacedByMain) {
  TempDir hub;
  install_in_hub(hub.path(), "org/tok", commit_a, sp_files, "main");
  const auto message =
      search_error(TokenizerRef("org/tok", std::string(commit_b)), environment({{"HF_HUB_CACHE", hub.path()}}));
  EXPECT_NE(message.find("at revision " + std::string(commit_b)), std::string::npos) << message;
  const auto snapshot = hub.path() / "models--org--tok/snapshots" / commit_b;
  const std::vector<std::string> expected{
      (hub.path() / "models--org--tok/refs" / commit_b).string(), (snapshot / "tokenizer.json").string(),
      (snapshot / "tokenizer.model").string(), (snapshot / "tiktoken.model").string()};
  EXPECT_EQ(listed_paths(message), expected);
}

TEST(TokenizerLocate, UnsafeCommitInRefsFileIsIgnored) {
  TempDir hub;
  install_in_hub(hub.path(), "org/tok", commit_a, sp_files, "");
  write_file(hub.path() / "models--org--tok/refs/main", "../../elsewhere");
  write_file(hub.path() / "elsewhere/tokenizer.model", "sp");
  search_error(TokenizerRef("org/tok"), environment({{"HF_HUB_CACHE", hub.path()}}));
}

TEST(TokenizerLocate, PathVariableFileIsUsedForEveryIdBeforeTheHub) {
  TempDir dir;
  install_in_hub(dir.path() / "hub", "org/tok", commit_a, sp_files);
  write_file(dir.path() / "custom.model", "sp");
  const auto env =
      environment({{"TINKER_TOKENIZER_PATH", dir.path() / "custom.model"}, {"HF_HUB_CACHE", dir.path() / "hub"}});
  for (const char* id : {"org/tok", "other/id", "bare"}) {
    const auto file = find_tokenizer_file(TokenizerRef(id), env);
    EXPECT_EQ(file.path, dir.path() / "custom.model") << id;
    EXPECT_EQ(file.format, TokenizerFormat::sentencepiece);
    EXPECT_EQ(file.searched, std::vector<fs::path>{file.path});
  }
}

TEST(TokenizerLocate, PathVariableFileFormatComesFromItsName) {
  TempDir dir;
  write_file(dir.path() / "my-tokenizer.json", "{}");
  write_file(dir.path() / "tiktoken.model", "x");
  EXPECT_EQ(find_tokenizer_file(TokenizerRef("a/b"),
                                environment({{"TINKER_TOKENIZER_PATH", dir.path() / "my-tokenizer.json"}}))
                .format,
            TokenizerFormat::tokenizer_json);
  EXPECT_EQ(
      find_tokenizer_file(TokenizerRef("a/b"), environment({{"TINKER_TOKENIZER_PATH", dir.path() / "tiktoken.model"}}))
          .format,
      TokenizerFormat::tiktoken);
}

TEST(TokenizerLocate, PathVariableDirectoryHoldsTokenizersByIdFirst) {
  TempDir dir;
  write_file(dir.path() / "org/tok/tokenizer.model", "by id");
  write_file(dir.path() / "tokenizer.model", "fallback");
  const auto env = environment({{"TINKER_TOKENIZER_PATH", dir.path()}});
  const auto file = find_tokenizer_file(TokenizerRef("org/tok"), env);
  EXPECT_EQ(file.path, dir.path() / "org/tok/tokenizer.model");
  const std::vector<fs::path> by_id_first{dir.path() / "org/tok/tokenizer.json", file.path};
  EXPECT_EQ(file.searched, by_id_first);
  const auto bare = find_tokenizer_file(TokenizerRef("bare"), env);
  EXPECT_EQ(bare.path, dir.path() / "tokenizer.model");
}

TEST(TokenizerLocate, PathVariableDirectoryMayBeAHubCache) {
  TempDir dir;
  const auto snapshot = install_in_hub(dir.path(), "org/tok", commit_a, sp_files);
  write_file(dir.path() / "tokenizer.model", "fallback");
  const auto file = find_tokenizer_file(TokenizerRef("org/tok"), environment({{"TINKER_TOKENIZER_PATH", dir.path()}}));
  EXPECT_EQ(file.path, snapshot / "tokenizer.model");
}

TEST(TokenizerLocate, PathVariableDirectoryItselfIsTheLastResort) {
  TempDir dir;
  write_file(dir.path() / "tokenizer.model", "fallback");
  const auto file = find_tokenizer_file(TokenizerRef("org/tok"), environment({{"TINKER_TOKENIZER_PATH", dir.path()}}));
  EXPECT_EQ(file.path, dir.path() / "tokenizer.model");
  const auto by_id = dir.path() / "org/tok";
  const std::vector<fs::path> expected{by_id / "tokenizer.json",      by_id / "tokenizer.model",
                                       by_id / "tiktoken.model",      dir.path() / "models--org--tok/refs/main",
                                       dir.path() / "tokenizer.json", dir.path() / "tokenizer.model"};
  EXPECT_EQ(file.searched, expected);
}

TEST(TokenizerLocate, PathVariableListIsSearchedInOrder) {
  TempDir first, second;
  write_file(second.path() / "org/tok/tokenizer.model", "second");
  const std::string list = ":" + (first.path() / "missing.model").string() + "::" + first.path().string() + ":" +
                           second.path().string() + ":";
  const auto file = find_tokenizer_file(TokenizerRef("org/tok"), environment({{"TINKER_TOKENIZER_PATH", list}}));
  EXPECT_EQ(file.path, second.path() / "org/tok/tokenizer.model");
  ASSERT_GE(file.searched.size(), 2u);
  EXPECT_EQ(file.searched.front(), first.path() / "missing.model");
}

// As transformers' AutoTokenizer, which takes the fast tokenizer (tokenizer.json) when a repo
// has both it and a SentencePiece model (Gemma, Llama 2).
TEST(TokenizerLocate, TokenizerJsonIsPreferredInADirectoryWithSeveralFormats) {
  TempDir hub;
  install_in_hub(hub.path(), "org/tok", commit_a,
                 {{"tokenizer.json", "{}"}, {"tokenizer.model", "sp"}, {"tiktoken.model", "t"}});
  const auto env = environment({{"HF_HUB_CACHE", hub.path()}});
  const auto file = find_tokenizer_file(TokenizerRef("org/tok"), env);
  EXPECT_EQ(file.format, TokenizerFormat::tokenizer_json);
  EXPECT_EQ(file.path.filename(), "tokenizer.json");
  fs::remove(file.path);
  EXPECT_EQ(find_tokenizer_file(TokenizerRef("org/tok"), env).path.filename(), "tokenizer.model");
}

TEST(TokenizerLocate, TokenizerJsonIsRecognised) {
  TempDir hub;
  const auto snapshot = install_in_hub(hub.path(), "Qwen/Qwen3-8B", commit_a, {{"tokenizer.json", "{}"}});
  const auto file = find_tokenizer_file(TokenizerRef("Qwen/Qwen3-8B"), environment({{"HF_HUB_CACHE", hub.path()}}));
  EXPECT_EQ(file.path, snapshot / "tokenizer.json");
  EXPECT_EQ(file.format, TokenizerFormat::tokenizer_json);
}

TEST(TokenizerLocate, ErrorListsEveryPathLookedAtInOrder) {
  TempDir dir, home;
  const std::string list = (dir.path() / "no-such-file.model").string() + ":" + dir.path().string();
  const auto env = environment({{"TINKER_TOKENIZER_PATH", list}, {"HOME", home.path()}});
  const auto message = search_error(TokenizerRef("org/tok"), env);
  EXPECT_NE(message.find("no tokenizer file found for \"org/tok\""), std::string::npos) << message;
  EXPECT_NE(message.find("nothing is downloaded"), std::string::npos) << message;
  const auto by_id = dir.path() / "org/tok";
  const auto hub = home.path() / ".cache/huggingface/hub";
  const std::vector<std::string> expected{(dir.path() / "no-such-file.model").string(),
                                          (by_id / "tokenizer.json").string(),
                                          (by_id / "tokenizer.model").string(),
                                          (by_id / "tiktoken.model").string(),
                                          (dir.path() / "models--org--tok/refs/main").string(),
                                          (dir.path() / "tokenizer.json").string(),
                                          (dir.path() / "tokenizer.model").string(),
                                          (dir.path() / "tiktoken.model").string(),
                                          (hub / "models--org--tok/refs/main").string()};
  EXPECT_EQ(listed_paths(message), expected) << message;
}

TEST(TokenizerLocate, ErrorSaysWhenNoHubCacheCanBeNamed) {
  const auto message = search_error(TokenizerRef("org/tok"), environment({}));
  EXPECT_NE(message.find("no hub cache"), std::string::npos) << message;
  EXPECT_TRUE(listed_paths(message).empty()) << message;
}

TEST(TokenizerLocate, ErrorForPrivatePackageIdsSaysSo) {
  TokenizerRef ref("TML/tok");
  ref.private_package = true;
  const auto message = search_error(ref, environment({}));
  EXPECT_NE(message.find("private tokenizer package"), std::string::npos) << message;
}

TEST(TokenizerLocate, UnsafeRefsAreRejected) {
  const auto env = environment({{"HOME", "/nonexistent"}});
  for (const auto& ref : {TokenizerRef("../x"), TokenizerRef("a/b/c"), TokenizerRef(""),
                          TokenizerRef("org/tok", "../../x"), TokenizerRef("org/tok", "")}) {
    try {
      find_tokenizer_file(ref, env);
      ADD_FAILURE() << "accepted \"" << ref.id << "\" @ " << ref.revision.value_or("(none)");
    } catch (const tinker::error& e) {
      EXPECT_EQ(e.code(), tinker::errc::invalid_argument) << e.what();
    }
  }
  // Hugging Face revisions may contain '/': a pull request's ref is refs/refs/pr/1 in the cache.
  TempDir hub;
  const auto pr = install_in_hub(hub.path(), "org/tok", commit_b, sp_files, "refs/pr/1");
  EXPECT_EQ(find_tokenizer_file(TokenizerRef("org/tok", "refs/pr/1"), environment({{"HF_HUB_CACHE", hub.path()}})).path,
            pr / "tokenizer.model");
}

}  // namespace
