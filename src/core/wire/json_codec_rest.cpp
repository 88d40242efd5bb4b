// JSON codec instantiations: bootstrap, sessions, checkpoints, REST, telemetry and billing.
#include "core/wire/json_api.hpp"

namespace tinker {

TINKER_INSTANTIATE_JSON(ClientConfigRequest);
TINKER_INSTANTIATE_JSON(ClientConfigResponse);
TINKER_INSTANTIATE_JSON(DynamicConfigResponse);
TINKER_INSTANTIATE_JSON(AuthTokenRequest);
TINKER_INSTANTIATE_JSON(AuthTokenResponse);
TINKER_INSTANTIATE_JSON(HealthResponse);
TINKER_INSTANTIATE_JSON(SupportedModel);
TINKER_INSTANTIATE_JSON(GetServerCapabilitiesResponse);
TINKER_INSTANTIATE_JSON(CreateSessionRequest);
TINKER_INSTANTIATE_JSON(CreateSessionResponse);
TINKER_INSTANTIATE_JSON(SessionHeartbeatRequest);
TINKER_INSTANTIATE_JSON(SessionHeartbeatResponse);
TINKER_INSTANTIATE_JSON(CreateSamplingSessionRequest);
TINKER_INSTANTIATE_JSON(CreateSamplingSessionResponse);
TINKER_INSTANTIATE_JSON(ListSessionsResponse);
TINKER_INSTANTIATE_JSON(GetSessionResponse);
TINKER_INSTANTIATE_JSON(AssignSessionProjectRequest);
TINKER_INSTANTIATE_JSON(TraceExportResponse);
TINKER_INSTANTIATE_JSON(GetSamplerResponse);
TINKER_INSTANTIATE_JSON(Checkpoint);
TINKER_INSTANTIATE_JSON(Cursor);
TINKER_INSTANTIATE_JSON(TrainingRun);
TINKER_INSTANTIATE_JSON(TrainingRunsResponse);
TINKER_INSTANTIATE_JSON(CheckpointsListResponse);
TINKER_INSTANTIATE_JSON(CheckpointArchiveUrlResponse);
TINKER_INSTANTIATE_JSON(SetCheckpointTtlRequest);
TINKER_INSTANTIATE_JSON(WeightsInfoRequest);
TINKER_INSTANTIATE_JSON(WeightsInfoResponse);
TINKER_INSTANTIATE_JSON(TelemetryEvent);
TINKER_INSTANTIATE_JSON(TelemetryRequest);
TINKER_INSTANTIATE_JSON(TelemetryResponse);
TINKER_INSTANTIATE_JSON(AuditLogEntry);
TINKER_INSTANTIATE_JSON(AuditLogResponse);
TINKER_INSTANTIATE_JSON(BillingUsageEntry);
TINKER_INSTANTIATE_JSON(BillingUsageResponse);
TINKER_INSTANTIATE_JSON(WhoamiResponse);

}  // namespace tinker
