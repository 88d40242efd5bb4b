// Downloading tokenizers from a Hugging Face Hub: tinker-local's Hub-compatible resolve endpoint
// as HF_ENDPOINT and a fresh hub cache per test. The layout written (blobs, relative snapshot
// links, refs), no request on a second load, HF_HUB_OFFLINE, a body cut half-way, 401 with and
// without HF_TOKEN, pinned revisions, and TrainingClient::get_tokenizer downloading: a
// tokenizer.json for the byte-level BPE models, a SentencePiece model for tinker-local/tiny-lm-sp.
#include "integration/support/local_service.hpp"
#include "support/temp_files.hpp"

#include <tinker/error.hpp>
#include <tinker/service_client.hpp>
#include <tinker/tokenizer.hpp>
#include <tinker/tokenizer_hub.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace tinker::test {
namespace {

namespace asio = boost::asio;
using local::FaultKind;
using local::FaultRule;
using local::RequestRecord;
namespace fs = std::filesystem;

constexpr std::string_view repo_id = "tinker-local/tiny-bpe-1k";
constexpr std::string_view sp_repo_id = "tinker-local/tiny-sp-1k";
constexpr std::string_view sp_model = "tinker-local/tiny-lm-sp";
constexpr std::string_view sample_text = "The Hare and the Tortoise agreed to a race.";

EnvLookup environment(std::map<std::string, std::string> variables) {
  return [variables = std::move(variables)](std::string_view name) -> std::optional<std::string> {
    const auto it = variables.find(std::string(name));
    if (it == variables.end()) return std::nullopt;
    return it->second;
  };
}

// Every file under `dir` whose name says it is unfinished.
std::vector<fs::path> temporary_files(const fs::path& dir) {
  std::vector<fs::path> found;
  if (!fs::exists(dir)) return found;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with(".tmp-") || name.ends_with(".incomplete")) found.push_back(entry.path());
  }
  return found;
}

class HubDownload : public LocalService {
 protected:
  // The variables of a fresh cache pointed at the server, plus `extra`.
  EnvLookup env(std::map<std::string, std::string> extra = {}) const {
    extra.emplace("HF_HUB_CACHE", cache.path().string());
    extra.emplace("HF_ENDPOINT", server->base_url());
    return environment(std::move(extra));
  }

  // Hub requests the server has seen (its arrival log).
  std::vector<RequestRecord> hub_requests() const {
    std::vector<RequestRecord> hub;
    for (RequestRecord& record : server->audit().requests) {
      if (record.path.find("/resolve/") != std::string::npos) hub.push_back(std::move(record));
    }
    return hub;
  }

  // The server's own install: its snapshot directory is named by the commit it serves.
  std::string served_commit() const { return server->tokenizer_file().parent_path().filename().string(); }

  fs::path repo_folder() const { return cache.path() / "models--tinker-local--tiny-bpe-1k"; }

  // Runs `load`, expecting a tinker::error; returns it.
  template <class Load>
  static tinker::error failure_of(Load&& load) {
    try {
      load();
    } catch (const tinker::error& e) {
      return e;
    }
    ADD_FAILURE() << "the load succeeded";
    return tinker::error(errc::invalid_argument, "no failure");
  }

  static void expect_round_trip(const Tokenizer& tokenizer) {
    const std::vector<TokenId> ids = tokenizer.encode(sample_text);
    EXPECT_FALSE(ids.empty());
    EXPECT_EQ(tokenizer.decode(ids), sample_text);
  }

  TempDir cache;
};

