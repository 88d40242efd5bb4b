// Bodies recorded from the official Python SDK 0.25.0 (one training step and one sampling call
// against a logging loopback server), and the protocol's documented examples, decode and encode
// back to equivalent JSON.
#include "support/json_equivalence.hpp"

#include <tinker/codec.hpp>

#include <gtest/gtest.h>

namespace tinker {
namespace {

template <class T>
void expect_reencodes_equivalently(std::string_view body) {
  const T decoded = from_json<T>(body);
  const std::string encoded = to_json(decoded);
  EXPECT_TRUE(test::json_equivalent(body, encoded)) << "sent:    " << body << "\nencoded: " << encoded;
}

TEST(ObservedTraffic, ClientConfigAndDynamicConfigRequests) {
  expect_reencodes_equivalently<ClientConfigRequest>(R"({"sdk_version":"0.25.0"})");
  EXPECT_EQ(to_json(ClientConfigRequest()), R"({"sdk_version":"0.25.0"})");
}

TEST(ObservedTraffic, CreateSession) {
  constexpr std::string_view body = R"({"tags":[],"user_metadata":{},"sdk_version":"0.25.0","type":"create_session"})";
  expect_reencodes_equivalently<CreateSessionRequest>(body);
  // A default request sends exactly what the Python SDK sends.
  EXPECT_EQ(to_json(CreateSessionRequest()), body);
}

TEST(ObservedTraffic, CreateModel) {
  constexpr std::string_view body =
      R"({"session_id":"S","model_seq_id":0,"base_model":"Qwen/Qwen3-8B",)"
      R"("lora_config":{"rank":8,"seed":0,"train_unembed":true,"train_mlp":true,"train_attn":true},)"
      R"("type":"create_model"})";
  expect_reencodes_equivalently<CreateModelRequest>(body);
  const auto request = from_json<CreateModelRequest>(body);
  EXPECT_EQ(request.lora_config->rank, 8);
  EXPECT_EQ(request.lora_config->seed, 0);
}

TEST(ObservedTraffic, OptimStep) {
  constexpr std::string_view body =
      R"({"adam_params":{"learning_rate":0.0001,"beta1":0.9,"beta2":0.95,"eps":1e-12,)"
      R"("weight_decay":0.0,"grad_clip_norm":0.0},"model_id":"S:train:0","seq_id":2,"type":"optim_step"})";
  expect_reencodes_equivalently<OptimStepRequest>(body);
  // Default AdamParams are the Python SDK's defaults.
  EXPECT_EQ(from_json<OptimStepRequest>(body).adam_params, AdamParams());
}

TEST(ObservedTraffic, SaveWeightsForSamplerNamedAndEphemeral) {
  expect_reencodes_equivalently<SaveWeightsForSamplerRequest>(
      R"({"model_id":"S:train:0","path":"smoke-1","seq_id":3,"type":"save_weights_for_sampler"})");
  expect_reencodes_equivalently<SaveWeightsForSamplerRequest>(
      R"({"model_id":"S:train:0","sampling_session_seq_id":1,"seq_id":4,"type":"save_weights_for_sampler"})");
}

TEST(ObservedTraffic, CreateSamplingSession) {
  expect_reencodes_equivalently<CreateSamplingSessionRequest>(
      R"({"session_id":"S","sampling_session_seq_id":0,"model_path":"tinker://S:train:0/sampler_weights/x",)"
      R"("type":"create_sampling_session"})");
}

TEST(ObservedTraffic, Asample) {
  constexpr std::string_view body =
      R"({"num_samples":2,"prompt":{"chunks":[{"tokens":[11,12,13],"type":"encoded_text"}]},)"
      R"("sampling_params":{"max_tokens":6,"seed":1,"temperature":0.7,"top_k":-1,"top_p":1.0},)"
      R"("sampling_session_id":"S:sample:0","seq_id":0,"prompt_logprobs":false,"topk_prompt_logprobs":0,"type":"sample"})";
  expect_reencodes_equivalently<SampleRequest>(body);
  const auto request = from_json<SampleRequest>(body);
  EXPECT_EQ(request.prompt.to_ints(), (std::vector<TokenId>{11, 12, 13}));
  EXPECT_EQ(request.sampling_params.temperature, 0.7);
}

TEST(ObservedTraffic, SamplingParamsDefaultsWrittenAsIntegersAreAccepted) {
  const auto params = from_json<SamplingParams>(R"({"temperature":1,"top_k":-1,"top_p":1})");
  EXPECT_EQ(params, SamplingParams());
}

TEST(ObservedTraffic, HeartbeatAndTelemetry) {
  expect_reencodes_equivalently<SessionHeartbeatRequest>(R"({"session_id":"S","type":"session_heartbeat"})");
  expect_reencodes_equivalently<TelemetryRequest>(
      R"({"events":[{"event":"SESSION_START","event_id":"0f8e","event_session_index":0,"severity":"INFO",)"
      R"("timestamp":"2026-08-08T12:00:00.123456Z"}],"platform":"Linux","sdk_version":"0.25.0","session_id":"S",)"
      R"("process_uuid":"p"})");
}

TEST(ObservedTraffic, TelemetryEventDataMayHoldNulls) {
  const auto event = from_json<TelemetryEvent>(
      R"({"event":"GENERIC_EVENT","event_id":"e","event_session_index":1,"severity":"WARNING",)"
      R"("timestamp":"2026-08-08T12:00:00Z","event_name":"x","event_data":{"status_code":null,"n":[1,{"a":null}]}})");
  ASSERT_TRUE(event.event_data);
  EXPECT_TRUE(event.event_data->at("status_code").is_null());
  EXPECT_EQ(event.event_data->at("n").text(), R"([1,{"a":null}])");
}

TEST(ObservedTraffic, ServerResponses) {
  expect_reencodes_equivalently<CreateSessionResponse>(R"({"type":"create_session","session_id":"S"})");
  expect_reencodes_equivalently<UntypedAPIFuture>(R"({"request_id":"R1","model_id":"S:train:0"})");
  expect_reencodes_equivalently<TryAgainResponse>(R"({"type":"try_again","request_id":"R1","queue_state":"active"})");
  expect_reencodes_equivalently<CreateModelResponse>(R"({"type":"create_model","model_id":"S:train:0"})");
  expect_reencodes_equivalently<SaveWeightsForSamplerResponse>(
      R"({"type":"save_weights_for_sampler","path":"tinker://S:train:0/sampler_weights/smoke"})");
  expect_reencodes_equivalently<CreateSamplingSessionResponse>(
      R"({"type":"create_sampling_session","sampling_session_id":"S:sample:0"})");
  expect_reencodes_equivalently<FutureMetadataResponse>(
      R"({"status":"complete_metadata","response_payload_size":7340032})");
  expect_reencodes_equivalently<RequestFailedResponse>(R"({"error":"bad","category":"user"})");
}

TEST(ObservedTraffic, OptimStepResultWithExtraTypeKey) {
  const auto result = from_json<OptimStepResponse>(R"({"type":"optim_step","metrics":{}})");
  ASSERT_TRUE(result.metrics);
  EXPECT_TRUE(result.metrics->empty());
  EXPECT_FALSE(from_json<OptimStepResponse>(R"({"metrics":null})").metrics);
}

TEST(SpecExamples, ForwardBackwardJsonForm) {
  constexpr std::string_view body = R"({"forward_backward_input": {
     "data": [{"model_input": {"chunks": [{"tokens": [9707, 11, 1879], "type": "encoded_text"}]},
               "loss_fn_inputs": {
                 "target_tokens": {"data": [11, 1879, 0], "dtype": "int64", "shape": [3]},
                 "weights": {"data": [0.0, 1.0, 1.0], "dtype": "float32", "shape": [3]}}}],
     "loss_fn": "cross_entropy"},
   "model_id": "5d6f:train:0", "seq_id": 1})";
  expect_reencodes_equivalently<ForwardBackwardRequest>(body);
  const auto request = from_json<ForwardBackwardRequest>(body);
  const Datum& datum = request.forward_backward_input.data.at(0);
  EXPECT_EQ(datum.loss_fn_inputs.at("target_tokens").ints()[1], 1879);
  EXPECT_EQ(datum.loss_fn_inputs.at("weights").floats()[2], 1.0f);
}

