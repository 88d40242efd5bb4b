// Malformed and hostile documents produce decode errors that name the field path, never a crash;
// values JSON cannot carry are refused on encode with the path of the offending element.
#include "support/sample_values.hpp"

#include <tinker/codec.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace tinker {
namespace {

template <class T>
std::string decode_error_message(std::string_view body) {
  T out;
  diagnostics diag;
  const auto code = from_json(body, out, diag);
  EXPECT_EQ(code, make_error_code(errc::decode_error)) << body;
  // The throwing form agrees.
  try {
    (void)from_json<T>(body);
    ADD_FAILURE() << "no exception for " << body;
  } catch (const error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::decode_error));
    EXPECT_EQ(e.diag().message, diag.message);
  }
  return diag.message;
}

TEST(JsonMalformed, WrongElementTypeNamesThePath) {
  const std::string body =
      R"({"sequences":[{"stop_reason":"stop","tokens":[1]},{"stop_reason":"stop","tokens":[1]},)"
      R"({"stop_reason":"stop","tokens":[1]},{"stop_reason":"stop","tokens":[1,2,3,4,5,6,7,"8"]}]})";
  EXPECT_EQ(decode_error_message<SampleResponse>(body), "sequences[3].tokens[7]: expected integer, got string");
}

TEST(JsonMalformed, MissingRequiredFieldNamesIt) {
  EXPECT_EQ(decode_error_message<SampleResponse>(R"({"sequences":[{"tokens":[1]}]})"),
            "sequences[0].stop_reason: missing required field");
  EXPECT_EQ(decode_error_message<ForwardBackwardOutput>(R"({"loss_fn_output_type":"A","loss_fn_outputs":[]})"),
            "metrics: missing required field");
  EXPECT_EQ(decode_error_message<UntypedAPIFuture>("{}"), "request_id: missing required field");
}

TEST(JsonMalformed, WrongTypesEverywhere) {
  EXPECT_EQ(decode_error_message<UntypedAPIFuture>(R"({"request_id":7})"), "request_id: expected string, got integer");
  EXPECT_EQ(decode_error_message<SaveWeightsRequest>(R"({"model_id":"m","overwrite":"yes"})"),
            "overwrite: expected boolean, got string");
  EXPECT_EQ(decode_error_message<AdamParams>(R"({"learning_rate":"fast"})"),
            "learning_rate: expected number, got string");
  EXPECT_EQ(decode_error_message<ModelInput>(R"({"chunks":{}})"), "chunks: expected array, got object");
  EXPECT_EQ(decode_error_message<ModelInput>("[]"), "document: expected object, got array");
  EXPECT_EQ(decode_error_message<Cursor>(R"({"offset":1.5,"limit":1,"total_count":1})"),
            "offset: expected integer, got number");
}

TEST(JsonMalformed, TaggedUnionErrors) {
  EXPECT_EQ(decode_error_message<ModelInput>(R"({"chunks":[{"tokens":[1]}]})"),
            "chunks[0].type: missing required field");
  EXPECT_EQ(decode_error_message<ModelInput>(R"({"chunks":[{"type":"video"}]})"),
            "chunks[0].type: unknown type \"video\" (expected one of: encoded_text, image, image_asset_pointer, dmel)");
  EXPECT_EQ(decode_error_message<ModelInput>(R"({"chunks":[{"type":"image","data":"!!!","format":"png"}]})"),
            "chunks[0].data: invalid base64");
  EXPECT_EQ(decode_error_message<ModelInput>(R"({"chunks":[{"type":"image","data":"","format":"gif"}]})"),
            "chunks[0].format: unknown value \"gif\" (expected one of: png, jpeg)");
}

TEST(JsonMalformed, DiscriminatorMismatch) {
  EXPECT_EQ(decode_error_message<GetInfoResponse>(R"({"type":"get_lost","model_id":"m","model_data":{}})"),
            "type: expected \"get_info\", got \"get_lost\"");
}

TEST(JsonMalformed, TensorErrors) {
  EXPECT_EQ(decode_error_message<TensorData>(R"({"data":[1,2],"dtype":"float16"})"),
            "dtype: unknown dtype \"float16\" (expected one of: float32, int64)");
  EXPECT_EQ(decode_error_message<TensorData>(R"({"data":[1,2,3],"dtype":"float32","shape":[2,2]})"),
            "document: shape [2, 2] has 4 elements but data has 3 values");
  EXPECT_EQ(decode_error_message<TensorData>(R"({"data":[1,2.5],"dtype":"int64"})"),
            "data[1]: expected integer, got number");
  EXPECT_EQ(decode_error_message<Datum>(
                R"({"model_input":{"chunks":[]},"loss_fn_inputs":{"weights":{"data":[1e39],"dtype":"float32"}}})"),
            "loss_fn_inputs.weights.data[0]: number out of range for float32");
  EXPECT_EQ(
      decode_error_message<TensorData>(
          R"({"data":[1],"dtype":"float32","shape":[2,2],"sparse_crow_indices":[0,1,1],"sparse_col_indices":[5]})"),
      "document: sparse_col_indices[0] = 5 is outside [0, 2)");
}

TEST(JsonMalformed, HostileSparseShapeDoesNotOverflow) {
  EXPECT_EQ(decode_error_message<TensorData>(
                R"({"data":[],"dtype":"float32","shape":[9223372036854775807,1],"sparse_crow_indices":[0],)"
                R"("sparse_col_indices":[]})"),
            "document: sparse_crow_indices has 1 entries, expected rows + 1 for 9223372036854775807 rows");
}