TEST_F(HubDownload, AFreshCacheDownloadsIntoTheHubLayout) {
  const auto tokenizer = load_tokenizer(TokenizerRef(std::string(repo_id)), env());
  expect_round_trip(*tokenizer);

  const std::string commit = served_commit();
  EXPECT_EQ(read_file(repo_folder() / "refs/main"), commit);  // no newline, as huggingface_hub writes it
  const fs::path snapshot = repo_folder() / "snapshots" / commit;
  EXPECT_EQ(tokenizer->file(), snapshot / "tokenizer.json");
  EXPECT_EQ(tokenizer->format(), TokenizerFormat::tokenizer_json);
  EXPECT_EQ(tokenizer->eos_id(), tokenizer->token_to_id("<|im_end|>"));  // tokenizer_config.json came along
  for (const char* name : {"tokenizer.json", "tokenizer_config.json"}) {
    const fs::path link = snapshot / name;
    ASSERT_TRUE(fs::is_symlink(link)) << link;
    const fs::path target = fs::read_symlink(link);
    EXPECT_EQ(target.parent_path(), fs::path("../../blobs")) << target;
    EXPECT_TRUE(fs::is_regular_file(repo_folder() / "blobs" / target.filename())) << target;
    EXPECT_EQ(read_file(link), read_file(server->tokenizer_file().parent_path() / name)) << name;
  }
  EXPECT_FALSE(fs::exists(snapshot / "chat_template.jinja"));  // 404: the repo has none
  EXPECT_FALSE(fs::exists(snapshot / "special_tokens_map.json"));
  EXPECT_TRUE(temporary_files(cache.path()).empty());

  // tokenizer.json, then the companions at the commit just named (two of them 404).
  const std::vector<RequestRecord> requests = hub_requests();
  ASSERT_EQ(requests.size(), 4u);
  EXPECT_EQ(requests[0].path, "/tinker-local/tiny-bpe-1k/resolve/main/tokenizer.json");
  EXPECT_EQ(requests[0].status, 200);
  EXPECT_EQ(requests[1].path, "/tinker-local/tiny-bpe-1k/resolve/" + commit + "/tokenizer_config.json");
  EXPECT_EQ(requests[1].status, 200);
  EXPECT_FALSE(requests[0].credentials);  // no HF_TOKEN, no Authorization
}

TEST_F(HubDownload, TheSentencePieceRepoDownloadsItsModelAfterATokenizerJson404) {
  const auto tokenizer = load_tokenizer(TokenizerRef(std::string(sp_repo_id)), env());
  expect_round_trip(*tokenizer);
  EXPECT_EQ(tokenizer->format(), TokenizerFormat::sentencepiece);
  const fs::path served = server->tokenizer_file(sp_model);
  EXPECT_EQ(served.filename(), "tokenizer.model");
  const std::string commit = served.parent_path().filename().string();
  const fs::path snapshot = cache.path() / "models--tinker-local--tiny-sp-1k/snapshots" / commit;
  EXPECT_EQ(tokenizer->file(), snapshot / "tokenizer.model");
  for (const char* name : {"tokenizer.model", "tokenizer_config.json", "special_tokens_map.json"}) {
    EXPECT_EQ(read_file(snapshot / name), read_file(served.parent_path() / name)) << name;
  }
  const std::vector<RequestRecord> requests = hub_requests();
  ASSERT_EQ(requests.size(), 5u);
  EXPECT_EQ(requests[0].path, "/tinker-local/tiny-sp-1k/resolve/main/tokenizer.json");
  EXPECT_EQ(requests[0].status, 404);
  EXPECT_EQ(requests[1].path, "/tinker-local/tiny-sp-1k/resolve/main/tokenizer.model");
  EXPECT_EQ(requests[1].status, 200);
  EXPECT_EQ(requests[2].path, "/tinker-local/tiny-sp-1k/resolve/" + commit + "/tokenizer_config.json");
}

TEST_F(HubDownload, EachTinkerLocalModelNameServesItsOwnTokenizer) {
  // A SamplingClient looks a tokenizer up by base model name: each name is a repo of its own.
  const auto bpe = load_tokenizer(TokenizerRef(std::string(tiny_model)), env());
  const auto sp = load_tokenizer(TokenizerRef(std::string(sp_model)), env());
  EXPECT_EQ(bpe->format(), TokenizerFormat::tokenizer_json);
  EXPECT_EQ(sp->format(), TokenizerFormat::sentencepiece);
  EXPECT_EQ(bpe->vocab_size(), 1024);
  EXPECT_EQ(sp->vocab_size(), 1024);
  expect_round_trip(*bpe);
  expect_round_trip(*sp);
}

TEST_F(HubDownload, ASecondLoadMakesNoRequest) {
  const auto first = load_tokenizer(TokenizerRef(std::string(repo_id)), env());
  const std::size_t after_first = hub_requests().size();
  EXPECT_GT(after_first, 0u);
  const auto second = load_tokenizer(TokenizerRef(std::string(repo_id)), env());  // not the process cache
  EXPECT_NE(first, second);
  EXPECT_EQ(second->file(), first->file());
  EXPECT_EQ(hub_requests().size(), after_first);
}

