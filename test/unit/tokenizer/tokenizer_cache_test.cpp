// The tokenizer cache: one instance per resolved id and revision, created exactly once under a
// race, failures not remembered, different ids loading in parallel; and get_tokenizer_for end to
// end on tinker-local's hub layout.
#include "support/tokenizer_test_support.hpp"

#include <tinker/error.hpp>
#include <tinker/tokenizer.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using tinker::EnvLookup;
using tinker::Tokenizer;
using tinker::TokenizerCache;
using tinker::TokenizerRef;
using tinker::test::environment;
using tinker::test::install_in_hub;
using tinker::test::TempDir;

constexpr std::string_view commit = "0123456789abcdef0123456789abcdef01234567";

// A hub cache holding the tiny model under the given ids.
class TokenizerCacheTest : public ::testing::Test {
 protected:
  void install(std::string_view id, std::string_view at = commit, std::string_view ref = "main") {
    install_in_hub(hub.path(), id, at, {{"tokenizer.model", tinker::test::tiny_model_bytes()}}, ref);
  }

  // Offline: a tokenizer missing on disk fails at once instead of being asked of the public Hub.
  EnvLookup env() const { return environment({{"HF_HUB_CACHE", hub.path()}, {"HF_HUB_OFFLINE", "1"}}); }

  TempDir hub;
};

// Counts the loads it forwards to the real loader.
class CountingLoader {
 public:
  TokenizerCache::Loader loader() {
    return [this](const TokenizerRef& ref, const EnvLookup& env) {
      ++loads;
      std::this_thread::sleep_for(delay);  // widens the window in which a second load could start
      return tinker::load_tokenizer(ref, env);
    };
  }

  std::atomic<int> loads{0};
  std::chrono::milliseconds delay{0};
};

TEST_F(TokenizerCacheTest, SameIdGivesTheSameInstance) {
  install("org/tok");
  CountingLoader counter;
  TokenizerCache cache(counter.loader());
  const auto first = cache.get(TokenizerRef("org/tok"), env());
  const auto second = cache.get(TokenizerRef("org/tok"), env());
  EXPECT_EQ(first, second);
  EXPECT_EQ(first->id(), "org/tok");
  EXPECT_EQ(counter.loads, 1);
  EXPECT_EQ(cache.size(), 1u);
}

TEST_F(TokenizerCacheTest, ModelNamesResolvingToOneIdShareAnInstance) {
  install("org/model");
  TokenizerCache cache;
  const auto from_variant = cache.get("org/model/variant:run-1", std::nullopt, env());
  const auto from_name = cache.get("org/model", std::nullopt, env());
  const auto from_id = cache.get("other/base-model", "org/model:x", env());
  EXPECT_EQ(from_variant, from_name);
  EXPECT_EQ(from_variant, from_id);
  EXPECT_EQ(cache.size(), 1u);
}

TEST_F(TokenizerCacheTest, DifferentIdsAndRevisionsAreDifferentInstances) {
  const std::string other_commit(40, 'c');
  install("org/a");
  install("org/b");
  install("org/a", other_commit, "");
  TokenizerCache cache;
  const auto a = cache.get(TokenizerRef("org/a"), env());
  const auto b = cache.get(TokenizerRef("org/b"), env());
  const auto a_pinned = cache.get(TokenizerRef("org/a", other_commit), env());
  EXPECT_NE(a, b);
  EXPECT_NE(a, a_pinned);
  EXPECT_EQ(a_pinned->file().parent_path().filename(), other_commit);
  EXPECT_EQ(cache.size(), 3u);
}

TEST_F(TokenizerCacheTest, FailedLoadIsNotRemembered) {
  CountingLoader counter;
  TokenizerCache cache(counter.loader());
  EXPECT_THROW(cache.get(TokenizerRef("org/late"), env()), tinker::error);
  EXPECT_EQ(cache.size(), 0u);
  install("org/late");
  const auto loaded = cache.get(TokenizerRef("org/late"), env());
  ASSERT_NE(loaded, nullptr);
  EXPECT_EQ(counter.loads, 2);
  EXPECT_EQ(cache.get(TokenizerRef("org/late"), env()), loaded);
  EXPECT_EQ(counter.loads, 2);
}

