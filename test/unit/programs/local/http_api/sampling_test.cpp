// doc/sampling.md, doc/local.md#the-model: asample with and without the backpressure header, JSON
// and protobuf SampleResponse, prompt logprobs, top-k prompt logprobs, stop, max_tokens.
#include "unit/programs/local/support/expectations.hpp"
#include "unit/programs/local/support/local_server.hpp"
#include "unit/programs/local/support/training_steps.hpp"

#include "programs/local/tokenizer/tokenizer_store.hpp"

#include <boost/json/parse.hpp>

#include <algorithm>
#include <cmath>

namespace tinker::local::test {
namespace {

namespace json = boost::json;

class HttpApiSampling : public LocalServerTest {
 protected:
  void SetUp() override {
    session = api().create_session();
    sampler = create_sampling_session(api(), session, 0, std::string(tiny_model), std::nullopt);
  }

  json::value sample(json::object body) { return api().call("/api/v1/asample", body); }

  std::string session;
  std::string sampler;
  std::int64_t next_seq = 0;
  const Tokens prompt{17, 18, 19, 20, 21};
};

TEST_F(HttpApiSampling, JsonSampleResponseHasTheSpecShape) {
  const RawResponse ticket = api().post("/api/v1/asample", sample_body(sampler, next_seq++, prompt, 3, 6, 1.0, 5));
  ASSERT_EQ(ticket.status, 200) << ticket.describe();
  const RawResponse response = api().await_response(string_field(ticket.json(), "request_id"));
  ASSERT_EQ(response.status, 200) << response.describe();
  ASSERT_TRUE(is_json_answer(response));
  const json::value result = response.json();
  if (const json::value* type = result.as_object().if_contains("type")) {
    EXPECT_EQ(type->as_string(), "sample");
  }
  const json::array& sequences = items(result, "sequences");
  ASSERT_EQ(sequences.size(), 3u);
  for (const json::value& s : sequences) {
    const std::vector<std::int64_t> tokens = integers(field(s, "tokens"));
    const std::string reason = string_field(s, "stop_reason");
    EXPECT_TRUE(reason == "length" ? tokens.size() == 6 : (reason == "stop" && tokens.size() <= 6)) << to_text(s);
    for (std::int64_t t : tokens) {
      EXPECT_GE(t, 0);
      EXPECT_LT(t, tiny_vocab_size());
    }
    const std::vector<double> logprobs = numbers(field(s, "logprobs"));
    EXPECT_EQ(logprobs.size(), tokens.size());
    for (double lp : logprobs) {
      EXPECT_LE(lp, 0.0);
    }
  }
  EXPECT_FALSE(result.as_object().contains("prompt_logprobs") && !result.at("prompt_logprobs").is_null());
  if (const json::value* hits = result.as_object().if_contains("prompt_cache_hit_tokens")) {
    EXPECT_TRUE(hits->is_int64() || hits->is_uint64());
  }
}

TEST_F(HttpApiSampling, PromptLogprobsAndTopKInJson) {
  json::object body = sample_body(sampler, next_seq++, prompt, 1, 1, 1.0, 1);
  body["prompt_logprobs"] = true;
  body["topk_prompt_logprobs"] = 3;
  const json::value result = sample(body);
  const json::array& prompt_logprobs = items(result, "prompt_logprobs");
  ASSERT_EQ(prompt_logprobs.size(), prompt.size());
  EXPECT_TRUE(prompt_logprobs[0].is_null());
  for (std::size_t i = 1; i < prompt.size(); ++i) {
    EXPECT_LE(number(prompt_logprobs[i]), 0.0);
  }

  const json::array& topk = items(result, "topk_prompt_logprobs");
  ASSERT_EQ(topk.size(), prompt.size());
  EXPECT_TRUE(topk[0].is_null());
  for (std::size_t i = 1; i < prompt.size(); ++i) {
    const json::array& row = topk[i].as_array();
    ASSERT_EQ(row.size(), 3u);
    double previous = 0.0;
    for (const json::value& pair : row) {
      const json::array& entry = pair.as_array();
      ASSERT_EQ(entry.size(), 2u);
      const double lp = number(entry[1]);
      EXPECT_LE(lp, previous + 1e-9) << "top-k not sorted by logprob";
      previous = lp;
    }
    // The prompt token's own logprob is at most the best alternative's.
    EXPECT_LE(number(prompt_logprobs[i]), number(row[0].as_array()[1]) + 1e-6);
  }
}

TEST_F(HttpApiSampling, ProtobufSampleResponse) {
  json::object body = sample_body(sampler, next_seq++, prompt, 2, 4, 1.0, 3);
  body["prompt_logprobs"] = true;
  body["topk_prompt_logprobs"] = 2;
  const std::string request_id = api().submit("/api/v1/asample", body);
  const RawResponse response = api().await_response(request_id, protobuf_type);
  ASSERT_EQ(response.status, 200) << response.describe();
  ASSERT_NE(response.header("Content-Type").value_or("").find("application/x-protobuf"), std::string::npos);
  tinker_public::SampleResponse proto;
  ASSERT_TRUE(proto.ParseFromString(response.body));
  ASSERT_EQ(proto.sequences_size(), 2);
  for (const auto& s : proto.sequences()) {
    const auto tokens = int32s_from_le(s.tokens());
    EXPECT_EQ(tokens.size(), s.stop_reason() == tinker_public::STOP_REASON_LENGTH ? 4u : tokens.size());
    EXPECT_EQ(floats_from_le(s.logprobs()).size(), tokens.size());
  }
  const auto prompt_logprobs = floats_from_le(proto.prompt_logprobs());
  ASSERT_EQ(prompt_logprobs.size(), prompt.size());
  EXPECT_TRUE(std::isnan(prompt_logprobs[0]));
  ASSERT_TRUE(proto.has_topk_prompt_logprobs());
  const auto& topk = proto.topk_prompt_logprobs();
  EXPECT_EQ(topk.k(), 2u);
  EXPECT_EQ(topk.prompt_length(), prompt.size());
  const auto ids = int32s_from_le(topk.token_ids());
  const auto lps = floats_from_le(topk.logprobs());
  ASSERT_EQ(ids.size(), prompt.size() * 2);
  ASSERT_EQ(lps.size(), prompt.size() * 2);
  EXPECT_EQ(ids[0], 0);  // row 0 is empty: sentinel (0, -99999.0)
  EXPECT_EQ(lps[0], -99999.0f);

  // The same result as JSON agrees with the protobuf one.
  const json::value as_json = api().await_json(request_id);
  const json::array& sequences = items(as_json, "sequences");
  for (int i = 0; i < proto.sequences_size(); ++i) {
    const auto tokens = int32s_from_le(proto.sequences(i).tokens());
    EXPECT_EQ(integers(field(sequences[static_cast<std::size_t>(i)], "tokens")),
              std::vector<std::int64_t>(tokens.begin(), tokens.end()));
  }
  EXPECT_EQ(static_cast<float>(number(items(as_json, "prompt_logprobs")[1])), prompt_logprobs[1]);
}

TEST_F(HttpApiSampling, StopTokenIdsEndTheSequence) {
  const json::value greedy = sample(sample_body(sampler, next_seq++, prompt, 1, 6, 0.0, std::nullopt));
  const std::vector<std::int64_t> tokens = integers(field(items(greedy, "sequences")[0], "tokens"));
  ASSERT_GE(tokens.size(), 2u);
  json::object body = sample_body(sampler, next_seq++, prompt, 1, 6, 0.0, std::nullopt);
  body["sampling_params"].as_object()["stop"] = int_array({tokens[1]});
  const json::value stopped = sample(body);
  const json::value s = items(stopped, "sequences")[0];
  EXPECT_EQ(string_field(s, "stop_reason"), "stop");
  const std::vector<std::int64_t> got = integers(field(s, "tokens"));
  ASSERT_FALSE(got.empty());
  // Greedy again, so the sequence is the same prefix, ending at the first occurrence of the stop id.
  const auto first_stop = std::find(tokens.begin(), tokens.end(), tokens[1]);
  EXPECT_EQ(got.back(), tokens[1]);
  EXPECT_EQ(got.size(), static_cast<std::size_t>(first_stop - tokens.begin()) + 1);
}

TEST_F(HttpApiSampling, StopStringsEndTheSequence) {
  const json::value greedy = sample(sample_body(sampler, next_seq++, prompt, 1, 8, 0.0, std::nullopt));
  const std::vector<std::int64_t> tokens = integers(field(items(greedy, "sequences")[0], "tokens"));
  const auto tokenizer = ensure_tiny_tokenizer(shared_hf_hub_cache(), TinyTokenizer::byte_level_bpe);
  std::string text;
  std::size_t used = 0;
  // The shortest generated prefix whose text has a visible character.
  while (used < tokens.size() && text.find_first_not_of(" \t\n") == std::string::npos) {
    ++used;
    const std::vector<TokenId> prefix(tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(used));
    text = tokenizer->decode(prefix);
  }
  if (text.find_first_not_of(" \t\n") == std::string::npos) GTEST_SKIP() << "greedy output has no visible text";
  const std::string stop = text.substr(text.find_first_not_of(" \t\n"));
  json::object body = sample_body(sampler, next_seq++, prompt, 1, 8, 0.0, std::nullopt);
  body["sampling_params"].as_object()["stop"] = json::array{json::string(stop)};
  const json::value s = items(sample(body), "sequences")[0];
  EXPECT_EQ(string_field(s, "stop_reason"), "stop") << "stop string '" << stop << "'";
  EXPECT_LE(integers(field(s, "tokens")).size(), used);
}

class HttpApiSamplingDefaults : public HttpApiSampling {
 protected:
  HttpApiSamplingDefaults() { options.default_max_tokens = 3; }
};

TEST_F(HttpApiSamplingDefaults, MissingMaxTokensUsesTheServerDefault) {
  json::object body = sample_body(sampler, next_seq++, prompt, 2, 1, 1.0, 11);
  body["sampling_params"].as_object().erase("max_tokens");
  for (const json::value& s : items(sample(body), "sequences")) {
    EXPECT_LE(integers(field(s, "tokens")).size(), 3u);
    if (string_field(s, "stop_reason") == "length") {
      EXPECT_EQ(integers(field(s, "tokens")).size(), 3u);
    }
  }
}

TEST_F(HttpApiSampling, IntegerLiteralsForFloatParamsAreAccepted) {
  json::object body = sample_body(sampler, next_seq++, prompt, 1, 2, 1.0, 2);
  body["sampling_params"].as_object()["temperature"] = 1;
  body["sampling_params"].as_object()["top_p"] = 1;
  EXPECT_NO_THROW(sample(body));
}

TEST_F(HttpApiSampling, RepeatedSeqIdReturnsTheSameTicket) {
  const json::object body = sample_body(sampler, 7, prompt, 1, 2, 1.0, 2);
  EXPECT_EQ(api().submit("/api/v1/asample", body), api().submit("/api/v1/asample", body));
}

TEST_F(HttpApiSampling, UnknownSamplingSessionIs404) {
  EXPECT_TRUE(
      is_error(api().post("/api/v1/asample", sample_body(session + ":sample:99", 0, prompt, 1, 2, 1.0, 1)), 404));
}

class HttpApiSamplingBackpressure : public HttpApiSampling {
 protected:
  HttpApiSamplingBackpressure() {
    options.sample_queue_limit = 1;
    // Hold every sample in a paused queue so they stay pending while the test submits more.
    FaultRule pause("asample", FaultKind::pause_queue);
    pause.delay = std::chrono::milliseconds(600);
    pause.queue_state = "paused_capacity";
    pause.probability = 1.0;
    options.faults.push_back(pause);
  }
};

TEST_F(HttpApiSamplingBackpressure, HeaderTurnsAFullQueueInto429) {
  int rejected = 0;
  std::vector<std::string> accepted;
  for (int i = 0; i < 4; ++i) {
    const RawResponse response = api().post("/api/v1/asample", sample_body(sampler, next_seq++, prompt, 1, 2, 1.0, 1),
                                            {{"X-Tinker-Sampling-Backpressure", "1"}});
    if (response.status == 429) {
      ++rejected;
    } else {
      ASSERT_EQ(response.status, 200) << response.describe();
      accepted.push_back(string_field(response.json(), "request_id"));
    }
  }
  EXPECT_GE(rejected, 2) << "with sample_queue_limit 1, at most 2 of 4 pending samples fit";
  EXPECT_FALSE(accepted.empty());
  for (const std::string& id : accepted) {
    EXPECT_NO_THROW(api().await_json(id));
  }
}

TEST_F(HttpApiSamplingBackpressure, WithoutTheHeaderEverySampleIsQueued) {
  std::vector<std::string> ids;
  for (int i = 0; i < 4; ++i)
    ids.push_back(api().submit("/api/v1/asample", sample_body(sampler, next_seq++, prompt, 1, 2, 1.0, 1)));
  for (const std::string& id : ids) {
    EXPECT_NO_THROW(api().await_json(id));
  }
}

}  // namespace
}  // namespace tinker::local::test
