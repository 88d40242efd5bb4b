// The tiny SentencePiece tokenizer's installation in the Hugging Face cache layout: layout, reuse, corruption,
// upgrades, concurrent installers and cache directory resolution.
#include "programs/local/tokenizer/tokenizer_store.hpp"

#include "programs/local/tokenizer/bpe_training.hpp"
#include "programs/local/tokenizer/tokenizer_training.hpp"
#include "unit/programs/local/tokenizer/tokenizer_test_support.hpp"

#include <tinker/error.hpp>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <latch>
#include <thread>

namespace tinker::local {
namespace {

namespace fs = std::filesystem;
using test::EnvOverride;
using test::read_bytes;
using test::TempDir;
using test::write_bytes;

const fs::path repo_folder = "models--tinker-local--tiny-sp-1k";

std::vector<std::string> directory_names(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Expects `call` to throw tinker::error whose message names `path`.
template <typename Call>
void expect_error_naming(const Call& call, const fs::path& path) {
  try {
    call();
    ADD_FAILURE() << "no error thrown; expected one naming " << path;
  } catch (const tinker::error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_configuration)) << e.what();
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
}

TEST(TinyTokenizerStore, InstallsTheHuggingFaceLayout) {
  TempDir hub;
  const auto tokenizer = ensure_tiny_tokenizer(hub.path(), TinyTokenizer::sentencepiece);
  const fs::path repo = hub.path() / repo_folder;

  const std::string revision = read_bytes(repo / "refs" / "main");
  ASSERT_EQ(revision.size(), 40u) << revision;
  EXPECT_EQ(revision.find_first_not_of("0123456789abcdef"), std::string::npos) << revision;
  EXPECT_EQ(directory_names(repo / "snapshots"), std::vector<std::string>{revision});  // no temporaries left
  EXPECT_EQ(directory_names(repo / "refs"), std::vector<std::string>{"main"});

  const fs::path snapshot = repo / "snapshots" / revision;
  const std::vector<std::string> files{"special_tokens_map.json", "tokenizer.model", "tokenizer_config.json"};
  EXPECT_EQ(directory_names(snapshot), files);
  EXPECT_EQ(tokenizer->model_file(), snapshot / "tokenizer.model");
  EXPECT_EQ(tokenizer->id(), "tinker-local/tiny-sp-1k");
  EXPECT_EQ(tokenizer->id(), tiny_sp_tokenizer_id);

  detail::SnapshotFiles contents;
  for (const auto& name : files) contents.emplace(name, read_bytes(snapshot / name));
  EXPECT_EQ(detail::snapshot_revision(contents), revision);
  EXPECT_EQ(contents.at("tokenizer.model"), detail::tiny_sentencepiece_model());

  const auto config = boost::json::parse(contents.at("tokenizer_config.json")).as_object();
  EXPECT_EQ(config.at("tokenizer_class").as_string(), "LlamaTokenizer");
  EXPECT_EQ(config.at("bos_token").as_string(), "<s>");
  EXPECT_EQ(config.at("eos_token").as_string(), "</s>");
  EXPECT_EQ(config.at("unk_token").as_string(), "<unk>");
  EXPECT_FALSE(config.at("add_bos_token").as_bool());
  EXPECT_EQ(config.at("added_tokens_decoder").at("1").at("content").as_string(), "<s>");
  const auto special = boost::json::parse(contents.at("special_tokens_map.json")).as_object();
  EXPECT_EQ(special.at("eos_token").as_string(), "</s>");
  EXPECT_EQ(special.size(), 3u);
}

TEST(TinyTokenizerStore, TwoInstallsAreByteIdentical) {
  TempDir first;
  TempDir second;
  const auto a = ensure_tiny_tokenizer(first.path(), TinyTokenizer::sentencepiece);
  const auto b = ensure_tiny_tokenizer(second.path(), TinyTokenizer::sentencepiece);
  EXPECT_EQ(a->model_file().parent_path().filename(), b->model_file().parent_path().filename());
  for (const char* name : {"tokenizer.model", "tokenizer_config.json", "special_tokens_map.json"}) {
    EXPECT_TRUE(read_bytes(a->model_file().parent_path() / name) == read_bytes(b->model_file().parent_path() / name))
        << name;
  }
}

TEST(TinyTokenizerStore, ReusesAnInstalledSnapshotWithoutRewritingOrTraining) {
  TempDir hub;
  const auto first = ensure_tiny_tokenizer(hub.path(), TinyTokenizer::sentencepiece);
  const fs::path repo = hub.path() / repo_folder;
  // Old timestamps reveal any rewrite; the training counter reveals any retraining.
  const auto old_time = fs::file_time_type::clock::now() - std::chrono::hours(24 * 365);
  const std::vector<fs::path> files{repo / "refs" / "main", first->model_file(),
                                    first->model_file().parent_path() / "tokenizer_config.json"};
  for (const auto& file : files) fs::last_write_time(file, old_time);
  const int runs = detail::tiny_tokenizer_training_runs();

  const auto second = ensure_tiny_tokenizer(hub.path(), TinyTokenizer::sentencepiece);
  EXPECT_EQ(second->model_file(), first->model_file());
  EXPECT_EQ(detail::tiny_tokenizer_training_runs(), runs);
  for (const auto& file : files) EXPECT_EQ(fs::last_write_time(file), old_time) << file;
  EXPECT_EQ(directory_names(repo / "snapshots").size(), 1u);
}

TEST(TinyTokenizerStore, ConcurrentInstallersIntoOneEmptyDirectoryMakeOneValidInstall) {
  TempDir hub;
  constexpr int installers = 4;
  std::latch start(installers);
  std::vector<std::shared_ptr<const LocalTokenizer>> results(installers);
  std::vector<std::string> failures(installers);
  std::vector<std::thread> threads;
  for (int i = 0; i < installers; ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      try {
        results[i] = ensure_tiny_tokenizer(hub.path(), TinyTokenizer::sentencepiece);
      } catch (const std::exception& e) {
        failures[i] = e.what();
      }
    });
  }
  for (auto& thread : threads) thread.join();

