// The repos, refs, commits and LFS objects of tinker-local's Hub upload emulation.
#include "programs/local/server/hub_store.hpp"

#include "programs/local/tokenizer/tokenizer_training.hpp"

#include <gtest/gtest.h>

namespace tinker::local {
namespace {

int refusal_status(const std::function<void()>& call) {
  try {
    call();
  } catch (const HubRefusal& refusal) {
    return refusal.status();
  }
  return 0;
}

HubCommitFile regular(std::string path, std::string content) {
  HubCommitFile file;
  file.path = std::move(path);
  file.content = std::move(content);
  return file;
}

HubCommitFile lfs(std::string path, const std::string& bytes) {
  HubCommitFile file;
  file.path = std::move(path);
  file.lfs_oid = detail::sha256_hex(bytes);
  file.lfs_size = bytes.size();
  return file;
}

class HubStoreTest : public ::testing::Test {
 protected:
  PushedRepo& make(bool is_private = true) {
    store.create_repo("user-a", "user-a", "repo", is_private);
    return store.visible_repo("user-a/repo", "user-a");
  }
  HubStore store;
};

TEST_F(HubStoreTest, ANewRepoHasMainWithGitattributes) {
  const PushedRepo& repo = make();
  const HubCommit* main = repo.resolve("main");
  ASSERT_NE(main, nullptr);
  EXPECT_EQ(main->id.size(), 40u);
  EXPECT_EQ(main->files.count(".gitattributes"), 1u);
  EXPECT_EQ(repo.resolve(main->id), main);
  EXPECT_EQ(refusal_status([&] { store.create_repo("user-a", "user-a", "repo", true); }), 409);
  EXPECT_EQ(refusal_status([&] { store.create_repo("user-a", "someone-else", "repo", true); }), 403);
}

TEST_F(HubStoreTest, PrivateReposAreHiddenFromOthers) {
  make(true);
  EXPECT_EQ(refusal_status([&] { store.visible_repo("user-a/repo", ""); }), 401);
  EXPECT_EQ(refusal_status([&] { store.visible_repo("user-a/repo", "user-b"); }), 404);
  EXPECT_EQ(refusal_status([&] { store.visible_repo("user-a/missing", "user-a"); }), 404);
  store.create_repo("user-a", "user-a", "open", false);
  EXPECT_EQ(store.visible_repo("user-a/open", "").id, "user-a/open");
}

TEST_F(HubStoreTest, CommitsToBranchesAndPullRequests) {
  PushedRepo& repo = make();
  int pr = 0;
  const std::string first = store.commit(repo, "main", false, "one", {regular("a.txt", "A")}, pr);
  EXPECT_EQ(repo.resolve("main")->id, first);
  EXPECT_EQ(*repo.resolve("main")->files.at("a.txt").bytes, "A");
  EXPECT_EQ(repo.resolve("main")->files.at("a.txt").etag, git_blob_id("A"));

  store.create_branch(repo, "dev");
  EXPECT_EQ(refusal_status([&] { store.create_branch(repo, "dev"); }), 409);
  EXPECT_EQ(refusal_status([&] { store.create_branch(repo, "refs/pr/9"); }), 400);
  store.commit(repo, "dev", false, "two", {regular("b.txt", "B")}, pr);
  EXPECT_EQ(repo.resolve("main")->files.count("b.txt"), 0u);
  EXPECT_EQ(repo.resolve("dev")->files.count("a.txt"), 1u);  // a branch starts at main

  const std::string proposed = store.commit(repo, "main", true, "three", {regular("c.txt", "C")}, pr);
  EXPECT_EQ(pr, 1);
  EXPECT_EQ(repo.resolve("refs/pr/1")->id, proposed);
  EXPECT_EQ(repo.resolve("main")->id, first);

  EXPECT_EQ(refusal_status([&] { store.commit(repo, "nope", false, "x", {regular("d", "D")}, pr); }), 404);
  EXPECT_EQ(refusal_status([&] { store.commit(repo, "main", false, "x", {regular("../d", "D")}, pr); }), 400);
  EXPECT_EQ(refusal_status([&] { store.commit(repo, "main", false, "x", {regular(".git/config", "D")}, pr); }), 400);
}

TEST_F(HubStoreTest, LfsObjectsMustBeUploadedWholeAndRightBeforeACommit) {
  PushedRepo& repo = make();
  const std::string bytes(1000, 'w');
  int pr = 0;
  EXPECT_EQ(refusal_status([&] { store.commit(repo, "main", false, "w", {lfs("w.bin", bytes)}, pr); }), 422);

  const std::string token = store.begin_upload(detail::sha256_hex(bytes), bytes.size(), 0);
  EXPECT_EQ(refusal_status([&] { store.put(token, 0, "wrong bytes"); }), 400);
  store.put(token, 0, bytes);
  EXPECT_TRUE(store.has_lfs_object(detail::sha256_hex(bytes)));
  EXPECT_EQ(refusal_status([&] { store.put(token, 0, bytes); }), 404);  // a finished upload is gone

  store.commit(repo, "main", false, "w", {lfs("w.bin", bytes)}, pr);
  const HubFile& file = repo.resolve("main")->files.at("w.bin");
  EXPECT_EQ(*file.bytes, bytes);
  EXPECT_EQ(file.etag, detail::sha256_hex(bytes));
}

TEST_F(HubStoreTest, MultipartUploadsJoinTheirParts) {
  const std::string bytes = "0123456789";
  const std::string token = store.begin_upload(detail::sha256_hex(bytes), bytes.size(), 4);
  EXPECT_FALSE(store.put(token, 2, "4567").empty());
  store.put(token, 1, "0123");
  EXPECT_EQ(refusal_status([&] { store.complete(token); }), 400);  // part 3 missing: wrong hash
  const std::string again = store.begin_upload(detail::sha256_hex(bytes), bytes.size(), 4);
  store.put(again, 1, "0123");
  store.put(again, 3, "89");
  EXPECT_EQ(refusal_status([&] { store.complete(again); }), 400);  // part 2 missing
  const std::string whole = store.begin_upload(detail::sha256_hex(bytes), bytes.size(), 4);
  store.put(whole, 3, "89");
  store.put(whole, 1, "0123");
  store.put(whole, 2, "4567");
  store.complete(whole);
  EXPECT_TRUE(store.has_lfs_object(detail::sha256_hex(bytes)));
}

TEST(HubStoreUploadMode, WeightsBinariesAndLargeFilesGoThroughLfs) {
  EXPECT_EQ(HubStore::upload_mode("adapter_model.safetensors", 10, "x"), "lfs");
  EXPECT_EQ(HubStore::upload_mode("model.bin", 10, "x"), "lfs");
  EXPECT_EQ(HubStore::upload_mode("README.md", 10, "# card"), "regular");
  EXPECT_EQ(HubStore::upload_mode("data.txt", 10, std::string("a\0b", 3)), "lfs");
  EXPECT_EQ(HubStore::upload_mode("data.txt", 10u << 20, "text"), "lfs");
}

TEST(HubStoreAccount, IsAHubUserName) {
  EXPECT_EQ(HubStore::account_for("urn:user:0123456789abcdef"), "user-0123456789ab");
}

}  // namespace
}  // namespace tinker::local