TEST(SpecExamples, SampleResponseJsonForm) {
  constexpr std::string_view body = R"({"type": "sample",
     "sequences": [{"stop_reason": "stop", "tokens": [264, 1899, 13], "logprobs": [-0.4, -1.2, -0.01]}],
     "prompt_logprobs": [null, -3.2, -0.7],
     "topk_prompt_logprobs": [null, [[1879, -0.2], [11, -1.9]], [[13, -0.1], [0, -99999.0]]],
     "prompt_cache_hit_tokens": 0})";
  expect_reencodes_equivalently<SampleResponse>(body);
  const auto response = from_json<SampleResponse>(body);
  EXPECT_EQ(response.sequences.at(0).stop_reason, StopReason::stop);
  EXPECT_FALSE(response.prompt_logprobs->at(0).has_value());
  EXPECT_EQ(response.topk_prompt_logprobs->at(1)->at(1), (TopkEntry{11, -1.9f}));
}

TEST(SpecExamples, GetInfoCheckpointAndBilling) {
  expect_reencodes_equivalently<GetInfoResponse>(
      R"({"type": "get_info", "model_id": "5d6f:train:0", "is_lora": true, "lora_rank": 32,
          "model_name": "Qwen/Qwen3-8B",
          "model_data": {"arch": "qwen3", "model_name": "Qwen/Qwen3-8B", "tokenizer_id": "Qwen/Qwen3-8B"}})");
  const auto checkpoint = from_json<Checkpoint>(
      R"({"checkpoint_id": "sampler_weights/final", "checkpoint_type": "sampler",
          "time": "2026-08-08T12:00:00Z", "tinker_path": "tinker://5d6f:train:0/sampler_weights/final",
          "size_bytes": 167772160, "public": false, "expires_at": null})");
  EXPECT_FALSE(checkpoint.expires_at);
  EXPECT_EQ(format_timestamp(checkpoint.time), "2026-08-08T12:00:00Z");
  expect_reencodes_equivalently<BillingUsageResponse>(R"({"data": [
     {"bucket_start": "2026-07-13T00:00:00Z", "bucket_end": "2026-07-13T01:00:00Z",
      "base_model": "Qwen/Qwen3-8B", "user_id": "tml:organization_user:abc", "user_name": "Ada",
      "session_id": "5d6f",
      "event_info": {"type": "sampling_prefill", "cached": false, "token_count": 12000}}],
     "sessions": {"5d6f": {"user_metadata": {"exp": "a"}}}})");
}

