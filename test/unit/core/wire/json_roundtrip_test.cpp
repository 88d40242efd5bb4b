// Every wire type survives JSON encode -> decode unchanged, its encoding is stable, and it is a
// non-aggregate (doc/architecture.md#toolchain-rules) that prints as JSON.
#include "support/sample_values.hpp"

#include <tinker/codec.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <sstream>
#include <type_traits>

namespace tinker {
namespace {

template <class T>
class JsonRoundTrip : public ::testing::Test {};

using WireTypes = ::testing::Types<
    ModelInput, TensorData, Datum, ForwardBackwardInput, ForwardBackwardOutput, AdamParams, LoraConfig,
    CreateModelRequest, CreateModelResponse, GetInfoRequest, ModelData, GetInfoResponse, UnloadModelRequest,
    UnloadModelResponse, ForwardBackwardRequest, ForwardRequest, OptimStepRequest, OptimStepResponse,
    SaveWeightsRequest, SaveWeightsResponse, LoadWeightsRequest, LoadWeightsResponse, SaveWeightsForSamplerRequest,
    SaveWeightsForSamplerResponse, SamplingParams, SampleRequest, SampledSequence, SampleResponse, UntypedAPIFuture,
    RetrieveFutureRequest, TryAgainResponse, FutureMetadataResponse, RequestFailedResponse, Checkpoint, Cursor,
    TrainingRun, TrainingRunsResponse, CheckpointsListResponse, CheckpointArchiveUrlResponse, SetCheckpointTtlRequest,
    WeightsInfoRequest, WeightsInfoResponse, ClientConfigRequest, ClientConfigResponse, DynamicConfigResponse,
    AuthTokenRequest, AuthTokenResponse, HealthResponse, SupportedModel, GetServerCapabilitiesResponse,
    CreateSessionRequest, CreateSessionResponse, SessionHeartbeatRequest, SessionHeartbeatResponse,
    CreateSamplingSessionRequest, CreateSamplingSessionResponse, ListSessionsResponse, GetSessionResponse,
    AssignSessionProjectRequest, TraceExportResponse, GetSamplerResponse, TelemetryEvent, TelemetryRequest,
    TelemetryResponse, AuditLogEntry, AuditLogResponse, BillingUsageEntry, BillingUsageResponse, WhoamiResponse>;
TYPED_TEST_SUITE(JsonRoundTrip, WireTypes);

TYPED_TEST(JsonRoundTrip, DecodesToTheEncodedValue) {
  const TypeParam original = test::sample<TypeParam>();
  const std::string json = to_json(original);
  const auto decoded = from_json<TypeParam>(json);
  EXPECT_EQ(decoded, original) << json;
  EXPECT_EQ(to_json(decoded), json);
}

TYPED_TEST(JsonRoundTrip, DefaultValueRoundTrips) {
  const TypeParam original{};
  const auto decoded = from_json<TypeParam>(to_json(original));
  EXPECT_EQ(decoded, original);
}

TYPED_TEST(JsonRoundTrip, IsANonAggregateThatPrintsAsJson) {
  static_assert(!std::is_aggregate_v<TypeParam>);
  const TypeParam value = test::sample<TypeParam>();
  std::ostringstream printed;
  printed << value;
  EXPECT_EQ(printed.str(), to_json(value));
}

TYPED_TEST(JsonRoundTrip, NonThrowingDecodeReportsSuccess) {
  TypeParam out;
  diagnostics diag;
  EXPECT_FALSE(from_json(to_json(test::sample<TypeParam>()), out, diag));
  EXPECT_TRUE(diag.empty());
}

TEST(JsonRoundTripBits, Float32ValuesAreBitIdentical) {
  std::vector<float> values;
  std::uint32_t bits = 0x3f800000;
  for (int i = 0; i < 20000; ++i) {
    bits = bits * 1664525u + 1013904223u;  // LCG over all bit patterns
    float f;
    std::memcpy(&f, &bits, sizeof f);
    if (std::isfinite(f)) values.push_back(f);
  }
  values.push_back(std::numeric_limits<float>::denorm_min());
  values.push_back(std::numeric_limits<float>::max());
  values.push_back(-0.0f);
  const TensorData original(values);
  const auto decoded = from_json<TensorData>(to_json(original));
  const auto floats = decoded.floats();
  ASSERT_EQ(floats.size(), values.size());
  EXPECT_EQ(std::memcmp(floats.data(), values.data(), values.size() * sizeof(float)), 0);
}

TEST(JsonRoundTripBits, DoublesAreBitIdentical) {
  // Boost.JSON 1.81's own parser is 1 ulp off on ~10% of 17-digit doubles; ours is exact.
  Metrics metrics;
  std::uint64_t bits = 0x3ff0000000000000ull;
  for (int i = 0; i < 5000; ++i) {
    bits = bits * 6364136223846793005ull + 1442695040888963407ull;
    double d;
    std::memcpy(&d, &bits, sizeof d);
    if (std::isfinite(d)) metrics["m" + std::to_string(i) + ":mean"] = d;
  }
  const OptimStepResponse original(metrics);
  EXPECT_EQ(from_json<OptimStepResponse>(to_json(original)), original);
}

}  // namespace
}  // namespace tinker