  const fs::path repo = hub.path() / repo_folder;
  const std::string revision = read_bytes(repo / "refs" / "main");
  EXPECT_EQ(directory_names(repo / "snapshots"), std::vector<std::string>{revision});
  EXPECT_EQ(directory_names(repo / "refs"), std::vector<std::string>{"main"});
  for (int i = 0; i < installers; ++i) {
    EXPECT_EQ(failures[i], "") << "installer " << i;
    ASSERT_NE(results[i], nullptr) << "installer " << i;
    EXPECT_EQ(results[i]->model_file(), repo / "snapshots" / revision / "tokenizer.model");
    EXPECT_EQ(results[i]->encode("Liberty"), results[0]->encode("Liberty"));
  }
  // And the install is one a later call accepts as is.
  EXPECT_EQ(ensure_tiny_tokenizer(hub.path(), TinyTokenizer::sentencepiece)->model_file(), results[0]->model_file());
}

// Runs only inside the children started below (disabled otherwise): installs into $TINKER_TEST_HUB.
TEST(TinyTokenizerStore, DISABLED_InstallerProcessChild) {
  const char* hub = std::getenv("TINKER_TEST_HUB");
  if (hub == nullptr) GTEST_SKIP() << "runs only as a child of the next test";
  const auto tokenizer = ensure_tiny_tokenizer(hub, TinyTokenizer::sentencepiece);
  std::printf("INSTALLED %s\n", tokenizer->model_file().c_str());
}

TEST(TinyTokenizerStore, ConcurrentInstallerProcessesMakeOneValidInstall) {
  TempDir hub;
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  const std::string command = "TINKER_TEST_HUB='" + hub.path().string() + "' '" + self +
                              "' --gtest_also_run_disabled_tests "
                              "--gtest_filter=TinyTokenizerStore.DISABLED_InstallerProcessChild 2>&1";
  std::vector<FILE*> children;
  for (int i = 0; i < 3; ++i) children.push_back(::popen(command.c_str(), "r"));  // all start before any is read
  std::vector<std::string> outputs;
  for (FILE* child : children) {
    ASSERT_NE(child, nullptr);
    std::string output;
    char buffer[4096];
    std::size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof buffer, child)) > 0) output.append(buffer, n);
    EXPECT_EQ(::pclose(child), 0) << output;
    outputs.push_back(output);
  }
  const fs::path repo = hub.path() / repo_folder;
  const std::string revision = read_bytes(repo / "refs" / "main");
  EXPECT_EQ(directory_names(repo / "snapshots"), std::vector<std::string>{revision});
  EXPECT_EQ(directory_names(repo / "refs"), std::vector<std::string>{"main"});
  const fs::path model = repo / "snapshots" / revision / "tokenizer.model";
  for (const auto& output : outputs) EXPECT_NE(output.find("INSTALLED " + model.string()), std::string::npos) << output;
  EXPECT_EQ(ensure_tiny_tokenizer(hub.path(), TinyTokenizer::sentencepiece)->model_file(),
            model);  // valid as installed
}