// Runs `body(i)` on `count` threads released together; returns when all are done.
void race(int count, const std::function<void(int)>& body) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < count; ++i) {
    threads.emplace_back([&, i] {
      ++ready;
      while (!go) std::this_thread::yield();
      body(i);
    });
  }
  while (ready < count) std::this_thread::yield();
  go = true;
  for (auto& thread : threads) thread.join();
}

TEST_F(TokenizerCacheTest, SixteenThreadsAskingAtOnceCreateOneInstance) {
  install("org/raced");
  CountingLoader counter;
  counter.delay = 50ms;
  TokenizerCache cache(counter.loader());
  std::vector<std::shared_ptr<const Tokenizer>> results(16);
  race(16, [&](int i) { results[static_cast<std::size_t>(i)] = cache.get(TokenizerRef("org/raced"), env()); });
  EXPECT_EQ(counter.loads, 1);
  std::set<const Tokenizer*> distinct;
  for (const auto& result : results) distinct.insert(result.get());
  EXPECT_EQ(distinct.size(), 1u);
  EXPECT_NE(*distinct.begin(), nullptr);
}

TEST_F(TokenizerCacheTest, RacersRetryAfterAFailedLoad) {
  install("org/flaky");
  std::atomic<int> loads{0};
  TokenizerCache cache([&](const TokenizerRef& ref, const EnvLookup& env) -> std::shared_ptr<const Tokenizer> {
    if (++loads == 1) {
      std::this_thread::sleep_for(20ms);
      throw tinker::error(tinker::errc::invalid_configuration, "first load fails");
    }
    return tinker::load_tokenizer(ref, env);
  });
  std::atomic<int> failures{0};
  std::vector<std::shared_ptr<const Tokenizer>> results(16);
  race(16, [&](int i) {
    try {
      results[static_cast<std::size_t>(i)] = cache.get(TokenizerRef("org/flaky"), env());
    } catch (const tinker::error&) {
      ++failures;
    }
  });
  EXPECT_EQ(failures, 1);
  EXPECT_EQ(loads, 2);
  std::set<const Tokenizer*> pointers;
  for (const auto& result : results) pointers.insert(result.get());
  EXPECT_EQ(pointers.size(), 2u);  // the failed caller's nullptr, and the one instance
}

// A load of one id must not hold up the load of another: the first loader waits (bounded) for
// the second to finish. With one lock around every load, the second could not start and the wait
// would time out.
TEST_F(TokenizerCacheTest, DifferentIdsLoadInParallel) {
  install("org/slow");
  install("org/fast");
  std::mutex mutex;
  std::condition_variable changed;
  bool slow_started = false;
  bool fast_done = false;
  bool slow_saw_fast = false;
  TokenizerCache cache([&](const TokenizerRef& ref, const EnvLookup& env) {
    if (ref.id == "org/slow") {
      std::unique_lock lock(mutex);
      slow_started = true;
      changed.notify_all();
      slow_saw_fast = changed.wait_for(lock, 5s, [&] { return fast_done; });
    }
    auto tokenizer = tinker::load_tokenizer(ref, env);
    if (ref.id == "org/fast") {
      std::lock_guard lock(mutex);
      fast_done = true;
      changed.notify_all();
    }
    return tokenizer;
  });
  std::thread slow([&] { cache.get(TokenizerRef("org/slow"), env()); });
  {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return slow_started; });  // the slow load is in progress
  }
  cache.get(TokenizerRef("org/fast"), env());
  slow.join();
  EXPECT_TRUE(slow_saw_fast);
  EXPECT_EQ(cache.size(), 2u);
}

TEST_F(TokenizerCacheTest, EmptyLoaderIsRejected) {
  EXPECT_THROW(TokenizerCache(TokenizerCache::Loader{}), tinker::error);
}