TEST_F(HubDownload, OfflineWithAnEmptyCacheFailsNamingEveryPlaceLookedAt) {
  TempDir path_dir;
  const auto e = failure_of([&] {
    load_tokenizer(TokenizerRef(std::string(repo_id)),
                   env({{"HF_HUB_OFFLINE", "1"}, {"TINKER_TOKENIZER_PATH", path_dir.path().string()}}));
  });
  const std::string message = e.what();
  EXPECT_EQ(e.code(), errc::invalid_configuration);
  EXPECT_NE(message.find("HF_HUB_OFFLINE"), std::string::npos) << message;
  for (const fs::path& place :
       {path_dir.path() / repo_id / "tokenizer.json", path_dir.path() / repo_id / "tokenizer.model",
        path_dir.path() / repo_id / "tiktoken.model", path_dir.path() / "models--tinker-local--tiny-bpe-1k/refs/main",
        path_dir.path() / "tokenizer.json", repo_folder() / "refs/main"}) {
    EXPECT_NE(message.find(place.string()), std::string::npos) << place << "\n" << message;
  }
  EXPECT_TRUE(hub_requests().empty());
  EXPECT_FALSE(fs::exists(repo_folder()));
}

TEST_F(HubDownload, ABodyCutHalfWayLeavesNoUsableFileAndARetrySucceeds) {
  FaultRule cut_every_time("tokenizer.json", FaultKind::truncated_body);
  cut_every_time.probability = 1.0;  // every attempt, resumptions included
  server->set_faults({cut_every_time});
  const auto e = failure_of([&] { load_tokenizer(TokenizerRef(std::string(repo_id)), env()); });
  EXPECT_NE(std::string(e.what()).find("tokenizer.json"), std::string::npos) << e.what();
  std::size_t cut = 0;
  for (const RequestRecord& record : hub_requests()) cut += record.fault == "truncated_body" ? 1 : 0;
  EXPECT_GE(cut, 1u);

  // Nothing a search takes for a tokenizer, nothing half-written left behind.
  EXPECT_FALSE(fs::exists(repo_folder() / "refs/main"));
  EXPECT_FALSE(fs::exists(repo_folder() / "snapshots" / served_commit() / "tokenizer.json"));
  EXPECT_TRUE(temporary_files(cache.path()).empty());
  const auto offline = failure_of([&] {
    find_tokenizer_file(TokenizerRef(std::string(repo_id)), env({{"HF_HUB_OFFLINE", "1"}}));
  });
  EXPECT_EQ(offline.code(), errc::invalid_configuration);

  server->set_faults({});
  const auto tokenizer = load_tokenizer(TokenizerRef(std::string(repo_id)), env());
  expect_round_trip(*tokenizer);
  EXPECT_EQ(read_file(repo_folder() / "refs/main"), served_commit());
}

TEST_F(HubDownload, PinnedRevisionsDownloadTheirCommitAndUnknownOnesSayThereIsNoTokenizer) {
  const std::string commit = served_commit();
  const auto tokenizer = load_tokenizer(TokenizerRef(std::string(repo_id), commit), env());
  EXPECT_EQ(tokenizer->file(), repo_folder() / "snapshots" / commit / "tokenizer.json");
  EXPECT_FALSE(fs::exists(repo_folder() / "refs/main"));  // only a branch name gets a ref
  EXPECT_FALSE(fs::exists(repo_folder() / "refs" / commit));

  const std::string unknown(40, 'e');
  const auto e = failure_of([&] { load_tokenizer(TokenizerRef(std::string(repo_id), unknown), env()); });
  const std::string message = e.what();
  EXPECT_EQ(e.code(), errc::not_found);
  EXPECT_NE(message.find("has no tokenizer for \"tinker-local/tiny-bpe-1k\" at revision " + unknown), std::string::npos)
      << message;
  EXPECT_NE(message.find("RevisionNotFound"), std::string::npos) << message;
}

TEST_F(HubDownload, AnUnknownRepoSaysTheHubHasNoTokenizer) {
  const auto e = failure_of([&] { load_tokenizer(TokenizerRef("tinker-local/no-such-model"), env()); });
  const std::string message = e.what();
  EXPECT_EQ(e.code(), errc::not_found);
  EXPECT_NE(message.find("no tokenizer"), std::string::npos) << message;
  EXPECT_NE(message.find("RepoNotFound"), std::string::npos) << message;
  EXPECT_NE(message.find((cache.path() / "models--tinker-local--no-such-model/refs/main").string()), std::string::npos)
      << message;
}

class GatedHubDownload : public HubDownload {
 protected:
  local::ServerOptions server_options() const override {
    local::ServerOptions options = fast_server_options();
    options.hub_requires_token = true;
    return options;
  }
};