TEST(TinyTokenizerStore, AcceptsARefWithATrailingNewline) {
  TempDir hub;
  const auto first = ensure_tiny_tokenizer(hub.path(), TinyTokenizer::sentencepiece);
  const fs::path ref = hub.path() / repo_folder / "refs" / "main";
  write_bytes(ref, read_bytes(ref) + "\n");
  EXPECT_EQ(ensure_tiny_tokenizer(hub.path(), TinyTokenizer::sentencepiece)->model_file(), first->model_file());
}

TEST(TinyTokenizerStore, RefusesACorruptModelFileNamingTheSnapshot) {
  TempDir hub;
  const auto tokenizer = ensure_tiny_tokenizer(hub.path(), TinyTokenizer::sentencepiece);
  write_bytes(tokenizer->model_file(), read_bytes(tokenizer->model_file()) + "garbage");
  expect_error_naming([&] { ensure_tiny_tokenizer(hub.path(), TinyTokenizer::sentencepiece); },
                      tokenizer->model_file().parent_path());
}

TEST(TinyTokenizerStore, RefusesAMissingSnapshotFileNamingIt) {
  TempDir hub;
  const auto tokenizer = ensure_tiny_tokenizer(hub.path(), TinyTokenizer::sentencepiece);
  const fs::path config = tokenizer->model_file().parent_path() / "tokenizer_config.json";
  fs::remove(config);
  expect_error_naming([&] { ensure_tiny_tokenizer(hub.path(), TinyTokenizer::sentencepiece); }, config);
}

TEST(TinyTokenizerStore, RefusesAGarbledRefNamingIt) {
  TempDir hub;
  ensure_tiny_tokenizer(hub.path(), TinyTokenizer::sentencepiece);
  const fs::path ref = hub.path() / repo_folder / "refs" / "main";
  write_bytes(ref, "not-a-revision");
  expect_error_naming([&] { ensure_tiny_tokenizer(hub.path(), TinyTokenizer::sentencepiece); }, ref);
}

TEST(TinyTokenizerStore, ReinstallsWhenTheRefNamesADeletedSnapshot) {
  TempDir hub;
  const auto first = ensure_tiny_tokenizer(hub.path(), TinyTokenizer::sentencepiece);
  fs::remove_all(first->model_file().parent_path());
  const auto second = ensure_tiny_tokenizer(hub.path(), TinyTokenizer::sentencepiece);
  EXPECT_EQ(second->model_file(), first->model_file());
  EXPECT_TRUE(fs::is_regular_file(second->model_file()));
}

TEST(TinyTokenizerStore, ReplacesAnIntactSnapshotTrainedFromOtherInputs) {
  TempDir hub;
  const auto current = ensure_tiny_tokenizer(hub.path(), TinyTokenizer::sentencepiece);
  const fs::path repo = hub.path() / repo_folder;
  const std::string current_revision = read_bytes(repo / "refs" / "main");

  // An older build's snapshot: same files but another training fingerprint, consistently named.
  detail::SnapshotFiles old_files;
  for (const char* name : {"tokenizer.model", "tokenizer_config.json", "special_tokens_map.json"}) {
    old_files.emplace(name, read_bytes(repo / "snapshots" / current_revision / name));
  }
  std::string& config = old_files.at("tokenizer_config.json");
  const std::string fingerprint = detail::tiny_tokenizer_training_fingerprint();
  const auto at = config.find(fingerprint);
  ASSERT_NE(at, std::string::npos);
  config.replace(at, fingerprint.size(), std::string(fingerprint.size(), '0'));
  const std::string old_revision = detail::snapshot_revision(old_files);
  fs::create_directories(repo / "snapshots" / old_revision);
  for (const auto& [name, bytes] : old_files) write_bytes(repo / "snapshots" / old_revision / name, bytes);
  write_bytes(repo / "refs" / "main", old_revision);

  const auto tokenizer = ensure_tiny_tokenizer(hub.path(), TinyTokenizer::sentencepiece);
  EXPECT_EQ(read_bytes(repo / "refs" / "main"), current_revision);
  EXPECT_EQ(tokenizer->model_file(), current->model_file());
  EXPECT_TRUE(fs::is_directory(repo / "snapshots" / old_revision));  // other revisions are left alone
}

