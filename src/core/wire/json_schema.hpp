// The JSON field list of every wire type (see json_codec.hpp for req/opt/nullable/tag).
//
// These live in namespace tinker so that the generic codec templates find them by
// argument-dependent lookup. Field order is the order written on the wire.
#pragma once

#include <tinker/types.hpp>

namespace tinker {

// --- model input, datum, forward/backward (doc/protocol.md#core-types) -----------------------

template <class V>
void wire_fields(V& v, EncodedTextChunk& x) {
  v.req("tokens", x.tokens);
  v.tag("type", "encoded_text");
}

template <class V>
void wire_fields(V& v, ImageChunk& x) {
  v.req("data", x.data);
  v.req("format", x.format);
  v.opt("expected_tokens", x.expected_tokens);
  v.tag("type", "image");
}

template <class V>
void wire_fields(V& v, ImageAssetPointerChunk& x) {
  v.req("format", x.format);
  v.req("location", x.location);
  v.opt("expected_tokens", x.expected_tokens);
  v.tag("type", "image_asset_pointer");
}

template <class V>
void wire_fields(V& v, DmelChunk& x) {
  v.req("dmel", x.dmel);
  v.tag("type", "dmel");
}

template <class V>
void wire_fields(V& v, ModelInput& x) {
  v.req("chunks", x.chunks);
}

// Provenance spans: the wire tag is a choice (doc/protocol.md#choices-where-the-protocol-was-open).
template <class V>
void wire_fields(V& v, PromptProvenanceSpan& x) {
  v.tag("type", "prompt");
  v.req("sequence_id", x.sequence_id);
  v.req("offset", x.offset);
  v.req("length", x.length);
}

template <class V>
void wire_fields(V& v, SampledProvenanceSpan& x) {
  v.tag("type", "sampled");
  v.req("sequence_id", x.sequence_id);
  v.req("offset", x.offset);
  v.req("length", x.length);
}

template <class V>
void wire_fields(V& v, Datum& x) {
  v.req("model_input", x.model_input);
  v.opt("loss_fn_inputs", x.loss_fn_inputs);
  v.opt("model_input_spans", x.model_input_spans);
  v.opt("loss_fn_input_spans", x.loss_fn_input_spans);
}

template <class V>
void wire_fields(V& v, ForwardBackwardInput& x) {
  v.req("data", x.data);
  v.req("loss_fn", x.loss_fn);
  v.opt("loss_fn_config", x.loss_fn_config);
}

template <class V>
void wire_fields(V& v, ForwardBackwardOutput& x) {
  v.req("loss_fn_output_type", x.loss_fn_output_type);
  v.req("loss_fn_outputs", x.loss_fn_outputs);
  v.req("metrics", x.metrics);
}

// --- training (doc/protocol.md#endpoints, #core-types) --------------------------------------

template <class V>
void wire_fields(V& v, AdamParams& x) {
  v.opt("learning_rate", x.learning_rate);
  v.opt("beta1", x.beta1);
  v.opt("beta2", x.beta2);
  v.opt("eps", x.eps);
  v.opt("weight_decay", x.weight_decay);
  v.opt("grad_clip_norm", x.grad_clip_norm);
}

// --- optimizers (doc/training.md#optimizers); OptimParams and OptimizerConfig, the unions, are in
// json_codec_optimizer.cpp ------------------------------------------------------------------

template <class V>
void wire_fields(V& v, DimuonParams& x) {
  v.tag("type", "dimuon");
  v.req("learning_rate", x.learning_rate);
  v.opt("grad_clip_norm", x.grad_clip_norm);
  v.opt("beta1", x.beta1);
  v.opt("damping", x.damping);
  v.opt("rank_lr_correction_exponent", x.rank_lr_correction_exponent);
}

template <class V>
void wire_fields(V& v, AdamOptimizerConfig&) {
  v.tag("type", "adamw");
}

template <class V>
void wire_fields(V& v, DimuonOptimizerConfig& x) {
  v.tag("type", "dimuon");
  v.opt("version", x.version);
}

template <class V>
void wire_fields(V& v, LoraConfig& x) {
  v.req("rank", x.rank);
  v.opt("seed", x.seed);
  v.opt("train_unembed", x.train_unembed);
  v.opt("train_mlp", x.train_mlp);
  v.opt("train_attn", x.train_attn);
}

template <class V>
void wire_fields(V& v, CreateModelRequest& x) {
  v.req("session_id", x.session_id);
  v.req("model_seq_id", x.model_seq_id);
  v.req("base_model", x.base_model);
  v.opt("user_metadata", x.user_metadata);
  v.opt("lora_config", x.lora_config);
  v.opt("optimizer_config", x.optimizer_config);
  v.tag("type", "create_model");
}

template <class V>
void wire_fields(V& v, CreateModelResponse& x) {
  v.req("model_id", x.model_id);
  v.tag("type", "create_model");
}

template <class V>
void wire_fields(V& v, GetInfoRequest& x) {
  v.req("model_id", x.model_id);
  v.tag("type", "get_info");
}

template <class V>
void wire_fields(V& v, ModelData& x) {
  v.opt("arch", x.arch);
  v.opt("model_name", x.model_name);
  v.opt("tokenizer_id", x.tokenizer_id);
}

template <class V>
void wire_fields(V& v, GetInfoResponse& x) {
  v.tag("type", "get_info");
  v.req("model_id", x.model_id);
  v.opt("is_lora", x.is_lora);
  v.opt("lora_rank", x.lora_rank);
  v.opt("model_name", x.model_name);
  v.req("model_data", x.model_data);
}

template <class V>
void wire_fields(V& v, UnloadModelRequest& x) {
  v.req("model_id", x.model_id);
  v.tag("type", "unload_model");
}

template <class V>
void wire_fields(V& v, UnloadModelResponse& x) {
  v.req("model_id", x.model_id);
  v.tag("type", "unload_model");
}

template <class V>
void wire_fields(V& v, ForwardRequest& x) {
  v.req("forward_input", x.forward_input);
  v.req("model_id", x.model_id);
  v.req("seq_id", x.seq_id);
}

template <class V>
void wire_fields(V& v, OptimStepRequest& x) {
  v.opt("adam_params", x.adam_params);
  v.opt("optim_params", x.optim_params);
  v.req("model_id", x.model_id);
  v.req("seq_id", x.seq_id);
  v.tag("type", "optim_step");
}

template <class V>
void wire_fields(V& v, OptimStepResponse& x) {
  v.opt("metrics", x.metrics);
}

template <class V>
void wire_fields(V& v, SaveWeightsRequest& x) {
  v.req("model_id", x.model_id);
  v.opt("path", x.path);
  v.opt("seq_id", x.seq_id);
  v.opt("ttl_seconds", x.ttl_seconds);
  v.opt("overwrite", x.overwrite);
  v.opt("user_metadata", x.user_metadata);
  v.tag("type", "save_weights");
}

template <class V>
void wire_fields(V& v, SaveWeightsResponse& x) {
  v.req("path", x.path);
  v.tag("type", "save_weights");
}

template <class V>
void wire_fields(V& v, LoadWeightsRequest& x) {
  v.opt("model_id", x.model_id);
  v.opt("seq_id", x.seq_id);
  v.opt("session_id", x.session_id);
  v.opt("model_seq_id", x.model_seq_id);
  v.opt("base_model", x.base_model);
  v.opt("user_metadata", x.user_metadata);
  v.req("path", x.path);
  v.opt("optimizer", x.optimizer);
  v.opt("weights_access_token", x.weights_access_token);
  v.opt("optimizer_config", x.optimizer_config);
  v.tag("type", "load_weights");
}

template <class V>
void wire_fields(V& v, LoadWeightsResponse& x) {
  v.opt("path", x.path);
  v.opt("model_id", x.model_id);
  v.opt("optimizer_config", x.optimizer_config);
  v.tag("type", "load_weights");
}

template <class V>
void wire_fields(V& v, SaveWeightsForSamplerRequest& x) {
  v.req("model_id", x.model_id);
  v.opt("path", x.path);
  v.opt("sampling_session_seq_id", x.sampling_session_seq_id);
  v.opt("seq_id", x.seq_id);
  v.opt("ttl_seconds", x.ttl_seconds);
  v.opt("user_metadata", x.user_metadata);
  v.tag("type", "save_weights_for_sampler");
}

template <class V>
void wire_fields(V& v, SaveWeightsForSamplerResponse& x) {
  v.opt("path", x.path);
  v.opt("sampling_session_id", x.sampling_session_id);
  v.tag("type", "save_weights_for_sampler");
}

// --- sampling (doc/protocol.md#endpoints, #core-types) --------------------------------------

template <class V>
void wire_fields(V& v, SamplingParams& x) {
  v.opt("max_tokens", x.max_tokens);
  v.opt("seed", x.seed);
  v.opt("stop", x.stop);
  v.opt("temperature", x.temperature);
  v.opt("top_k", x.top_k);
  v.opt("top_p", x.top_p);
}

template <class V>
void wire_fields(V& v, SampleRequest& x) {
  v.opt("num_samples", x.num_samples);
  v.req("prompt", x.prompt);
  v.req("sampling_params", x.sampling_params);
  v.opt("base_model", x.base_model);
  v.opt("model_path", x.model_path);
  v.opt("sampling_session_id", x.sampling_session_id);
  v.opt("seq_id", x.seq_id);
  v.opt("prompt_logprobs", x.prompt_logprobs);
  v.opt("topk_prompt_logprobs", x.topk_prompt_logprobs);
  v.opt("record_stability_info", x.record_stability_info);
  v.tag("type", "sample");
}

template <class V>
void wire_fields(V& v, SampledSequence& x) {
  v.req("stop_reason", x.stop_reason);
  v.req("tokens", x.tokens);
  v.opt("logprobs", x.logprobs);
  v.opt("sequence_id", x.sequence_id);
}

template <class V>
void wire_fields(V& v, SampleResponse& x) {
  v.tag("type", "sample");
  v.req("sequences", x.sequences);
  v.opt("prompt_logprobs", x.prompt_logprobs);
  v.opt("topk_prompt_logprobs", x.topk_prompt_logprobs);
  v.opt("prompt_cache_hit_tokens", x.prompt_cache_hit_tokens);
}

// --- futures (doc/protocol.md#futures) ------------------------------------------------------

template <class V>
void wire_fields(V& v, UntypedAPIFuture& x) {
  v.req("request_id", x.request_id);
  v.opt("model_id", x.model_id);
}

template <class V>
void wire_fields(V& v, RetrieveFutureRequest& x) {
  v.req("request_id", x.request_id);
  v.opt("allow_metadata_only", x.allow_metadata_only);
}

template <class V>
void wire_fields(V& v, SamplingSessionFuturesTarget& x) {
  v.tag("type", "sampling_session");
  v.req("sampling_session_id", x.sampling_session_id);
  v.opt("cloned_sampler_id", x.cloned_sampler_id);
}

template <class V>
void wire_fields(V& v, FuturesRetrieveRequest& x) {
  v.req("target", x.target);
  v.opt("prev_cursor", x.prev_cursor);
  v.opt("timeout", x.timeout);
}

// A union on "state" kept as its string, so that a state this SDK does not know is kept as sent.
template <class V>
void wire_fields(V& v, FutureCompletion& x) {
  v.req("state", x.state);
  v.opt("request_id", x.request_id);
  v.opt("response_payload_uncompressed_size", x.response_payload_uncompressed_size);
}

template <class V>
void wire_fields(V& v, FuturesRetrieveResponse& x) {
  v.req("completions", x.completions);
  v.req("cursor", x.cursor);
}

template <class V>
void wire_fields(V& v, TryAgainResponse& x) {
  v.tag("type", "try_again");
  v.req("request_id", x.request_id);
  v.opt("queue_state", x.queue_state);
  v.opt("queue_state_reason", x.queue_state_reason);
}

template <class V>
void wire_fields(V& v, FutureMetadataResponse& x) {
  v.tag("status", "complete_metadata");
  v.req("response_payload_size", x.response_payload_size);
}

template <class V>
void wire_fields(V& v, RequestFailedResponse& x) {
  v.req("error", x.error);
  v.opt("category", x.category);
}

// --- checkpoints and runs (doc/rest.md, doc/protocol.md#core-types) -------------------------

template <class V>
void wire_fields(V& v, Checkpoint& x) {
  v.req("checkpoint_id", x.checkpoint_id);
  v.req("checkpoint_type", x.checkpoint_type);
  v.req("time", x.time);
  v.req("tinker_path", x.tinker_path);
  v.opt("size_bytes", x.size_bytes);
  v.opt("public", x.public_);
  v.opt("expires_at", x.expires_at);
  v.opt("base_model", x.base_model);
  v.opt("user_metadata", x.user_metadata);
}

template <class V>
void wire_fields(V& v, Cursor& x) {
  v.req("offset", x.offset);
  v.req("limit", x.limit);
  v.req("total_count", x.total_count);
}

template <class V>
void wire_fields(V& v, TrainingRun& x) {
  v.req("training_run_id", x.training_run_id);
  v.req("base_model", x.base_model);
  v.req("model_owner", x.model_owner);
  v.req("is_lora", x.is_lora);
  v.opt("corrupted", x.corrupted);
  v.opt("lora_rank", x.lora_rank);
  v.req("last_request_time", x.last_request_time);
  v.opt("last_checkpoint", x.last_checkpoint);
  v.opt("last_sampler_checkpoint", x.last_sampler_checkpoint);
  v.opt("user_metadata", x.user_metadata);
}

template <class V>
void wire_fields(V& v, TrainingRunsResponse& x) {
  v.req("training_runs", x.training_runs);
  v.req("cursor", x.cursor);
}

template <class V>
void wire_fields(V& v, CheckpointsListResponse& x) {
  v.req("checkpoints", x.checkpoints);
  v.opt("cursor", x.cursor);
}

template <class V>
void wire_fields(V& v, CheckpointArchiveUrlResponse& x) {
  v.req("url", x.url);
  v.req("expires", x.expires);
}

template <class V>
void wire_fields(V& v, SetCheckpointTtlRequest& x) {
  v.nullable("ttl_seconds", x.ttl_seconds);
}

template <class V>
void wire_fields(V& v, WeightsInfoRequest& x) {
  v.req("tinker_path", x.tinker_path);
}

template <class V>
void wire_fields(V& v, WeightsInfoResponse& x) {
  v.req("base_model", x.base_model);
  v.req("is_lora", x.is_lora);
  v.opt("lora_rank", x.lora_rank);
  v.opt("train_unembed", x.train_unembed);
  v.opt("train_mlp", x.train_mlp);
  v.opt("train_attn", x.train_attn);
  v.opt("optimizer_config", x.optimizer_config);
}

// --- bootstrap and sessions (doc/protocol.md#bootstrap-and-lifecycle, doc/rest.md) ----------

template <class V>
void wire_fields(V& v, ClientConfigRequest& x) {
  v.req("sdk_version", x.sdk_version);
}

template <class V>
void wire_fields(V& v, ClientConfigResponse& x) {
  v.opt("pjwt_auth_enabled", x.pjwt_auth_enabled);
  v.opt("credential_default_source", x.credential_default_source);
  v.opt("sample_dispatch_bytes_semaphore_size", x.sample_dispatch_bytes_semaphore_size);
  v.opt("inflight_response_bytes_semaphore_size", x.inflight_response_bytes_semaphore_size);
  v.opt("parallel_fwdbwd_chunks", x.parallel_fwdbwd_chunks);
  v.opt("proto_compress_fwdbwd", x.proto_compress_fwdbwd);
  v.opt("fwdbwd_max_chunk_len", x.fwdbwd_max_chunk_len);
  v.opt("fwdbwd_max_chunk_bytes_count", x.fwdbwd_max_chunk_bytes_count);
  v.opt("fwdbwd_dispatch_bytes_semaphore_size", x.fwdbwd_dispatch_bytes_semaphore_size);
  v.opt("billing_exception_max_pause_duration_sec", x.billing_exception_max_pause_duration_sec);
  v.opt("sample_no_retries", x.sample_no_retries);
  v.opt("sample_enable_stuck_detection", x.sample_enable_stuck_detection);
  v.opt("sample_max_concurrent_requests", x.sample_max_concurrent_requests);
  v.opt("use_pyqwest_transport", x.use_pyqwest_transport);
  v.opt("create_model_via_load_weights", x.create_model_via_load_weights);
  v.opt("sample_use_retrieve_futures", x.sample_use_retrieve_futures);
  v.opt("proto_write_fwdbwd", x.proto_write_fwdbwd);
  v.opt("fwd_via_fwdbwd", x.fwd_via_fwdbwd);
}

template <class V>
void wire_fields(V& v, DynamicConfigResponse& x) {
  v.opt("refresh_interval_sec", x.refresh_interval_sec);
}

template <class V>
void wire_fields(V&, AuthTokenRequest&) {}

template <class V>
void wire_fields(V& v, AuthTokenResponse& x) {
  v.req("jwt", x.jwt);
}

template <class V>
void wire_fields(V& v, HealthResponse& x) {
  v.req("status", x.status);
}

template <class V>
void wire_fields(V& v, SupportedModel& x) {
  v.opt("model_name", x.model_name);
  v.opt("max_context_length", x.max_context_length);
}

template <class V>
void wire_fields(V& v, GetServerCapabilitiesResponse& x) {
  v.req("supported_models", x.supported_models);
}

template <class V>
void wire_fields(V& v, CreateSessionRequest& x) {
  v.opt("tags", x.tags);
  v.opt("user_metadata", x.user_metadata);
  v.req("sdk_version", x.sdk_version);
  v.opt("project_id", x.project_id);
  v.opt("display_name", x.display_name);
  v.tag("type", "create_session");
}

template <class V>
void wire_fields(V& v, CreateSessionResponse& x) {
  v.tag("type", "create_session");
  v.req("session_id", x.session_id);
  v.opt("info_message", x.info_message);
  v.opt("warning_message", x.warning_message);
  v.opt("error_message", x.error_message);
}

template <class V>
void wire_fields(V& v, SessionHeartbeatRequest& x) {
  v.req("session_id", x.session_id);
  v.tag("type", "session_heartbeat");
}

template <class V>
void wire_fields(V& v, SessionHeartbeatResponse&) {
  v.tag("type", "session_heartbeat");
}

template <class V>
void wire_fields(V& v, CreateSamplingSessionRequest& x) {
  v.req("session_id", x.session_id);
  v.req("sampling_session_seq_id", x.sampling_session_seq_id);
  v.opt("base_model", x.base_model);
  v.opt("model_path", x.model_path);
  v.tag("type", "create_sampling_session");
}

template <class V>
void wire_fields(V& v, CreateSamplingSessionResponse& x) {
  v.tag("type", "create_sampling_session");
  v.req("sampling_session_id", x.sampling_session_id);
}

template <class V>
void wire_fields(V& v, ListSessionsResponse& x) {
  v.req("sessions", x.sessions);
}

template <class V>
void wire_fields(V& v, GetSessionResponse& x) {
  v.req("training_run_ids", x.training_run_ids);
  v.req("sampler_ids", x.sampler_ids);
}

template <class V>
void wire_fields(V& v, AssignSessionProjectRequest& x) {
  v.req("project_id", x.project_id);
}

template <class V>
void wire_fields(V& v, TraceExportResponse& x) {
  v.req("status", x.status);
  v.opt("url", x.url);
  v.opt("error", x.error);
}

template <class V>
void wire_fields(V& v, GetSamplerResponse& x) {
  v.req("sampler_id", x.sampler_id);
  v.req("base_model", x.base_model);
  v.opt("model_path", x.model_path);
}

// --- telemetry, audit, billing, whoami (doc/protocol.md#telemetry, doc/rest.md) -------------

template <class V>
void wire_fields(V& v, TelemetryEvent& x) {
  v.req("event", x.event);
  v.req("event_id", x.event_id);
  v.req("event_session_index", x.event_session_index);
  v.req("severity", x.severity);
  v.req("timestamp", x.timestamp);
  v.opt("duration", x.duration);
  v.opt("error_type", x.error_type);
  v.opt("error_message", x.error_message);
  v.opt("traceback", x.traceback);
  v.opt("event_name", x.event_name);
  v.opt("event_data", x.event_data);
}

template <class V>
void wire_fields(V& v, TelemetryRequest& x) {
  v.req("events", x.events);
  v.req("platform", x.platform);
  v.req("sdk_version", x.sdk_version);
  v.req("session_id", x.session_id);
  v.req("process_uuid", x.process_uuid);
}

template <class V>
void wire_fields(V& v, TelemetryResponse& x) {
  v.req("status", x.status);
}

template <class V>
void wire_fields(V& v, AuditLogEntry& x) {
  v.req("timestamp", x.timestamp);
  v.req("event", x.event);
  v.opt("model_id", x.model_id);
  v.opt("tinker_path", x.tinker_path);
  v.opt("purpose", x.purpose);
}

template <class V>
void wire_fields(V& v, AuditLogResponse& x) {
  v.req("entries", x.entries);
}

template <class V>
void wire_fields(V& v, BillingUsageEntry& x) {
  v.req("bucket_start", x.bucket_start);
  v.req("bucket_end", x.bucket_end);
  v.opt("base_model", x.base_model);
  v.opt("user_id", x.user_id);
  v.opt("user_name", x.user_name);
  v.opt("session_id", x.session_id);
  v.opt("project_id", x.project_id);
  v.req("event_info", x.event_info);
}

template <class V>
void wire_fields(V& v, BillingSessionInfo& x) {
  v.opt("user_metadata", x.user_metadata);
}

template <class V>
void wire_fields(V& v, BillingUsageResponse& x) {
  v.req("data", x.data);
  v.opt("sessions", x.sessions);
}

template <class V>
void wire_fields(V& v, WhoamiResponse& x) {
  v.req("user_urn", x.user_urn);
  v.opt("email", x.email);
}

// --- checkpoint search, weights copy, storage usage (doc/rest.md#search-checkpoints, doc/service.md)

template <class V>
void wire_fields(V& v, CheckpointSearchCursor& x) {
  v.req("last_created_at", x.last_created_at);
  v.req("last_checkpoint_uuid", x.last_checkpoint_uuid);
}

template <class V>
void wire_fields(V& v, CheckpointSearchRequest& x) {
  v.opt("project_ids", x.project_ids);
  v.opt("user_metadata", x.user_metadata);
  v.opt("checkpoint_type", x.checkpoint_type);
  v.opt("owner", x.owner);
  v.opt("base_models", x.base_models);
  v.opt("limit", x.limit);
  v.opt("cursor", x.cursor);
}

template <class V>
void wire_fields(V& v, CheckpointSearchResponse& x) {
  v.req("checkpoints", x.checkpoints);
  v.opt("next_cursor", x.next_cursor);
}

template <class V>
void wire_fields(V& v, CopyWeightsRequest& x) {
  v.req("session_id", x.session_id);
  v.req("model_seq_id", x.model_seq_id);
  v.req("source_path", x.source_path);
  v.opt("ttl_seconds", x.ttl_seconds);
  v.opt("weights_access_token", x.weights_access_token);
}

template <class V>
void wire_fields(V& v, CopyWeightsResponse& x) {
  v.req("tinker_path", x.tinker_path);
}

template <class V>
void wire_fields(V& v, CheckpointStorageUsageItem& x) {
  v.opt("project_id", x.project_id);
  v.opt("org_user_urn", x.org_user_urn);
  v.opt("user_email", x.user_email);
  v.opt("user_name", x.user_name);
  v.req("checkpoint_count", x.checkpoint_count);
  v.req("size_bytes", x.size_bytes);
  v.req("size_gigabytes", x.size_gigabytes);
  v.opt("estimated_monthly_cost_usd", x.estimated_monthly_cost_usd);
}

template <class V>
void wire_fields(V& v, CheckpointStorageUsageResponse& x) {
  v.opt("effective_rate_usd_per_gigabyte_month", x.effective_rate_usd_per_gigabyte_month);
  v.req("data", x.data);
}

// Billing event_info variants of GET billing/usage/events (doc/rest.md): a tagged union on `type`
// whose members reject unknown fields.
namespace billing {
template <class V>
void wire_fields(V& v, Training& x) {
  v.tag("type", "training");
  v.req("token_count", x.token_count);
  v.strict();
}
template <class V>
void wire_fields(V& v, SamplingPrefill& x) {
  v.tag("type", "sampling_prefill");
  v.req("cached", x.cached);
  v.req("token_count", x.token_count);
  v.strict();
}
template <class V>
void wire_fields(V& v, SamplingSample& x) {
  v.tag("type", "sampling_sample");
  v.req("token_count", x.token_count);
  v.strict();
}
template <class V>
void wire_fields(V& v, CheckpointEvent& x) {
  v.tag("type", "checkpoint");
  v.req("count", x.count);
  v.strict();
}
template <class V>
void wire_fields(V& v, Storage& x) {
  v.tag("type", "storage");
  v.req("gigabyte_hours", x.gigabyte_hours);
  v.strict();
}
}  // namespace billing

}  // namespace tinker