TEST(JsonMalformed, HugeNumbers) {
  EXPECT_EQ(decode_error_message<Cursor>(R"({"offset":99999999999999999999999,"limit":1,"total_count":1})"),
            "offset: integer out of range for int64");
  EXPECT_EQ(decode_error_message<Cursor>(R"({"offset":18446744073709551615,"limit":1,"total_count":1})"),
            "offset: integer 18446744073709551615 out of range for int64");
  EXPECT_EQ(decode_error_message<ModelInput>(R"({"chunks":[{"type":"encoded_text","tokens":[2147483648]}]})"),
            "chunks[0].tokens[0]: integer 2147483648 out of range for int32");
  EXPECT_EQ(decode_error_message<AdamParams>(R"({"eps":1e999})"), "eps: number out of range");
}

TEST(JsonMalformed, InvalidDocuments) {
  for (const std::string_view body : {"", "{", R"({"request_id":"r")", R"({"request_id":"r"}})", "nul",
                                      R"({"request_id":"r",})", R"({"request_id":'r'})", "{\"request_id\":\"\xff\"}",
                                      "{\"request_id\":\"\xc0\xaf\"}", "{\"request_id\":\"\xed\xa0\x80\"}"}) {
    const std::string message = decode_error_message<UntypedAPIFuture>(body);
    EXPECT_TRUE(message.starts_with("invalid JSON at byte ")) << message;
  }
}

TEST(JsonMalformed, TruncatedAtEveryByteNeverCrashes) {
  const std::string full = to_json(test::sample<SampleResponse>());
  for (std::size_t n = 0; n < full.size(); ++n) {
    SampleResponse out;
    diagnostics diag;
    EXPECT_TRUE(from_json(std::string_view(full).substr(0, n), out, diag)) << n;
    EXPECT_FALSE(diag.message.empty());
  }
}

TEST(JsonMalformed, DeepNestingIsRefused) {
  std::string body = R"({"request_id":"r","x":)" + std::string(10000, '[') + std::string(10000, ']') + "}";
  EXPECT_TRUE(decode_error_message<UntypedAPIFuture>(body).starts_with("invalid JSON"));
}

TEST(JsonMalformed, BillingEventInfoForbidsUnknownFields) {
  EXPECT_EQ(decode_error_message<BillingUsageEntry>(
                R"({"bucket_start":"2026-07-13T00:00:00Z","bucket_end":"2026-07-13T01:00:00Z",)"
                R"("event_info":{"type":"training","token_count":1,"extra":2}})"),
            "event_info.extra: unknown field (this object forbids extra fields)");
}

TEST(JsonMalformed, BadTimestamp) {
  EXPECT_EQ(decode_error_message<AuditLogEntry>(R"({"timestamp":"2026-02-30T00:00:00Z","event":"e"})"),
            "timestamp: invalid timestamp \"2026-02-30T00:00:00Z\": no such date");
}

std::string encode_error_message(const auto& value) {
  try {
    (void)to_json(value);
  } catch (const error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument));
    return e.diag().message;
  }
  ADD_FAILURE() << "no exception";
  return {};
}

TEST(JsonEncodeErrors, NonFiniteTensorValuesNameTheElement) {
  ForwardBackwardRequest request = test::sample<ForwardBackwardRequest>();
  auto& weights = std::get<std::vector<float>>(request.forward_backward_input.data[0].loss_fn_inputs["weights"].values);
  weights[2] = std::nanf("");
  EXPECT_EQ(
      encode_error_message(request),
      "forward_backward_input.data[0].loss_fn_inputs.weights.data[2]: NaN and infinity cannot be encoded in JSON");
  weights[2] = -INFINITY;
  EXPECT_EQ(
      encode_error_message(request),
      "forward_backward_input.data[0].loss_fn_inputs.weights.data[2]: NaN and infinity cannot be encoded in JSON");
  Metrics metrics{{"loss:sum", NAN}};
  EXPECT_EQ(encode_error_message(OptimStepResponse(metrics)),
            "metrics.loss:sum: NaN and infinity cannot be encoded in JSON");
}

TEST(JsonEncodeErrors, MalformedTensorAndForwardOnly) {
  TensorData bad(std::vector<float>{1, 2, 3}, std::vector<std::int64_t>{2});
  EXPECT_EQ(encode_error_message(Datum(ModelInput::from_ints({1}), {{"weights", bad}})),
            "loss_fn_inputs.weights: shape [2] has 2 elements but data has 3 values");
  ForwardBackwardRequest forward_only = test::sample<ForwardBackwardRequest>();
  forward_only.forward_only = true;
  EXPECT_TRUE(encode_error_message(forward_only).starts_with("forward_only: the JSON form of forward_backward"));
}

TEST(JsonEncodeErrors, InvalidUtf8String) {
  EXPECT_EQ(encode_error_message(UntypedAPIFuture("bad\xff")), "request_id: string is not valid UTF-8");
}

TEST(JsonEncodeErrors, FailedAppendLeavesTheBufferUnchanged) {
  std::string buffer = "prefix";
  Metrics metrics{{"a:sum", 1.0}, {"b:sum", INFINITY}};
  EXPECT_THROW(append_json(OptimStepResponse(metrics), buffer), error);
  EXPECT_EQ(buffer, "prefix");
}

TEST(JsonEncodeErrors, PrintingNeverThrows) {
  Metrics metrics{{"loss:sum", NAN}};
  std::ostringstream os;
  os << OptimStepResponse(metrics);
  EXPECT_EQ(os.str(), R"({"metrics":{"loss:sum":"NaN"}})");
}

}  // namespace
}  // namespace tinker