// End to end: what TrainingClient::get_tokenizer() will do with get_info's answer from
// tinker-local, whose tokenizer sits in the hub cache under HF_HOME.
TEST(TokenizerForModel, FindsTinkerLocalsTokenizerThroughTheProcessWideCache) {
  TempDir home;
  install_in_hub(home.path() / "hub", "tinker-local/tiny-sp-1k", commit,
                 {{"tokenizer.model", tinker::test::tiny_model_bytes()}});
  const auto env = environment({{"HF_HOME", home.path()}});
  const auto tokenizer = tinker::get_tokenizer_for("Qwen/Qwen3-8B", "tinker-local/tiny-sp-1k", env);
  EXPECT_EQ(tokenizer->id(), "tinker-local/tiny-sp-1k");
  EXPECT_EQ(tokenizer->file(),
            home.path() / "hub/models--tinker-local--tiny-sp-1k/snapshots" / commit / "tokenizer.model");
  EXPECT_EQ(tokenizer->vocab_size(), tinker::test::tiny_vocab_size);
  EXPECT_EQ(tinker::get_tokenizer_for("Qwen/Qwen3-8B:other", "tinker-local/tiny-sp-1k:x", env), tokenizer);
  EXPECT_EQ(&TokenizerCache::global(), &TokenizerCache::global());
}

TEST(TokenizerForModel, MalformedTokenizerJsonNamesTheFile) {
  TempDir hub;
  const auto snapshot = install_in_hub(hub.path(), "json-only/model", commit, {{"tokenizer.json", "{}"}});
  try {
    tinker::get_tokenizer_for("json-only/model", std::nullopt,
                              environment({{"HF_HUB_CACHE", hub.path()}, {"HF_HUB_OFFLINE", "1"}}));
    FAIL() << "a tokenizer.json without a model loaded";
  } catch (const tinker::error& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.code(), tinker::errc::invalid_configuration);
    EXPECT_NE(message.find((snapshot / "tokenizer.json").string()), std::string::npos) << message;
  }
}

TEST(TokenizerForModel, TiktokenFileGoesToTheTiktokenBackend) {
  TempDir hub;
  install_in_hub(hub.path(), "tiktoken-only/model", commit, {{"tiktoken.model", "x"}});
  try {
    tinker::get_tokenizer_for("tiktoken-only/model", std::nullopt,
                              environment({{"HF_HUB_CACHE", hub.path()}, {"HF_HUB_OFFLINE", "1"}}));
    FAIL() << "a malformed tiktoken file loaded";
  } catch (const tinker::error& e) {
    // The tiktoken backend read it: its error names the file and the line.
    EXPECT_EQ(e.code(), tinker::errc::invalid_configuration);
    EXPECT_NE(std::string(e.what()).find("tiktoken.model: line 1:"), std::string::npos) << e.what();
  }
}

TEST(TokenizerForModel, MissingTokenizerErrorListsWhereItLookedWhenOffline) {
  TempDir hub;
  TempDir path_dir;
  try {
    tinker::get_tokenizer_for(
        "absent/model", std::nullopt,
        environment(
            {{"HF_HUB_CACHE", hub.path()}, {"TINKER_TOKENIZER_PATH", path_dir.path()}, {"HF_HUB_OFFLINE", "1"}}));
    FAIL() << "found a tokenizer that does not exist";
  } catch (const tinker::error& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.code(), tinker::errc::invalid_configuration);
    EXPECT_NE(message.find("HF_HUB_OFFLINE is set, so nothing was downloaded"), std::string::npos) << message;
    EXPECT_NE(message.find((hub.path() / "models--absent--model/refs/main").string()), std::string::npos) << message;
    EXPECT_NE(message.find((path_dir.path() / "absent/model/tokenizer.model").string()), std::string::npos) << message;
    EXPECT_NE(message.find((path_dir.path() / "tokenizer.json").string()), std::string::npos) << message;
  }
}

}  // namespace
