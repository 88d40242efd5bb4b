// A fully populated value of every wire type, for round-trip tests. Values are chosen to be
// non-default everywhere, so a field the codec forgets makes the round trip fail.
#pragma once

#include <tinker/types.hpp>

#include <cmath>
#include <limits>

namespace tinker::test {

inline Timestamp sample_time(int seconds = 0) {
  return parse_timestamp("2026-08-08T12:00:00.250Z") + std::chrono::seconds{seconds};
}

inline TensorData sample_weights() {
  return TensorData(std::vector<float>{0.0f, 1.0f, 0.1f, -2.5e-8f}, std::vector<std::int64_t>{4});
}
inline TensorData sample_targets() {
  return TensorData(std::vector<std::int64_t>{11, 1879, 0, std::numeric_limits<std::int64_t>::max()});
}

inline ModelInput sample_model_input() {
  ModelInput input = ModelInput::from_ints({9707, 11, 1879});
  input.append(ImageChunk({0x89, 'P', 'N', 'G', 0, 255}, ImageFormat::png, 256));
  input.append(ImageAssetPointerChunk("s3://bucket/cat.jpeg", ImageFormat::jpeg));
  input.append(DmelChunk({0x01, 0x02, 0x05, 0x03}));
  input.append_int(13);
  return input;
}

inline Datum sample_datum() {
  return Datum(sample_model_input(), LossFnInputs{{"target_tokens", sample_targets()}, {"weights", sample_weights()}});
}

inline Checkpoint sample_checkpoint() {
  Checkpoint c("sampler_weights/final", CheckpointType::sampler, sample_time(),
               "tinker://s:train:0/sampler_weights/final");
  c.size_bytes = 167772160;
  c.public_ = true;
  c.expires_at = sample_time(86400);
  return c;
}

template <class T>
T sample();

template <>
inline ModelInput sample<ModelInput>() {
  return sample_model_input();
}
template <>
inline TensorData sample<TensorData>() {
  return TensorData::sparse_csr(std::vector<float>{1.5f, -2.0f, 3.25f}, 2, 4, {0, 2, 3}, {0, 3, 1});
}
template <>
inline Datum sample<Datum>() {
  return sample_datum();
}
template <>
inline ForwardBackwardInput sample<ForwardBackwardInput>() {
  return ForwardBackwardInput({sample_datum(), sample_datum()}, loss_fn::ppo,
                              LossFnConfig{{"clip_low_threshold", 0.8}, {"clip_high_threshold", 1.2}});
}
template <>
inline ForwardBackwardOutput sample<ForwardBackwardOutput>() {
  return ForwardBackwardOutput("ArrayRecord", {LossFnOutput{{"logprobs", sample_weights()}}},
                               Metrics{{"loss:sum", 0.76}, {"grad_norm:mean", 1e-300}});
}
template <>
inline AdamParams sample<AdamParams>() {
  AdamParams p(3e-4);
  p.beta1 = 0.8;
  p.beta2 = 0.99;
  p.eps = 1e-8;
  p.weight_decay = 0.01;
  p.grad_clip_norm = 1.0;
  return p;
}
template <>
inline LoraConfig sample<LoraConfig>() {
  LoraConfig c(8, 42);
  c.train_unembed = false;
  return c;
}
template <>
inline CreateModelRequest sample<CreateModelRequest>() {
  CreateModelRequest r("5d6f", 3, "Qwen/Qwen3-8B", sample<LoraConfig>());
  r.user_metadata = JsonObject{{"exp", RawJson::string("a")}, {"n", RawJson::integer(3)}, {"x", RawJson()}};
  return r;
}
template <>
inline CreateModelResponse sample<CreateModelResponse>() {
  return CreateModelResponse("5d6f:train:3");
}
template <>
inline GetInfoRequest sample<GetInfoRequest>() {
  return GetInfoRequest("5d6f:train:0");
}
template <>
inline ModelData sample<ModelData>() {
  return ModelData("Qwen/Qwen3-8B", "Qwen/Qwen3-8B", "qwen3");
}
template <>
inline GetInfoResponse sample<GetInfoResponse>() {
  GetInfoResponse r("5d6f:train:0", sample<ModelData>());
  r.is_lora = true;
  r.lora_rank = 32;
  r.model_name = "Qwen/Qwen3-8B";
  return r;
}
template <>
inline UnloadModelRequest sample<UnloadModelRequest>() {
  return UnloadModelRequest("m");
}
template <>
inline UnloadModelResponse sample<UnloadModelResponse>() {
  return UnloadModelResponse("m");
}
template <>
inline ForwardBackwardRequest sample<ForwardBackwardRequest>() {
  ForwardBackwardInput input({sample_datum()}, loss_fn::cross_entropy);
  return ForwardBackwardRequest("5d6f:train:0", 7, input);
}
template <>
inline ForwardRequest sample<ForwardRequest>() {
  return ForwardRequest("5d6f:train:0", 8, sample<ForwardBackwardInput>());
}
template <>
inline OptimStepRequest sample<OptimStepRequest>() {
  return OptimStepRequest("5d6f:train:0", 2, sample<AdamParams>());
}
template <>
inline OptimStepResponse sample<OptimStepResponse>() {
  return OptimStepResponse(Metrics{{"grad_norm:mean", 0.83}});
}
template <>
inline SaveWeightsRequest sample<SaveWeightsRequest>() {
  return SaveWeightsRequest("m", 4, "step-0100", 86400, true);
}
template <>
inline SaveWeightsResponse sample<SaveWeightsResponse>() {
  return SaveWeightsResponse("tinker://m/weights/step-0100");
}
template <>
inline LoadWeightsRequest sample<LoadWeightsRequest>() {
  LoadWeightsRequest r;
  r.session_id = "s";
  r.model_seq_id = 2;
  r.base_model = "Qwen/Qwen3-8B";
  r.user_metadata = JsonObject{{"k", RawJson::boolean(true)}};
  r.path = "tinker://s:train:0/weights/a";
  r.optimizer = true;
  r.weights_access_token = "tml-other";
  return r;
}
template <>
inline LoadWeightsResponse sample<LoadWeightsResponse>() {
  LoadWeightsResponse r;
  r.path = "tinker://s:train:0/weights/a";
  r.model_id = "s:train:2";
  return r;
}
template <>
inline SaveWeightsForSamplerRequest sample<SaveWeightsForSamplerRequest>() {
  SaveWeightsForSamplerRequest r("m", 9, std::nullopt);
  r.sampling_session_seq_id = 1;
  return r;
}
template <>
inline SaveWeightsForSamplerResponse sample<SaveWeightsForSamplerResponse>() {
  SaveWeightsForSamplerResponse r;
  r.path = "tinker://m/sampler_weights/x";
  r.sampling_session_id = "s:sample:3";
  return r;
}
template <>
inline SamplingParams sample<SamplingParams>() {
  SamplingParams p(64, 0.7);
  p.seed = std::numeric_limits<std::uint64_t>::max();
  p.stop = std::vector<std::string>{"\n\n", "\"quoted\" \\ \u00e9"};
  p.top_k = 40;
  p.top_p = 0.95;
  return p;
}
template <>
inline SampleRequest sample<SampleRequest>() {
  SampleRequest r("s:sample:0", 17, ModelInput::from_ints({785, 6722, 315}), sample<SamplingParams>(), 4);
  r.prompt_logprobs = false;
  r.topk_prompt_logprobs = 5;
  return r;
}
template <>
inline SampledSequence sample<SampledSequence>() {
  return SampledSequence(StopReason::stop, {264, 1899, 13}, std::vector<float>{-0.4f, -1.2f, -0.01f});
}
template <>
inline SampleResponse sample<SampleResponse>() {
  SampleResponse r({sample<SampledSequence>(), SampledSequence(StopReason::length, {1, 2})});
  r.prompt_logprobs = std::vector<std::optional<float>>{std::nullopt, -3.2f, -0.7f};
  r.topk_prompt_logprobs = std::vector<std::optional<std::vector<TopkEntry>>>{
      std::nullopt, std::vector<TopkEntry>{{1879, -0.2f}, {11, -1.9f}}, std::vector<TopkEntry>{{13, -0.1f}}};
  r.prompt_cache_hit_tokens = 2;
  return r;
}
template <>
inline UntypedAPIFuture sample<UntypedAPIFuture>() {
  return UntypedAPIFuture("req-8d2f", "s:train:0");
}
template <>
inline RetrieveFutureRequest sample<RetrieveFutureRequest>() {
  return RetrieveFutureRequest("req-1", true);
}
template <>
inline TryAgainResponse sample<TryAgainResponse>() {
  return TryAgainResponse("req-1", QueueState::paused_capacity, "waiting for GPU capacity");
}
template <>
inline FutureMetadataResponse sample<FutureMetadataResponse>() {
  return FutureMetadataResponse(7340032);
}
template <>
inline RequestFailedResponse sample<RequestFailedResponse>() {
  return RequestFailedResponse("target_tokens length 12 != model_input length 13", RequestErrorCategory::user);
}
template <>
inline Checkpoint sample<Checkpoint>() {
  return sample_checkpoint();
}
template <>
inline Cursor sample<Cursor>() {
  return Cursor(20, 20, 57);
}
template <>
inline TrainingRun sample<TrainingRun>() {
  TrainingRun r("s:train:0", "Qwen/Qwen3-8B", "tml:organization_user:abc", true, sample_time(5));
  r.corrupted = true;
  r.lora_rank = 32;
  r.last_checkpoint = sample_checkpoint();
  r.user_metadata = std::map<std::string, std::string>{{"exp", "a"}};
  return r;
}
template <>
inline TrainingRunsResponse sample<TrainingRunsResponse>() {
  return TrainingRunsResponse({sample<TrainingRun>()}, sample<Cursor>());
}
template <>
inline CheckpointsListResponse sample<CheckpointsListResponse>() {
  return CheckpointsListResponse({sample_checkpoint()}, sample<Cursor>());
}
template <>
inline CheckpointArchiveUrlResponse sample<CheckpointArchiveUrlResponse>() {
  return CheckpointArchiveUrlResponse("https://storage/x.tar?sig=1", sample_time(900));
}
template <>
inline SetCheckpointTtlRequest sample<SetCheckpointTtlRequest>() {
  return SetCheckpointTtlRequest(86400);
}
template <>
inline WeightsInfoRequest sample<WeightsInfoRequest>() {
  return WeightsInfoRequest("tinker://s:train:0/weights/a");
}
template <>
inline WeightsInfoResponse sample<WeightsInfoResponse>() {
  WeightsInfoResponse r("Qwen/Qwen3-8B", true);
  r.lora_rank = 16;
  r.train_mlp = false;
  return r;
}
template <>
inline ClientConfigRequest sample<ClientConfigRequest>() {
  return ClientConfigRequest("0.25.0");
}
template <>
inline ClientConfigResponse sample<ClientConfigResponse>() {
  ClientConfigResponse r;
  r.pjwt_auth_enabled = true;
  r.credential_default_source = "credential_cmd";
  r.proto_compress_fwdbwd = true;
  r.fwdbwd_max_chunk_len = 7;
  r.use_pyqwest_transport = false;
  r.sample_max_concurrent_requests = 3;
  return r;
}
template <>
inline DynamicConfigResponse sample<DynamicConfigResponse>() {
  return DynamicConfigResponse(60);
}
template <>
inline AuthTokenRequest sample<AuthTokenRequest>() {
  return AuthTokenRequest();
}
template <>
inline AuthTokenResponse sample<AuthTokenResponse>() {
  return AuthTokenResponse("eyJhbGciOi.x.y");
}
template <>
inline HealthResponse sample<HealthResponse>() {
  return HealthResponse();
}
template <>
inline SupportedModel sample<SupportedModel>() {
  return SupportedModel("Qwen/Qwen3-8B", 32768);
}
template <>
inline GetServerCapabilitiesResponse sample<GetServerCapabilitiesResponse>() {
  return GetServerCapabilitiesResponse({sample<SupportedModel>(), SupportedModel()});
}
template <>
inline CreateSessionRequest sample<CreateSessionRequest>() {
  return CreateSessionRequest({"a", "b"}, JsonObject{{"nested", RawJson::parse(R"({"x":[1,2.5,null]})")}}, "proj");
}
template <>
inline CreateSessionResponse sample<CreateSessionResponse>() {
  CreateSessionResponse r("5d6f2b0a");
  r.warning_message = "SDK 0.25.0 is outdated";
  return r;
}
template <>
inline SessionHeartbeatRequest sample<SessionHeartbeatRequest>() {
  return SessionHeartbeatRequest("s");
}
template <>
inline SessionHeartbeatResponse sample<SessionHeartbeatResponse>() {
  return SessionHeartbeatResponse();
}
template <>
inline CreateSamplingSessionRequest sample<CreateSamplingSessionRequest>() {
  return CreateSamplingSessionRequest("s", 1, std::nullopt, "tinker://s:train:0/sampler_weights/x");
}
template <>
inline CreateSamplingSessionResponse sample<CreateSamplingSessionResponse>() {
  return CreateSamplingSessionResponse("s:sample:1");
}
template <>
inline ListSessionsResponse sample<ListSessionsResponse>() {
  return ListSessionsResponse({"a", "b"});
}
template <>
inline GetSessionResponse sample<GetSessionResponse>() {
  return GetSessionResponse({"s:train:0"}, {"s:sample:0"});
}
template <>
inline AssignSessionProjectRequest sample<AssignSessionProjectRequest>() {
  return AssignSessionProjectRequest("p");
}
template <>
inline TraceExportResponse sample<TraceExportResponse>() {
  TraceExportResponse r(TraceExportStatus::ready);
  r.url = "https://x/trace.pftrace";
  return r;
}
template <>
inline GetSamplerResponse sample<GetSamplerResponse>() {
  GetSamplerResponse r("s:sample:0", "Qwen/Qwen3-8B");
  r.model_path = "tinker://s:train:0/sampler_weights/x";
  return r;
}
template <>
inline TelemetryEvent sample<TelemetryEvent>() {
  TelemetryEvent e(TelemetryEventKind::generic_event, "3f1c", 4, Severity::warning, sample_time());
  e.event_name = "InternalClientHolder.execute_with_retries.exception";
  e.event_data = JsonObject{{"status_code", RawJson::integer(503)}, {"body", RawJson()}};
  return e;
}
template <>
inline TelemetryRequest sample<TelemetryRequest>() {
  return TelemetryRequest({sample<TelemetryEvent>()}, "Linux", "0.25.0", "s", "p-uuid");
}
template <>
inline TelemetryResponse sample<TelemetryResponse>() {
  return TelemetryResponse();
}
template <>
inline AuditLogEntry sample<AuditLogEntry>() {
  AuditLogEntry e(sample_time(), "checkpoint.delete");
  e.tinker_path = "tinker://s:train:0/weights/a";
  return e;
}
template <>
inline AuditLogResponse sample<AuditLogResponse>() {
  return AuditLogResponse({sample<AuditLogEntry>()});
}
template <>
inline BillingUsageEntry sample<BillingUsageEntry>() {
  BillingUsageEntry e(sample_time(), sample_time(3600), billing::SamplingPrefill(false, 12000));
  e.base_model = "Qwen/Qwen3-8B";
  e.user_name = "Ada";
  return e;
}
template <>
inline BillingUsageResponse sample<BillingUsageResponse>() {
  BillingUsageResponse r({sample<BillingUsageEntry>(),
                          BillingUsageEntry(sample_time(), sample_time(3600), billing::Storage(0.5)),
                          BillingUsageEntry(sample_time(), sample_time(3600), billing::CheckpointEvent(2)),
                          BillingUsageEntry(sample_time(), sample_time(3600), billing::Training(7)),
                          BillingUsageEntry(sample_time(), sample_time(3600), billing::SamplingSample(9))});
  r.sessions["s"] = BillingSessionInfo(JsonObject{{"exp", RawJson::string("a")}});
  return r;
}
template <>
inline WhoamiResponse sample<WhoamiResponse>() {
  return WhoamiResponse("tml:organization_user:abc", "ada@x");
}

}  // namespace tinker::test
