// Every JSON decoder of the wire types through the one generic entry point, tinker::from_json<T>: the
// first byte chooses the type (the order of kTypes below), the rest is the body. What is checked
// beyond the sanitizers: a decoder either succeeds or reports decode_error (never another exception or a
// crash), and a value it accepted that encodes again decodes again to an equal value, with the same
// encoding (the SDK re-sends decoded values, tinker-local answers with them). Every body also goes to
// the plain readers of the hot paths (future tickets, batched completions): what they accept, the
// schema decoder must accept and read alike.
#include "core/wire/completions_reader.hpp"
#include "core/wire/future_ticket.hpp"
#include "fuzz_support.hpp"

#include <tinker/codec.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

namespace tinker::fuzz {
namespace {

// Append new types at the end: a corpus file's first byte is an index into this list.
using kTypes = std::tuple<
    // json_codec_rest.cpp
    ClientConfigRequest, ClientConfigResponse, DynamicConfigResponse, AuthTokenRequest, AuthTokenResponse,
    HealthResponse, SupportedModel, GetServerCapabilitiesResponse, CreateSessionRequest, CreateSessionResponse,
    SessionHeartbeatRequest, SessionHeartbeatResponse, CreateSamplingSessionRequest, CreateSamplingSessionResponse,
    ListSessionsResponse, GetSessionResponse, AssignSessionProjectRequest, TraceExportResponse, GetSamplerResponse,
    Checkpoint, Cursor, TrainingRun, TrainingRunsResponse, CheckpointsListResponse, CheckpointArchiveUrlResponse,
    SetCheckpointTtlRequest, WeightsInfoRequest, WeightsInfoResponse, TelemetryEvent, TelemetryRequest,
    TelemetryResponse, AuditLogEntry, AuditLogResponse, BillingUsageEntry, BillingUsageResponse, WhoamiResponse,
    // json_codec_sampling.cpp
    SamplingParams, SampleRequest, SampledSequence, SampleResponse, UntypedAPIFuture, RetrieveFutureRequest,
    TryAgainResponse, FutureMetadataResponse, RequestFailedResponse,
    // json_codec_training.cpp
    ModelInput, TensorData, Datum, ForwardBackwardInput, ForwardBackwardOutput, AdamParams, LoraConfig,
    CreateModelRequest, CreateModelResponse, GetInfoRequest, ModelData, GetInfoResponse, UnloadModelRequest,
    UnloadModelResponse, ForwardBackwardRequest, ForwardRequest, OptimStepRequest, OptimStepResponse,
    SaveWeightsRequest, SaveWeightsResponse, LoadWeightsRequest, LoadWeightsResponse, SaveWeightsForSamplerRequest,
    SaveWeightsForSamplerResponse>;

template <class T>
void decode_as(std::string_view body) {
  T value;
  diagnostics diag;
  const boost::system::error_code ec = from_json(body, value, diag);
  if (ec) {
    if (ec != errc::decode_error) property_failed("from_json failed with a code other than decode_error");
    return;
  }
  std::string encoded;
  try {
    encoded = to_json(value);
  } catch (const error&) {
    return;  // a value JSON cannot carry back (the encoder is stricter than the decoder, by design)
  }
  T again;
  if (from_json(encoded, again, diag)) property_failed("a re-encoded value does not decode: " + encoded);
  if constexpr (std::equality_comparable<T>) {
    if (!(again == value)) property_failed("a re-encoded value decodes to a different value: " + encoded);
  }
  if (to_json(again) != encoded) property_failed("encoding is not stable across a round trip: " + encoded);
}

template <std::size_t... I>
void decode_selected(std::size_t choice, std::string_view body, std::index_sequence<I...>) {
  ((choice == I ? decode_as<std::tuple_element_t<I, kTypes>>(body) : void()), ...);
}

void check_plain_readers(std::string_view body) {
  diagnostics diag;
  UntypedAPIFuture ticket;
  if (wire::read_plain_future_ticket(body, ticket)) {
    UntypedAPIFuture decoded;
    if (from_json(body, decoded, diag) || !(decoded == ticket)) {
      property_failed("the plain ticket reader accepted what the decoder reads otherwise");
    }
  }
  std::vector<wire::PlainCompletion> completions;
  std::int64_t cursor = 0;
  if (wire::read_plain_completions(body, completions, cursor)) {
    FuturesRetrieveResponse decoded;
    if (from_json(body, decoded, diag) || decoded.cursor != cursor ||
        decoded.completions.size() != completions.size()) {
      property_failed("the plain completions reader accepted what the decoder reads otherwise");
    }
    for (std::size_t i = 0; i < completions.size(); ++i) {
      if (decoded.completions[i].state != completions[i].state ||
          decoded.completions[i].request_id != completions[i].request_id) {
        property_failed("the plain completions reader read a completion otherwise than the decoder");
      }
    }
  }
}

}  // namespace
}  // namespace tinker::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tinker::fuzz;
  constexpr std::size_t count = std::tuple_size_v<kTypes>;
  const Selected input(data, size, count);
  decode_selected(input.choice(), input.rest(), std::make_index_sequence<count>());
  check_plain_readers(input.rest());
  return 0;
}
