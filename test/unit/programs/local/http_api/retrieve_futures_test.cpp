// doc/local.md#sampling-results-in-batches: POST /api/v1/retrieve_futures (the batched long-poll of a sampling
// session's completions), the sequence ids of sampled sequences, and record_stability_info accepted on asample.
#include "unit/programs/local/support/expectations.hpp"
#include "unit/programs/local/support/local_server.hpp"
#include "unit/programs/local/support/training_steps.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <chrono>
#include <set>
#include <thread>

namespace tinker::local::test {
namespace {

namespace json = boost::json;
using std::chrono::steady_clock;

class HttpApiRetrieveFutures : public LocalServerTest {
 protected:
  void SetUp() override {
    session = api().create_session();
    sampler = create_sampling_session(api(), session, 0, std::string(tiny_model), std::nullopt);
  }

  json::object poll_body(std::int64_t prev_cursor, double timeout, std::int64_t clone = 0) const {
    json::object target{{"type", "sampling_session"}, {"sampling_session_id", sampler}, {"cloned_sampler_id", clone}};
    return json::object{{"target", target}, {"prev_cursor", prev_cursor}, {"timeout", timeout}};
  }

  RawResponse poll_futures(std::int64_t prev_cursor, double timeout, std::int64_t clone = 0) {
    return api().post("/api/v1/retrieve_futures", poll_body(prev_cursor, timeout, clone));
  }

  // Polls from `cursor` until `count` completions were seen (within 30 s); returns them, `cursor` moved on.
  std::vector<json::value> collect(std::int64_t& cursor, std::size_t count, std::int64_t clone = 0) {
    std::vector<json::value> seen;
    const auto deadline = steady_clock::now() + std::chrono::seconds(30);
    while (seen.size() < count && steady_clock::now() < deadline) {
      const RawResponse answer = poll_futures(cursor, 5.0, clone);
      EXPECT_EQ(answer.status, 200) << answer.describe();
      if (answer.status != 200) break;
      const json::value body = answer.json();
      for (const json::value& completion : items(body, "completions")) seen.push_back(completion);
      cursor = field(body, "cursor").as_int64();
    }
    return seen;
  }

  std::string submit_sample(std::int64_t seq_id, std::int64_t max_tokens = 3) {
    return api().submit("/api/v1/asample", sample_body(sampler, seq_id, prompt, 1, max_tokens, 1.0, 5));
  }

  std::string session;
  std::string sampler;
  const Tokens prompt{17, 18, 19};
};

TEST_F(HttpApiRetrieveFutures, ReportsEachCompletionOnceAfterTheCursor) {
  const std::string first = submit_sample(0);
  const std::string second = submit_sample(1);
  std::int64_t cursor = 0;
  const std::vector<json::value> seen = collect(cursor, 2);
  ASSERT_EQ(seen.size(), 2u);
  std::set<std::string> ids;
  for (const json::value& completion : seen) {
    EXPECT_EQ(string_field(completion, "state"), "finished");
    ids.insert(string_field(completion, "request_id"));
  }
  EXPECT_EQ(ids, (std::set<std::string>{first, second}));
  EXPECT_GE(cursor, 2);

  // Nothing new after the cursor: an empty answer with the same cursor once the wait is over.
  const auto started = steady_clock::now();
  const RawResponse empty = poll_futures(cursor, 0.3);
  ASSERT_EQ(empty.status, 200) << empty.describe();
  EXPECT_TRUE(items(empty.json(), "completions").empty());
  EXPECT_EQ(field(empty.json(), "cursor").as_int64(), cursor);
  EXPECT_GE(steady_clock::now() - started, std::chrono::milliseconds(250));

  // Events at or before a cursor are trimmed: starting over from 0 finds nothing.
  const RawResponse trimmed = poll_futures(0, 0.0);
  EXPECT_TRUE(items(trimmed.json(), "completions").empty()) << trimmed.describe();
}

TEST_F(HttpApiRetrieveFutures, ALongPollWakesWhenASampleCompletes) {
  std::unique_ptr<RawHttpClient> waiting = api().new_client();
  RawResponse answer;
  std::chrono::milliseconds waited{0};
  std::thread poller([&] {
    const auto started = steady_clock::now();
    answer = waiting->request("POST", "/api/v1/retrieve_futures", api().auth({{"Content-Type", "application/json"}}),
                              json::serialize(poll_body(0, 20.0)));
    waited = std::chrono::duration_cast<std::chrono::milliseconds>(steady_clock::now() - started);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const std::string id = submit_sample(0);
  poller.join();
  ASSERT_EQ(answer.status, 200) << answer.describe();
  const json::array completions = items(answer.json(), "completions");
  ASSERT_EQ(completions.size(), 1u) << answer.describe();
  EXPECT_EQ(string_field(completions[0], "request_id"), id);
  EXPECT_LT(waited, std::chrono::seconds(15));
}

TEST_F(HttpApiRetrieveFutures, AFailedSampleIsReportedFailedAndItsErrorFetchedNormally) {
  const std::string failing = submit_sample(0, 1'000'000);  // past the tiny model's context
  std::int64_t cursor = 0;
  const std::vector<json::value> seen = collect(cursor, 1);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(string_field(seen[0], "state"), "failed");
  EXPECT_EQ(string_field(seen[0], "request_id"), failing);
  const json::value failure = api().await_failure(failing);
  EXPECT_EQ(string_field(failure, "category"), "user");
}

TEST_F(HttpApiRetrieveFutures, ClonesSeeOnlyTheirOwnRequests) {
  submit_sample(0);
  const std::string clone_request = submit_sample(1'000'000'001);
  std::int64_t clone_cursor = 0;
  const std::vector<json::value> clone_seen = collect(clone_cursor, 1, 1);
  ASSERT_EQ(clone_seen.size(), 1u);
  EXPECT_EQ(string_field(clone_seen[0], "request_id"), clone_request);
  std::int64_t original_cursor = 0;
  const std::vector<json::value> original_seen = collect(original_cursor, 1, 0);
  ASSERT_EQ(original_seen.size(), 1u);
  EXPECT_NE(string_field(original_seen[0], "request_id"), clone_request);
}

TEST_F(HttpApiRetrieveFutures, BadTargetsAreRefused) {
  json::object unknown = poll_body(0, 0.0);
  unknown["target"].as_object()["sampling_session_id"] = "nobody:sample:0";
  EXPECT_EQ(api().post("/api/v1/retrieve_futures", unknown).status, 404);
  EXPECT_EQ(poll_futures(-1, 0.0).status, 400);
  json::object wrong_type = poll_body(0, 0.0);
  wrong_type["target"].as_object()["type"] = "training_run";
  EXPECT_EQ(api().post("/api/v1/retrieve_futures", wrong_type).status, 422);
}

TEST_F(HttpApiRetrieveFutures, SequencesGetSessionScopedIdsAndStabilityInfoIsAccepted) {
  json::object body = sample_body(sampler, 0, prompt, 3, 2, 1.0, 5);
  body["record_stability_info"] = true;
  const json::value first = api().call("/api/v1/asample", body);
  const json::value second = api().call("/api/v1/asample", sample_body(sampler, 1, prompt, 1, 2, 1.0, 5));
  std::set<std::string> ids;
  for (const json::value& result : {first, second}) {
    for (const json::value& sequence : items(result, "sequences")) {
      const std::string id = string_field(sequence, "sequence_id");
      EXPECT_TRUE(id.starts_with(session + ":seq:")) << id;
      ids.insert(id);
    }
  }
  EXPECT_EQ(ids.size(), 4u);
}

}  // namespace
}  // namespace tinker::local::test
