// download_model_snapshot (tinker/hub_download.hpp) against a scripted Hugging Face Hub: the
// cache layout written (blobs, relative links, nested files, refs), blobs reused without a
// request, a cut-off download continued with a Range on the next call, 404s and empty pattern
// matches, HF_HUB_OFFLINE, tokens (sent, never printed), and listings a Hub would not send.
#include "support/expect_error.hpp"
#include "support/temp_files.hpp"
#include "support/test_server.hpp"

#include <tinker/error.hpp>
#include <tinker/hub_download.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace tinker {
namespace {

namespace fs = std::filesystem;
using test::RecordedRequest;
using test::ScriptedResponse;
using test::ScriptedServer;
using test::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* commit_id = "0123456789abcdef0123456789abcdef01234567";
constexpr const char* hub_token = "hf_snapshot-test-5ecret-token";

class HubFileBytes {
 public:
  std::string bytes;
  std::string etag;  // 40 hex (git) or 64 hex (LFS)
  bool lfs = false;
};

std::string weights_bytes(std::size_t size) {
  std::string bytes(size, '\0');
  for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>((i * 131u) >> 3);
  return bytes;
}

// A Hub of one repo, "org/model", at one commit: the listing (with or without blob ids), the
// files (Range honoured, bodies cut short on demand), 404s as the Hub words them.
class FakeHub {
 public:
  FakeHub() {
    files["config.json"] = {"{\"model_type\": \"llama\"}", std::string(40, 'c'), false};
    files["model.safetensors"] = {weights_bytes(200'000), std::string(64, 'a'), true};
    files["original/params.json"] = {"{\"dim\": 8}", std::string(40, 'd'), false};
    files["README.md"] = {"# model\n", std::string(40, 'e'), false};
    server.set_handler([this](const RecordedRequest& request) { return answer(request); });
  }

  HubOptions options(const fs::path& cache, bool with_token = true) const {
    HubOptions hub;
    hub.endpoint = server.base_url();
    hub.cache_dir = cache;
    if (with_token) hub.token = Secret(hub_token);
    return hub;
  }

  std::vector<RecordedRequest> requests_for(std::string_view part) const {
    std::vector<RecordedRequest> found;
    for (RecordedRequest& request : server.requests()) {
      if (request.target.find(part) != std::string::npos) found.push_back(std::move(request));
    }
    return found;
  }

  std::mutex mutex;  // the handler runs on the server's thread
  std::map<std::string, HubFileBytes> files;
  bool list_blobs = true;
  bool require_token = false;
  bool cut_bodies = false;
  std::string listed_commit = commit_id;
  std::vector<std::string> extra_listed;  // names listed but not served
  ScriptedServer server;

 private:
  std::string listing() {
    boost::json::object body;
    body["id"] = "org/model";
    body["sha"] = listed_commit;
    boost::json::array siblings;
    for (const auto& [path, file] : files) {
      boost::json::object sibling;
      sibling["rfilename"] = path;
      if (list_blobs) {
        sibling["size"] = file.bytes.size();
        sibling["blobId"] = file.lfs ? std::string(40, 'f') : file.etag;
        if (file.lfs) sibling["lfs"] = boost::json::object{{"sha256", file.etag}, {"size", file.bytes.size()}};
      }
      siblings.push_back(std::move(sibling));
    }
    for (const std::string& path : extra_listed) siblings.push_back(boost::json::object{{"rfilename", path}});
    body["siblings"] = std::move(siblings);
    return boost::json::serialize(body);
  }

  static ScriptedResponse not_found(const std::string& code) {
    ScriptedResponse response(404, "{\"error\":\"" + code + "\"}");
    response.headers = {{"X-Error-Code", code}, {"X-Error-Message", code + " for this test"}};
    return response;
  }

  ScriptedResponse answer(const RecordedRequest& request) {
    std::lock_guard lock(mutex);
    if (require_token &&
        request.header("authorization") != std::optional<std::string>(std::string("Bearer ") + hub_token)) {
      ScriptedResponse refused(401, "{\"error\":\"Invalid credentials\"}");
      refused.headers = {{"X-Error-Message", "Invalid credentials in Authorization header"}};
      return refused;
    }
    const std::string api = "/api/models/org/model/revision/";
    if (request.target.starts_with(api)) {
      const std::string revision = request.target.substr(api.size(), request.target.find('?') - api.size());
      if (revision != "main" && revision != commit_id) return not_found("RevisionNotFound");
      return ScriptedResponse(200, listing());
    }
    if (request.target.starts_with("/api/models/")) return not_found("RepoNotFound");
    const std::string resolve = std::string("/org/model/resolve/") + commit_id + "/";
    if (!request.target.starts_with(resolve)) return not_found("RepoNotFound");
    const auto file = files.find(request.target.substr(resolve.size()));
    if (file == files.end()) return not_found("EntryNotFound");
    return serve(request, file->second);
  }

  ScriptedResponse serve(const RecordedRequest& request, const HubFileBytes& file) const {
    ScriptedResponse response(200, file.bytes);
    response.content_type = "application/octet-stream";
    response.headers = {{"X-Repo-Commit", commit_id}, {file.lfs ? "X-Linked-Etag" : "ETag", "\"" + file.etag + "\""}};
    if (auto range = request.header("range"); range && range->starts_with("bytes=")) {
      const std::size_t first = std::stoul(range->substr(6));
      response.status = 206;
      response.body = file.bytes.substr(first);
      response.headers.emplace_back("Content-Range", "bytes " + std::to_string(first) + "-" +
                                                         std::to_string(file.bytes.size() - 1) + "/" +
                                                         std::to_string(file.bytes.size()));
    }
    response.truncate = cut_bodies && file.lfs;
    return response;
  }
};

// No proxies from the test's own environment.
EnvLookup no_environment() {
  return [](std::string_view) { return std::optional<std::string>(); };
}

const std::vector<std::string> model_patterns = {"*.json", "*.safetensors"};

class SnapshotDownload : public ::testing::Test {
 protected:
  fs::path download(const std::vector<std::string>& patterns = model_patterns, std::string_view revision = "main",
                    const HubSnapshotProgressCallback& progress = {}) {
    return download_model_snapshot("org/model", revision, hub.options(cache.path()), patterns, progress,
                                   no_environment());
  }

  fs::path folder() const { return cache.path() / "models--org--model"; }

  std::vector<fs::path> unfinished() const {
    std::vector<fs::path> found;
    if (!fs::exists(cache.path())) return found;
    for (const auto& entry : fs::recursive_directory_iterator(cache.path())) {
      if (entry.path().filename().string().find(".incomplete") != std::string::npos) found.push_back(entry.path());
    }
    return found;
  }

  FakeHub hub;
  TempDir cache{"tinker-snapshot-test"};
};

TEST_F(SnapshotDownload, WritesTheWantedFilesInTheHubCacheLayout) {
  std::vector<HubSnapshotProgress> reports;
  const fs::path snapshot =
      download(model_patterns, "main", [&reports](const HubSnapshotProgress& p) { reports.push_back(p); });

  EXPECT_EQ(snapshot, folder() / "snapshots" / commit_id);
  EXPECT_EQ(test::read_file(folder() / "refs/main"), commit_id);
  for (const char* name : {"config.json", "model.safetensors", "original/params.json"}) {
    const fs::path link = snapshot / name;
    ASSERT_TRUE(fs::is_symlink(link)) << link;
    EXPECT_EQ(test::read_file(link), hub.files[name].bytes) << name;
    EXPECT_EQ(fs::canonical(link), fs::canonical(folder() / "blobs" / hub.files[name].etag)) << name;
    EXPECT_TRUE(fs::read_symlink(link).is_relative()) << name;
  }
  EXPECT_EQ(fs::read_symlink(snapshot / "original/params.json"), fs::path("../../../blobs") / std::string(40, 'd'));
  EXPECT_FALSE(fs::exists(snapshot / "README.md"));  // not matched
  EXPECT_TRUE(unfinished().empty());

  // One listing at the branch, then each file at the commit it named, with the token.
  const auto listings = hub.requests_for("/api/models/");
  ASSERT_EQ(listings.size(), 1u);
  EXPECT_EQ(listings[0].target, "/api/models/org/model/revision/main?blobs=true");
  const auto files = hub.requests_for("/resolve/");
  ASSERT_EQ(files.size(), 3u);
  for (const RecordedRequest& request : files) {
    EXPECT_THAT(request.target, HasSubstr(std::string("/resolve/") + commit_id + "/"));
    EXPECT_EQ(request.header("authorization"), std::optional<std::string>(std::string("Bearer ") + hub_token));
  }

  ASSERT_FALSE(reports.empty());
  EXPECT_EQ(reports.back().files_total, 3u);
  EXPECT_EQ(reports.back().files_done, 3u);
  EXPECT_EQ(reports.back().files_reused, 0u);
  const std::uint64_t total = hub.files["config.json"].bytes.size() + hub.files["model.safetensors"].bytes.size() +
                              hub.files["original/params.json"].bytes.size();
  EXPECT_EQ(reports.back().bytes_total, total);
  EXPECT_EQ(reports.back().bytes_done, total);
}

TEST_F(SnapshotDownload, BlobsInTheCacheAreNotRequestedAgain) {
  download();
  const std::size_t files_before = hub.requests_for("/resolve/").size();
  std::vector<HubSnapshotProgress> reports;
  const fs::path again =
      download(model_patterns, "main", [&reports](const HubSnapshotProgress& p) { reports.push_back(p); });
  EXPECT_EQ(hub.requests_for("/resolve/").size(), files_before);
  EXPECT_EQ(hub.requests_for("/api/models/").size(), 2u);  // the listing says which commit "main" is now
  EXPECT_EQ(test::read_file(again / "model.safetensors"), hub.files["model.safetensors"].bytes);
  ASSERT_FALSE(reports.empty());
  EXPECT_EQ(reports.back().files_reused, 3u);
  EXPECT_EQ(reports.back().bytes_total, 0u);

  // A file that changed gets a blob of its own; the unchanged weights are shared.
  {
    std::lock_guard lock(hub.mutex);
    hub.files["config.json"] = {"{\"model_type\": \"qwen3\"}", std::string(40, '9'), false};
  }
  download();
  const auto files = hub.requests_for("/resolve/");
  ASSERT_EQ(files.size(), files_before + 1);
  EXPECT_THAT(files.back().target, HasSubstr("config.json"));
}

TEST_F(SnapshotDownload, ACutOffDownloadIsContinuedByTheNextCallWithARange) {
  {
    std::lock_guard lock(hub.mutex);
    hub.cut_bodies = true;  // every answer for the weights stops half-way, resumptions included
  }
  test::expect_tinker_error(errc::request_failed, "model.safetensors", [&] { download(); });
  // The part kept for next time; nothing that looks like a snapshot.
  const fs::path partial = folder() / "blobs" / (std::string(64, 'a') + ".incomplete");
  ASSERT_TRUE(fs::exists(partial));
  const std::uintmax_t kept = fs::file_size(partial);
  EXPECT_GT(kept, 0u);
  EXPECT_LT(kept, hub.files["model.safetensors"].bytes.size());
  EXPECT_FALSE(fs::exists(folder() / "refs/main"));
  EXPECT_FALSE(fs::exists(folder() / "snapshots" / commit_id / "config.json"));

  {
    std::lock_guard lock(hub.mutex);
    hub.cut_bodies = false;
  }
  const std::size_t before = hub.requests_for("model.safetensors").size();
  const fs::path snapshot = download();
  EXPECT_EQ(test::read_file(snapshot / "model.safetensors"), hub.files["model.safetensors"].bytes);
  const auto weights = hub.requests_for("model.safetensors");
  ASSERT_EQ(weights.size(), before + 1);
  EXPECT_EQ(weights.back().header("range"), std::optional<std::string>("bytes=" + std::to_string(kept) + "-"));
  EXPECT_TRUE(unfinished().empty());
}

TEST_F(SnapshotDownload, AProgressCallbackThatThrowsStopsTheDownloadAndKeepsItsPart) {
  const auto cancel_mid_weights = [](const HubSnapshotProgress& p) {
    if (p.file == "model.safetensors" && p.bytes_done > 100'000) throw error(errc::cancelled, "interrupted");
  };
  test::expect_tinker_error(errc::cancelled, "interrupted",
                            [&] { download(model_patterns, "main", cancel_mid_weights); });
  EXPECT_FALSE(fs::exists(folder() / "refs/main"));
  const fs::path snapshot = download();
  EXPECT_EQ(test::read_file(snapshot / "model.safetensors"), hub.files["model.safetensors"].bytes);
}

TEST_F(SnapshotDownload, NotFoundAnswersAndEmptyMatchesSayWhat) {
  test::expect_tinker_error(errc::not_found,
                            "listing the files of org/model at revision v9: the Hugging Face Hub "
                            "answered HTTP 404 (RevisionNotFound)",
                            [&] { download(model_patterns, "v9"); });
  test::expect_tinker_error(errc::not_found, "RepoNotFound", [&] {
    download_model_snapshot("org/other", "main", hub.options(cache.path()), {}, {}, no_environment());
  });
  test::expect_tinker_error(errc::not_found, "org/model at revision main has no file matching *.gguf, *.bin", [&] {
    download({"*.gguf", "*.bin"});
  });
  {
    std::lock_guard lock(hub.mutex);
    hub.extra_listed = {"listed-but-gone.json"};
  }
  test::expect_tinker_error(errc::not_found, "lists listed-but-gone.json in org/model but answered HTTP 404",
                            [&] { download(); });
  EXPECT_FALSE(fs::exists(folder() / "snapshots"));
  EXPECT_FALSE(fs::exists(folder() / "refs"));
}

TEST_F(SnapshotDownload, OfflineUsesTheCacheAndRequestsNothing) {
  HubOptions offline = hub.options(cache.path());
  offline.offline = true;
  test::expect_tinker_error(errc::invalid_configuration, (folder() / "refs/main").string(), [&] {
    download_model_snapshot("org/model", "main", offline, model_patterns, {}, no_environment());
  });
  EXPECT_EQ(hub.server.request_count(), 0u);

  const fs::path online = download();
  const std::size_t requests = hub.server.request_count();
  EXPECT_EQ(download_model_snapshot("org/model", "main", offline, model_patterns, {}, no_environment()), online);
  EXPECT_EQ(download_model_snapshot("org/model", commit_id, offline, {"*.safetensors"}, {}, no_environment()), online);
  test::expect_tinker_error(errc::invalid_configuration, "for *.gguf", [&] {
    download_model_snapshot("org/model", "main", offline, {"*.gguf"}, {}, no_environment());
  });
  EXPECT_EQ(hub.server.request_count(), requests);
}

TEST_F(SnapshotDownload, TokensAreSentAndNeverPrinted) {
  {
    std::lock_guard lock(hub.mutex);
    hub.require_token = true;
  }
  try {
    download_model_snapshot("org/model", "main", hub.options(cache.path(), false), model_patterns, {},
                            no_environment());
    ADD_FAILURE() << "no token, yet the download succeeded";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::authentication_failed);
    EXPECT_THAT(std::string(e.what()), HasSubstr("HF_TOKEN is not set"));
  }
  HubOptions wrong = hub.options(cache.path());
  wrong.token = Secret("hf_wrong-5ecret-value");
  try {
    download_model_snapshot("org/model", "main", wrong, model_patterns, {}, no_environment());
    ADD_FAILURE() << "a refused token, yet the download succeeded";
  } catch (const error& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("the token in HF_TOKEN was refused"));
    EXPECT_THAT(std::string(e.what()), Not(HasSubstr("5ecret")));
    EXPECT_THAT(e.diag().body_excerpt, Not(HasSubstr("5ecret")));
  }
  EXPECT_EQ(test::read_file(download() / "config.json"), hub.files["config.json"].bytes);
}

TEST_F(SnapshotDownload, WithoutBlobIdsTheAnswersETagNamesTheBlob) {
  {
    std::lock_guard lock(hub.mutex);
    hub.list_blobs = false;
  }
  const fs::path snapshot = download();
  EXPECT_EQ(fs::canonical(snapshot / "model.safetensors"), fs::canonical(folder() / "blobs" / std::string(64, 'a')));
  EXPECT_EQ(fs::canonical(snapshot / "config.json"), fs::canonical(folder() / "blobs" / std::string(40, 'c')));
  EXPECT_TRUE(unfinished().empty());
  // Without names the cache cannot tell what it has: every file is fetched again.
  download();
  EXPECT_EQ(hub.requests_for("/resolve/").size(), 6u);
}

TEST_F(SnapshotDownload, ListingsNoHubWouldSendAreRefused) {
  {
    std::lock_guard lock(hub.mutex);
    hub.extra_listed = {"../../escape.json"};
  }
  test::expect_tinker_error(errc::protocol_error, "has a '.' or '..' part: \"../../escape.json\"", [&] { download(); });
  {
    std::lock_guard lock(hub.mutex);
    hub.extra_listed = {"/etc/passwd.json"};
  }
  test::expect_tinker_error(errc::protocol_error, "is absolute", [&] { download(); });
  {
    std::lock_guard lock(hub.mutex);
    hub.extra_listed.clear();
    hub.listed_commit = "../main";
  }
  test::expect_tinker_error(errc::protocol_error, "the commit \"sha\"", [&] { download(); });
  EXPECT_EQ(hub.requests_for("/resolve/").size(), 0u);
  EXPECT_FALSE(fs::exists(cache.path() / "escape.json"));
}

TEST_F(SnapshotDownload, AFileShorterThanListedIsRefusedAndNotKept) {
  // The listing says 12 bytes; the answer has 2 (complete as far as HTTP goes).
  hub.server.set_handler([](const RecordedRequest& request) {
    if (request.target.find("/resolve/") != std::string::npos) {
      ScriptedResponse response(200, "{}");
      response.headers = {{"X-Repo-Commit", commit_id}, {"ETag", "\"" + std::string(40, 'c') + "\""}};
      return response;
    }
    boost::json::array siblings;
    siblings.push_back(
        boost::json::object{{"rfilename", "config.json"}, {"size", 12}, {"blobId", std::string(40, 'c')}});
    const boost::json::object body{{"sha", commit_id}, {"siblings", std::move(siblings)}};
    return ScriptedResponse(200, boost::json::serialize(body));
  });
  test::expect_tinker_error(errc::protocol_error, "received 2 bytes, the Hub's listing says 12", [&] { download(); });
  EXPECT_TRUE(unfinished().empty());
  EXPECT_FALSE(fs::exists(folder() / "blobs" / std::string(40, 'c')));
  EXPECT_FALSE(fs::exists(folder() / "refs/main"));
}

TEST_F(SnapshotDownload, BadIdsAndRevisionsAreRefusedBeforeAnyRequest) {
  test::expect_tinker_error(errc::invalid_argument, "is not a Hugging Face repo id", [&] {
    download_model_snapshot("a/b/c", "main", hub.options(cache.path()), {}, {}, no_environment());
  });
  test::expect_tinker_error(errc::invalid_argument, "the revision '../x'", [&] { download(model_patterns, "../x"); });
  HubOptions no_cache = hub.options(cache.path());
  no_cache.cache_dir.reset();
  test::expect_tinker_error(errc::invalid_configuration, "no Hugging Face hub cache",
                            [&] { download_model_snapshot("org/model", "main", no_cache, {}, {}, no_environment()); });
  EXPECT_EQ(hub.server.request_count(), 0u);
}

}  // namespace
}  // namespace tinker