TEST(TinyTokenizerStore, ReportsAnUnwritableCacheNamingThePath) {
  TempDir scratch;
  // A regular file where a directory should be: fails for every user, root included.
  write_bytes(scratch.path() / "blocker", "");
  const fs::path hub = scratch.path() / "blocker" / "hub";
  expect_error_naming([&] { ensure_tiny_tokenizer(hub, TinyTokenizer::sentencepiece); }, hub / repo_folder);
}

TEST(TinyTokenizerStore, RefusesAnEmptyCachePath) {
  EXPECT_THROW(ensure_tiny_tokenizer(fs::path(), TinyTokenizer::sentencepiece), tinker::error);
  EXPECT_THROW(ensure_tiny_tokenizer(fs::path(), TinyTokenizer::byte_level_bpe), tinker::error);
}

TEST(TinyTokenizerStore, LoadRefusesAFileThatIsNotAModelNamingIt) {
  TempDir dir;
  write_bytes(dir.path() / "tokenizer.model", "this is not a sentencepiece model");
  expect_error_naming([&] { LocalTokenizer::load("x", dir.path() / "tokenizer.model"); },
                      dir.path() / "tokenizer.model");
  expect_error_naming([&] { LocalTokenizer::load("x", dir.path() / "missing.model"); }, dir.path() / "missing.model");
}

TEST(TinyBpeTokenizerStore, InstallsTokenizerJsonUnderItsIdAndAliasesByteIdenticallyAndOnce) {
  TempDir first;
  TempDir second;
  const std::vector<std::string> aliases{"tinker-local/tiny-lm", "tinker-local/other"};
  const auto a = ensure_tiny_tokenizer(first.path(), TinyTokenizer::byte_level_bpe, {}, aliases);
  const auto b = ensure_tiny_tokenizer(second.path(), TinyTokenizer::byte_level_bpe);
  EXPECT_EQ(a->id(), tiny_bpe_tokenizer_id);
  EXPECT_EQ(a->kind(), TinyTokenizer::byte_level_bpe);
  const fs::path repo = first.path() / "models--tinker-local--tiny-bpe-1k";
  const std::string revision = read_bytes(repo / "refs" / "main");
  EXPECT_EQ(a->model_file(), repo / "snapshots" / revision / "tokenizer.json");
  EXPECT_EQ(directory_names(repo / "snapshots" / revision),
            (std::vector<std::string>{"tokenizer.json", "tokenizer_config.json"}));
  for (const char* alias : {"models--tinker-local--tiny-lm", "models--tinker-local--other"}) {
    EXPECT_EQ(read_bytes(first.path() / alias / "refs" / "main"), revision) << alias;
  }
  // Same bytes, same revision in another cache (the revision is a hash of the files).
  EXPECT_EQ(b->model_file().parent_path().filename(), revision);
  for (const char* name : {"tokenizer.json", "tokenizer_config.json"}) {
    EXPECT_TRUE(read_bytes(a->model_file().parent_path() / name) == read_bytes(b->model_file().parent_path() / name))
        << name;
  }
  const int runs = detail::tiny_bpe_training_runs();
  EXPECT_LE(runs, 1);  // once per process at most
  EXPECT_EQ(ensure_tiny_tokenizer(first.path(), TinyTokenizer::byte_level_bpe)->model_file(), a->model_file());
  EXPECT_EQ(detail::tiny_bpe_training_runs(), runs);
}

