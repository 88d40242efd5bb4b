// Wire bodies of the post-0.25 sampling fields (doc/protocol.md#batched-sampling-results, doc/sampling.md): stop
// unset vs [], record_stability_info omitted or true, SampledSequence::sequence_id in JSON and protobuf, Datum
// provenance spans, and the retrieve_futures request and answer with an unknown completion state kept.
#include "core/wire/proto_codec_internal.hpp"
#include "core/wire/sample_body.hpp"

#include <tinker/codec.hpp>
#include <tinker/error.hpp>
#include <tinker/types.hpp>

#include <gtest/gtest.h>

#include <string>

namespace tinker {
namespace {

SampleRequest request_with(SamplingParams params) {
  return SampleRequest("s:sample:0", 3, ModelInput::from_ints({1, 2}), std::move(params), 1);
}

std::string direct_body(const SampleRequest& request) {
  std::string out;
  wire::append_sample_body(request, out);
  return out;
}

constexpr std::string_view plain_body =
    R"({"num_samples":1,"prompt":{"chunks":[{"tokens":[1,2],"type":"encoded_text"}]},)"
    R"("sampling_params":{"max_tokens":4,"temperature":1,"top_k":-1,"top_p":1},)"
    R"("sampling_session_id":"s:sample:0","seq_id":3,"topk_prompt_logprobs":0)";

TEST(SamplingPost025Codec, StopUnsetIsOmittedAndAnEmptyListIsWritten) {
  const SampleRequest unset = request_with(SamplingParams(4));
  EXPECT_EQ(to_json(unset), std::string(plain_body) + R"(,"type":"sample"})");
  EXPECT_EQ(direct_body(unset), to_json(unset));

  SamplingParams none(4);
  none.stop = StopCondition(std::vector<TokenId>{});
  const SampleRequest empty = request_with(none);
  const std::string body = to_json(empty);
  EXPECT_NE(body.find(R"("sampling_params":{"max_tokens":4,"stop":[],"temperature":1)"), std::string::npos) << body;
  EXPECT_EQ(direct_body(empty), body);

  // And back: [] stays a set, empty list; null and absence both mean unset.
  const SampleRequest read_empty = from_json<SampleRequest>(body);
  ASSERT_TRUE(read_empty.sampling_params.stop.has_value());
  EXPECT_TRUE(std::visit([](const auto& v) { return std::size(v) == 0; }, *read_empty.sampling_params.stop));
  std::string with_null = body;
  with_null.replace(with_null.find(R"("stop":[])"), 9, R"("stop":null)");
  EXPECT_FALSE(from_json<SampleRequest>(with_null).sampling_params.stop.has_value());
  EXPECT_FALSE(from_json<SampleRequest>(to_json(unset)).sampling_params.stop.has_value());
}

TEST(SamplingPost025Codec, RecordStabilityInfoIsOmittedUnlessSet) {
  SampleRequest request = request_with(SamplingParams(4));
  EXPECT_EQ(to_json(request).find("record_stability_info"), std::string::npos);
  request.record_stability_info = true;
  const std::string expected = std::string(plain_body) + R"(,"record_stability_info":true,"type":"sample"})";
  EXPECT_EQ(to_json(request), expected);
  EXPECT_EQ(direct_body(request), expected);
  EXPECT_EQ(from_json<SampleRequest>(expected).record_stability_info, std::optional<bool>(true));
  request.record_stability_info = false;
  EXPECT_EQ(direct_body(request), to_json(request));
}

TEST(SamplingPost025Codec, SequenceIdsAreDecodedWhenPresentInJsonAndProtobuf) {
  const auto json = from_json<SampleResponse>(
      R"({"type":"sample","sequences":[{"stop_reason":"length","tokens":[4],"sequence_id":"sess:seq:7"},)"
      R"({"stop_reason":"stop","tokens":[5]}]})");
  EXPECT_EQ(json.sequences[0].sequence_id, std::optional<std::string>("sess:seq:7"));
  EXPECT_FALSE(json.sequences[1].sequence_id.has_value());

  SampleResponse response;
  response.sequences.emplace_back(StopReason::stop, std::vector<TokenId>{1, 2}, std::vector<float>{-0.5f, -1.0f});
  response.sequences.back().sequence_id = "sess:seq:0";
  response.sequences.emplace_back(StopReason::length, std::vector<TokenId>{3});
  const std::string bytes = to_protobuf(response);
  EXPECT_EQ(from_protobuf<SampleResponse>(bytes), response);
  EXPECT_EQ(wire::proto::decode_sample_with_libprotobuf(bytes), response);
  const std::string json_text = to_json(response);
  EXPECT_NE(json_text.find(R"("tokens":[1,2],"logprobs":[-0.5,-1],"sequence_id":"sess:seq:0"})"), std::string::npos)
      << json_text;
  EXPECT_EQ(json_text.find("sequence_id", json_text.find("sess:seq:0")), std::string::npos) << "written once";
}

TEST(SamplingPost025Codec, ProvenanceSpansCarryATypeTagAndUnknownTypesAreRefused) {
  LossFnInputs inputs;
  inputs.emplace("target_tokens", TensorData(std::vector<std::int64_t>{2, 3}));
  Datum datum(ModelInput::from_ints({1, 2}), inputs);
  datum = datum.with_provenance({PromptProvenanceSpan("s:seq:0", 0, 1), SampledProvenanceSpan("s:seq:0", 0, 1)});
  const std::string body = to_json(datum);
  EXPECT_NE(body.find(R"("model_input_spans":[{"type":"prompt","sequence_id":"s:seq:0","offset":0,"length":1},)"
                      R"({"type":"sampled","sequence_id":"s:seq:0","offset":0,"length":1}])"),
            std::string::npos)
      << body;
  EXPECT_EQ(body.find("loss_fn_input_spans"), std::string::npos);
  EXPECT_EQ(from_json<Datum>(body), datum);

  std::string unknown = body;
  unknown.replace(unknown.find(R"("type":"sampled")"), 16, R"("type":"borrowed")");
  diagnostics diag;
  Datum out;
  EXPECT_EQ(from_json(unknown, out, diag), make_error_code(errc::decode_error));
  EXPECT_NE(diag.message.find("model_input_spans[1].type"), std::string::npos) << diag.message;
}

TEST(SamplingPost025Codec, TheProtobufFormRefusesProvenanceRatherThanDroppingIt) {
  LossFnInputs inputs;
  inputs.emplace("target_tokens", TensorData(std::vector<std::int64_t>{2}));
  Datum datum(ModelInput::from_ints({1}), inputs);
  datum = datum.with_provenance({PromptProvenanceSpan("s:seq:0", 0, 1)});
  const ForwardBackwardRequest request("model", 1, ForwardBackwardInput({datum}, loss_fn::cross_entropy));
  try {
    (void)to_protobuf(request);
    FAIL() << "spans were dropped";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("model_input_spans"), std::string::npos) << e.what();
  }
}

TEST(SamplingPost025Codec, RetrieveFuturesRequestBody) {
  const FuturesRetrieveRequest first(SamplingSessionFuturesTarget("sess:sample:0"));
  EXPECT_EQ(to_json(first),
            R"({"target":{"type":"sampling_session","sampling_session_id":"sess:sample:0","cloned_sampler_id":0},)"
            R"("prev_cursor":0})");
  const FuturesRetrieveRequest next(SamplingSessionFuturesTarget("sess:sample:0", 2), 17, 30.0);
  EXPECT_EQ(to_json(next),
            R"({"target":{"type":"sampling_session","sampling_session_id":"sess:sample:0","cloned_sampler_id":2},)"
            R"("prev_cursor":17,"timeout":30})");
  EXPECT_EQ(from_json<FuturesRetrieveRequest>(to_json(next)), next);
}

TEST(SamplingPost025Codec, RetrieveFuturesAnswerKeepsUnknownStates) {
  const auto answer = from_json<FuturesRetrieveResponse>(
      R"({"completions":[{"state":"finished","request_id":"a","response_payload_uncompressed_size":120},)"
      R"({"state":"failed","request_id":"b"},{"state":"paused_by_gremlins","request_id":"c","extra":[1]},)"
      R"({"state":"finished","request_id":"d","response_payload_uncompressed_size":null}],"cursor":9,"more":true})");
  ASSERT_EQ(answer.completions.size(), 4u);
  EXPECT_TRUE(answer.completions[0].finished());
  EXPECT_EQ(answer.completions[0].response_payload_uncompressed_size, std::optional<std::int64_t>(120));
  EXPECT_TRUE(answer.completions[1].failed());
  EXPECT_EQ(answer.completions[1].request_id, "b");
  EXPECT_FALSE(answer.completions[2].finished() || answer.completions[2].failed());
  EXPECT_EQ(answer.completions[2].state, "paused_by_gremlins");
  EXPECT_EQ(answer.completions[2].request_id, "c");
  EXPECT_FALSE(answer.completions[3].response_payload_uncompressed_size.has_value());
  EXPECT_EQ(answer.cursor, 9);

  diagnostics diag;
  FuturesRetrieveResponse out;
  EXPECT_EQ(from_json(R"({"completions":[{"request_id":"a"}],"cursor":1})", out, diag),
            make_error_code(errc::decode_error));
  EXPECT_NE(diag.message.find("completions[0].state"), std::string::npos) << diag.message;
}

}  // namespace
}  // namespace tinker