TEST(SpecExamples, TtlRemovalSendsExplicitNull) {
  EXPECT_EQ(to_json(SetCheckpointTtlRequest(std::nullopt)), R"({"ttl_seconds":null})");
  EXPECT_EQ(to_json(SetCheckpointTtlRequest(60)), R"({"ttl_seconds":60})");
}

TEST(SpecExamples, NullsAreOmittedAndDefaultsKept) {
  EXPECT_EQ(to_json(SaveWeightsRequest("m", 1, "a")),
            R"({"model_id":"m","path":"a","seq_id":1,"overwrite":false,"type":"save_weights"})");
  EXPECT_EQ(to_json(SamplingParams()), R"({"temperature":1,"top_k":-1,"top_p":1})");
}

TEST(SpecExamples, UnknownKeysAreIgnored) {
  const auto future = from_json<UntypedAPIFuture>(R"({"request_id":"r","new_field":{"deep":[1,2]},"x":null})");
  EXPECT_EQ(future.request_id, "r");
}

TEST(SpecExamples, UnknownQueueStateAndCategoryMeanUnknown) {
  EXPECT_EQ(
      from_json<TryAgainResponse>(R"({"type":"try_again","request_id":"r","queue_state":"paused_moon"})").queue_state,
      QueueState::unknown);
  EXPECT_EQ(from_json<RequestFailedResponse>(R"({"error":"e","category":"cosmic"})").category,
            RequestErrorCategory::unknown);
  EXPECT_EQ(from_json<RequestFailedResponse>(R"({"error":"e"})").category, RequestErrorCategory::unknown);
}

}  // namespace
}  // namespace tinker