TEST(TinyBpeTokenizerStore, AnAliasHoldingTheSentencePieceSnapshotMovesToTheBpeOne) {
  // An older build installed the SentencePiece snapshot under tinker-local/tiny-lm.
  TempDir hub;
  const std::vector<std::string> alias{"tinker-local/tiny-lm"};
  ensure_tiny_tokenizer(hub.path(), TinyTokenizer::sentencepiece, {}, alias);
  const fs::path repo = hub.path() / "models--tinker-local--tiny-lm";
  const std::string old_revision = read_bytes(repo / "refs" / "main");
  const auto bpe = ensure_tiny_tokenizer(hub.path(), TinyTokenizer::byte_level_bpe, {}, alias);
  const std::string revision = read_bytes(repo / "refs" / "main");
  EXPECT_NE(revision, old_revision);
  EXPECT_EQ(revision, bpe->model_file().parent_path().filename());
  EXPECT_TRUE(fs::is_regular_file(repo / "snapshots" / revision / "tokenizer.json"));
  EXPECT_TRUE(fs::is_directory(repo / "snapshots" / old_revision));  // other revisions are left alone
}

TEST(CatalogueTokenizers, EachKindIsInstalledUnderItsIdAndItsTinkerLocalModelsNames) {
  ServerOptions options;
  EXPECT_EQ(tokenizer_repos(options, TinyTokenizer::byte_level_bpe),
            (std::vector<std::string>{"tinker-local/tiny-bpe-1k", "tinker-local/tiny-lm"}));
  EXPECT_EQ(tokenizer_repos(options, TinyTokenizer::sentencepiece),
            (std::vector<std::string>{"tinker-local/tiny-sp-1k", "tinker-local/tiny-lm-sp"}));
  options.catalogue = {CatalogueEntry("acme/tiny", 512)};
  EXPECT_EQ(tokenizer_repos(options, TinyTokenizer::byte_level_bpe),
            std::vector<std::string>{"tinker-local/tiny-bpe-1k"});
  EXPECT_TRUE(tokenizer_repos(options, TinyTokenizer::sentencepiece).empty());

  TempDir hub;
  const LocalTokenizers tokenizers = ensure_catalogue_tokenizers(hub.path(), options);
  ASSERT_NE(tokenizers.byte_level_bpe, nullptr);
  EXPECT_EQ(tokenizers.sentencepiece, nullptr);
  EXPECT_FALSE(fs::exists(hub.path() / "models--tinker-local--tiny-sp-1k"));
}

TEST(DefaultHfHubCache, FollowsHuggingFaceHubResolutionOrder) {
  EnvOverride hub_cache("HF_HUB_CACHE", "/cache/explicit");
  EnvOverride legacy("HUGGINGFACE_HUB_CACHE", "/cache/legacy");
  EnvOverride hf_home("HF_HOME", "/cache/hf-home");
  EnvOverride xdg("XDG_CACHE_HOME", "/cache/xdg");
  EnvOverride home("HOME", "/home/someone");
  EXPECT_EQ(default_hf_hub_cache(), fs::path("/cache/explicit"));
  {
    EnvOverride unset("HF_HUB_CACHE", std::nullopt);
    EXPECT_EQ(default_hf_hub_cache(), fs::path("/cache/legacy"));
    EnvOverride unset_legacy("HUGGINGFACE_HUB_CACHE", std::nullopt);
    EXPECT_EQ(default_hf_hub_cache(), fs::path("/cache/hf-home/hub"));
    EnvOverride unset_home("HF_HOME", "");  // empty counts as unset
    EXPECT_EQ(default_hf_hub_cache(), fs::path("/cache/xdg/huggingface/hub"));
    EnvOverride unset_xdg("XDG_CACHE_HOME", std::nullopt);
    EXPECT_EQ(default_hf_hub_cache(), fs::path("/home/someone/.cache/huggingface/hub"));
    EnvOverride tilde("HF_HOME", "~/hf");
    EXPECT_EQ(default_hf_hub_cache(), fs::path("/home/someone/hf/hub"));
    EnvOverride unset_tilde("HF_HOME", std::nullopt);
    EnvOverride no_home("HOME", std::nullopt);
    EXPECT_THROW(default_hf_hub_cache(), tinker::error);
  }
  EXPECT_EQ(default_hf_hub_cache(), fs::path("/cache/explicit"));  // restored
}

}  // namespace
}  // namespace tinker::local