TEST_F(GatedHubDownload, A401NamesHfTokenAndNeverItsValue) {
  const auto unset = failure_of([&] { load_tokenizer(TokenizerRef(std::string(repo_id)), env()); });
  EXPECT_EQ(unset.code(), errc::authentication_failed);
  EXPECT_NE(std::string(unset.what()).find("HF_TOKEN is not set"), std::string::npos) << unset.what();

  const std::string token = "hf_not-an-accepted-token-5d41402abc4b2a76";
  const auto refused = failure_of([&] {
    load_tokenizer(TokenizerRef(std::string(repo_id)), env({{"HF_TOKEN", token}}));
  });
  const std::string message = refused.what();
  EXPECT_EQ(refused.code(), errc::authentication_failed);
  EXPECT_NE(message.find("HF_TOKEN"), std::string::npos) << message;
  EXPECT_EQ(message.find(token), std::string::npos) << message;
  EXPECT_EQ(refused.diag().body_excerpt.find(token), std::string::npos);
  EXPECT_FALSE(fs::exists(repo_folder() / "refs/main"));

  const auto tokenizer =
      load_tokenizer(TokenizerRef(std::string(repo_id)), env({{"HF_TOKEN", std::string(test_api_key)}}));
  expect_round_trip(*tokenizer);
  EXPECT_TRUE(hub_requests().back().credentials);
}

// TrainingClient::get_tokenizer() reads the process environment: a fresh HF_HUB_CACHE and
// HF_ENDPOINT for the test, and tokenizer ids of its own, so no earlier load in this process
// (the process-wide cache) or install (the shared hub cache) can answer instead of the Hub.
class ClientHubDownload : public HubDownload {
 protected:
  static constexpr const char* own_id = "tinker-local/tiny-bpe-1k-hub-client";
  static constexpr const char* own_sp_id = "tinker-local/tiny-sp-1k-hub-client";

  local::ServerOptions server_options() const override {
    local::ServerOptions options = fast_server_options();
    options.bpe_tokenizer_id = own_id;
    options.sp_tokenizer_id = own_sp_id;
    return options;
  }
  void SetUp() override {
    HubDownload::SetUp();
    ::setenv("HF_HUB_CACHE", cache.path().c_str(), 1);
    ::setenv("HF_ENDPOINT", server->base_url().c_str(), 1);
    ::unsetenv("HF_HUB_OFFLINE");
  }
  void TearDown() override {
    ::setenv("HF_HUB_CACHE", shared_hf_hub_cache().c_str(), 1);
    ::unsetenv("HF_ENDPOINT");
    ::setenv("HF_HUB_OFFLINE", "1", 1);
    HubDownload::TearDown();
  }
};

asio::awaitable<std::shared_ptr<const Tokenizer>> tokenizer_of_a_new_model(ServiceClient& service,
                                                                           std::string base_model) {
  const LoraTrainingOptions options(std::move(base_model), 4);
  TrainingClient training = co_await service.async_create_lora_training_client(options, use_awaitable);
  std::shared_ptr<const Tokenizer> tokenizer = co_await training.async_get_tokenizer(use_awaitable);
  co_return tokenizer;
}

TEST_F(ClientHubDownload, TrainingClientGetTokenizerDownloadsFromTheHub) {
  auto service = make_service_client();
  const auto tokenizer = run(tokenizer_of_a_new_model(*service, std::string(tiny_model)));
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_EQ(tokenizer->id(), own_id);
  EXPECT_EQ(tokenizer->format(), TokenizerFormat::tokenizer_json);
  EXPECT_EQ(tokenizer->file().filename(), "tokenizer.json");
  EXPECT_EQ(tokenizer->file().string().rfind(cache.path().string(), 0), 0u) << tokenizer->file();
  expect_round_trip(*tokenizer);
  EXPECT_FALSE(hub_requests().empty());
  EXPECT_TRUE(fs::is_symlink(tokenizer->file()));
}

TEST_F(ClientHubDownload, TheSentencePieceModelsTokenizerDownloadsAsSentencePiece) {
  auto service = make_service_client();
  const auto tokenizer = run(tokenizer_of_a_new_model(*service, std::string(sp_model)));
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_EQ(tokenizer->id(), own_sp_id);
  EXPECT_EQ(tokenizer->format(), TokenizerFormat::sentencepiece);
  EXPECT_EQ(tokenizer->file().string().rfind(cache.path().string(), 0), 0u) << tokenizer->file();
  EXPECT_TRUE(fs::is_symlink(tokenizer->file()));
  expect_round_trip(*tokenizer);
}

}  // namespace
}  // namespace tinker::test
