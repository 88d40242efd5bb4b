// Protobuf codec (doc/protocol.md#protobuf): malformed input gives decode_error naming the field,
// values the wire cannot carry give invalid_argument, and nothing crashes or reads out of bounds
// (this file is meant to run under ASan + UBSan too).
#include <tinker/codec.hpp>

#include "tinker_public.pb.h"
#include "unit/core/wire/proto_test_util.hpp"

#include <google/protobuf/stubs/logging.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace tinker {
namespace {

namespace pb = ::tinker_public;
using test::expect_decode_error;
using test::expect_error;
using test::le_bytes;
using test::read_golden;
using test::WireWriter;

// ---- ForwardBackwardRequest ------------------------------------------------------------------

// A valid request with one datum: text chunk + float32 weights; tests break one thing at a time.
pb::ForwardBackwardRequest valid_request() {
  pb::ForwardBackwardRequest msg;
  msg.set_model_id("m");
  msg.set_seq_id(1);
  msg.set_loss_fn("cross_entropy");
  pb::Datum* datum = msg.add_data();
  datum->add_model_input()->mutable_encoded_text()->set_tokens(le_bytes<std::int32_t>({1, 2, 3}));
  pb::Tensor& weights = (*datum->mutable_loss_fn_inputs())["weights"];
  weights.set_dtype(pb::DTYPE_FLOAT32);
  weights.set_dense(le_bytes<float>({1, 1, 1}));
  return msg;
}

pb::Tensor& weights_of(pb::ForwardBackwardRequest& msg) {
  return (*msg.mutable_data(0)->mutable_loss_fn_inputs())["weights"];
}

void expect_request_error(const pb::ForwardBackwardRequest& msg, std::string_view path) {
  expect_decode_error<ForwardBackwardRequest>(msg.SerializeAsString(), path);
}

TEST(ProtoRequestErrors, ValidRequestDecodes) {
  EXPECT_NO_THROW((void)from_protobuf<ForwardBackwardRequest>(valid_request().SerializeAsString()));
}

TEST(ProtoRequestErrors, TokenBytesNotMultipleOfFour) {
  auto msg = valid_request();
  msg.mutable_data(0)->mutable_model_input(0)->mutable_encoded_text()->set_tokens("\x01\x02\x03\x04\x05");
  expect_request_error(msg, "data[0].model_input.chunks[0].encoded_text.tokens: byte length 5 is not a multiple of 4");
}

TEST(ProtoRequestErrors, EmptyChunkAndBadImageFormat) {
  auto msg = valid_request();
  msg.mutable_data(0)->add_model_input();
  expect_request_error(msg, "data[0].model_input.chunks[1]: chunk has no content");

  msg = valid_request();
  msg.mutable_data(0)->add_model_input()->mutable_image()->set_format("gif");
  expect_request_error(msg, "data[0].model_input.chunks[1].image.format: unknown image format \"gif\"");
}

TEST(ProtoRequestErrors, DenseBytesNotMultipleOfItemSize) {
  auto msg = valid_request();
  weights_of(msg).set_dense(std::string(10, '\0'));
  expect_request_error(msg, "data[0].loss_fn_inputs.weights.dense: byte length 10 is not a multiple of 4");
  weights_of(msg).set_dtype(pb::DTYPE_INT64);
  weights_of(msg).set_dense(std::string(12, '\0'));
  expect_request_error(msg, "data[0].loss_fn_inputs.weights.dense: byte length 12 is not a multiple of 8");
  weights_of(msg).set_dtype(pb::DTYPE_BFLOAT16);
  weights_of(msg).set_dense(std::string(3, '\0'));
  expect_request_error(msg, "data[0].loss_fn_inputs.weights.dense: byte length 3 is not a multiple of 2");
}

TEST(ProtoRequestErrors, UnsupportedDtype) {
  auto msg = valid_request();
  weights_of(msg).set_dtype(pb::DTYPE_UNSPECIFIED);
  expect_request_error(msg, "data[0].loss_fn_inputs.weights.dtype: unsupported dtype 0");
  weights_of(msg).set_dtype(static_cast<pb::DType>(42));
  expect_request_error(msg, "data[0].loss_fn_inputs.weights.dtype: unsupported dtype 42");
}

TEST(ProtoRequestErrors, ShapeDoesNotMatchValues) {
  auto msg = valid_request();
  weights_of(msg).add_shape(2);
  weights_of(msg).add_shape(2);
  expect_request_error(msg, "data[0].loss_fn_inputs.weights: shape [2, 2] has 4 elements but data has 3 values");
  weights_of(msg).clear_shape();
  weights_of(msg).add_shape(-3);
  expect_request_error(msg, "data[0].loss_fn_inputs.weights: shape [-3] is not a valid shape");
  weights_of(msg).clear_shape();
  for (int i = 0; i < 3; ++i) weights_of(msg).add_shape(std::int64_t{1} << 31);  // product overflows int64
  expect_request_error(msg, "data[0].loss_fn_inputs.weights: shape");
}

pb::Tensor csr(std::initializer_list<float> values, std::initializer_list<std::int64_t> crow,
               std::initializer_list<std::int64_t> col, std::initializer_list<std::int64_t> shape) {
  pb::Tensor t;
  t.set_dtype(pb::DTYPE_FLOAT32);
  t.mutable_sparse_csr()->set_values(le_bytes<float>(values));
  t.mutable_sparse_csr()->set_crow_indices(le_bytes<std::int64_t>(crow));
  t.mutable_sparse_csr()->set_col_indices(le_bytes<std::int64_t>(col));
  for (auto d : shape) t.add_shape(d);
  return t;
}

TEST(ProtoRequestErrors, InconsistentCsr) {
  const std::string_view path = "data[0].loss_fn_inputs.weights";
  auto msg = valid_request();
  weights_of(msg) = csr({1, 2}, {0, 1, 2}, {0, 1}, {2, 2});
  EXPECT_NO_THROW((void)from_protobuf<ForwardBackwardRequest>(msg.SerializeAsString()));

  weights_of(msg) = csr({1, 2}, {0, 1, 2}, {0, 1}, {2});  // not 2-D
  expect_request_error(msg, path);
  weights_of(msg) = csr({1, 2}, {0, 2}, {0, 1}, {2, 2});  // crow too short
  expect_request_error(msg, std::string(path) + ".sparse_crow_indices: 2 entries, expected rows + 1");
  weights_of(msg) = csr({1, 2}, {0, 1, 2}, {0}, {2, 2});  // one column index missing
  expect_request_error(msg, path);
  weights_of(msg) = csr({1, 2}, {0, 2, 1}, {0, 1}, {2, 2});  // decreasing crow
  expect_request_error(msg, path);
  weights_of(msg) = csr({1, 2}, {0, 1, 2}, {0, 2}, {2, 2});  // column out of range
  expect_request_error(msg, path);
  weights_of(msg) = csr({1}, {0, 1}, {0}, {std::numeric_limits<std::int64_t>::max(), 1});  // rows + 1 overflows
  expect_request_error(msg, std::string(path) + ".sparse_crow_indices");
  weights_of(msg) = csr({1, 2}, {0, 1, 2}, {0, 1}, {2, 2});
  weights_of(msg).mutable_sparse_csr()->set_crow_indices("\x00\x00\x00", 3);
  expect_request_error(msg, std::string(path) + ".sparse_csr.crow_indices: byte length 3 is not a multiple of 8");
}

TEST(ProtoRequestErrors, ImageAssetPointerCannotBeEncoded) {
  Datum d;
  d.model_input.chunks.push_back(EncodedTextChunk(std::vector<TokenId>{1}));
  d.model_input.chunks.push_back(EncodedTextChunk(std::vector<TokenId>{2}));
  d.model_input.chunks.push_back(ImageAssetPointerChunk("s3://bucket/cat.png", ImageFormat::png, 16));
  const ForwardBackwardRequest request("m", 1, ForwardBackwardInput({Datum(), d}, "cross_entropy"));
  expect_error(errc::invalid_argument, "data[1].model_input.chunks[2]: image_asset_pointer",
               [&] { (void)to_protobuf(request); });
}

TEST(ProtoRequestErrors, ValuesOutsideTheWireTypes) {
  const auto request_with = [](auto&& edit) {
    Datum d;
    d.model_input.chunks.push_back(ImageChunk({}, ImageFormat::png, 1));
    d.loss_fn_inputs.emplace("weights", TensorData(std::vector<float>{1}));
    ForwardBackwardRequest request("m", 1, ForwardBackwardInput({d}, "cross_entropy"));
    edit(request);
    return request;
  };
  const auto expect_encode_error = [](const ForwardBackwardRequest& request, std::string_view text) {
    expect_error(errc::invalid_argument, text, [&] { (void)to_protobuf(request); });
  };
  expect_encode_error(request_with([](auto& r) { r.seq_id = std::int64_t{1} << 31; }),
                      "seq_id: 2147483648 does not fit");
  expect_encode_error(request_with([](auto& r) {
                        std::get<ImageChunk>(r.forward_backward_input.data[0].model_input.chunks[0]).expected_tokens =
                            -(std::int64_t{1} << 40);
                      }),
                      "data[0].model_input.chunks[0].expected_tokens");
  expect_encode_error(request_with([](auto& r) { r.model_id = "bad\xFFutf8"; }), "model_id: not valid UTF-8");
  expect_encode_error(request_with([](auto& r) {
                        r.forward_backward_input.data[0].loss_fn_inputs.at("weights").shape =
                            std::vector<std::int64_t>{2};
                      }),
                      "data[0].loss_fn_inputs.weights: shape [2] has 2 elements but data has 1 values");
  expect_encode_error(request_with([](auto& r) {
                        r.forward_backward_input.data[0].loss_fn_inputs.at("weights").sparse_col_indices =
                            std::vector<std::int64_t>{0};
                      }),
                      "data[0].loss_fn_inputs.weights");
}

// ---- ForwardBackwardOutput -------------------------------------------------------------------

// One record, two datums, float32 field "logprobs" = [1, 2] | [3].
pb::ForwardBackwardOutput valid_output() {
  pb::ForwardBackwardOutput msg;
  msg.set_loss_fn_output_type("ArrayRecord");
  pb::ArrayRecord* record = msg.add_loss_fn_outputs();
  record->set_num_datums(2);
  pb::BatchedTensor& field = (*record->mutable_fields())["logprobs"];
  field.set_dtype(pb::DTYPE_FLOAT32);
  field.set_data(le_bytes<float>({1, 2, 3}));
  field.set_offsets(le_bytes<std::int64_t>({0, 8, 12}));
  return msg;
}

pb::BatchedTensor& field_of(pb::ForwardBackwardOutput& msg) {
  return (*msg.mutable_loss_fn_outputs(0)->mutable_fields())["logprobs"];
}

void expect_output_error(const pb::ForwardBackwardOutput& msg, std::string_view path) {
  expect_decode_error<ForwardBackwardOutput>(msg.SerializeAsString(), path);
}

TEST(ProtoOutputErrors, ValidOutputDecodes) {
  const auto out = from_protobuf<ForwardBackwardOutput>(valid_output().SerializeAsString());
  ASSERT_EQ(out.loss_fn_outputs.size(), 2U);
  EXPECT_EQ(out.loss_fn_outputs[1].at("logprobs"), TensorData(std::vector<float>{3}, std::vector<std::int64_t>{1}));
}

TEST(ProtoOutputErrors, BadOffsets) {
  const std::string path = "loss_fn_outputs[0].fields.logprobs.offsets";
  auto msg = valid_output();
  field_of(msg).set_offsets(le_bytes<std::int64_t>({0, 8}));
  expect_output_error(msg, path + ": 2 offsets, expected num_datums + 1 = 3");
  field_of(msg).set_offsets(le_bytes<std::int64_t>({0, 8, 16}));
  expect_output_error(msg, path + "[2]: 16 outside data of 12 bytes");
  field_of(msg).set_offsets(le_bytes<std::int64_t>({-4, 8, 12}));
  expect_output_error(msg, path + "[0]: -4 outside data");
  field_of(msg).set_offsets(le_bytes<std::int64_t>({0, 12, 8}));
  expect_output_error(msg, path + "[2]: 8 is below the previous offset");
  field_of(msg).set_offsets(le_bytes<std::int64_t>({0, 6, 12}));
  expect_output_error(msg, path + "[1]: 6 is not a multiple of the item size 4");
  field_of(msg).set_offsets(std::string(23, '\0'));
  expect_output_error(msg, path + ": byte length 23 is not a multiple of 8");
  field_of(msg).set_offsets(le_bytes<std::int64_t>({0, std::numeric_limits<std::int64_t>::max(), 12}));
  expect_output_error(msg, path + "[1]");
}

TEST(ProtoOutputErrors, BadDataAndDtypeAndShape) {
  const std::string path = "loss_fn_outputs[0].fields.logprobs";
  auto msg = valid_output();
  field_of(msg).set_data(std::string(13, '\0'));
  expect_output_error(msg, path + ".data: byte length 13 is not a multiple of 4");
  msg = valid_output();
  field_of(msg).set_dtype(pb::DTYPE_UNSPECIFIED);
  expect_output_error(msg, path + ".dtype: unsupported dtype 0");
  msg = valid_output();
  field_of(msg).add_trailing_shape(2);  // datum 1 has 1 element: not a whole row of 2
  expect_output_error(msg, path + ".data[1]: 1 elements do not fill whole rows");
  msg = valid_output();
  field_of(msg).add_trailing_shape(-1);
  expect_output_error(msg, path + ".trailing_shape[0]: negative dimension -1");
  msg = valid_output();
  field_of(msg).add_trailing_shape(0);
  expect_output_error(msg, path + ".data[0]: 2 elements do not fill whole rows");
  msg = valid_output();
  for (int i = 0; i < 3; ++i) field_of(msg).add_trailing_shape(std::int64_t{1} << 31);
  expect_output_error(msg, path + ".trailing_shape: element count overflows int64");
}

TEST(ProtoOutputErrors, BadNumDatums) {
  auto msg = valid_output();
  msg.mutable_loss_fn_outputs(0)->set_num_datums(-1);
  expect_output_error(msg, "loss_fn_outputs[0].num_datums: negative (-1)");
  msg = valid_output();
  msg.mutable_loss_fn_outputs(0)->set_num_datums(3);
  expect_output_error(msg, "loss_fn_outputs[0].fields.logprobs.offsets: 3 offsets, expected num_datums + 1 = 4");
  // A huge count without fields would allocate without bound: refused.
  msg = valid_output();
  msg.mutable_loss_fn_outputs(0)->clear_fields();
  msg.mutable_loss_fn_outputs(0)->set_num_datums(std::int64_t{1} << 40);
  expect_output_error(msg, "loss_fn_outputs[0].num_datums: more than");
  msg.mutable_loss_fn_outputs(0)->set_num_datums(std::int64_t{1} << 16);
  EXPECT_EQ(from_protobuf<ForwardBackwardOutput>(msg.SerializeAsString()).loss_fn_outputs.size(), std::size_t{1} << 16);
  msg.mutable_loss_fn_outputs(0)->set_num_datums((std::int64_t{1} << 16) + 1);
  expect_output_error(msg, "loss_fn_outputs[0].num_datums: more than 65536 datums in total");
  msg.mutable_loss_fn_outputs(0)->set_num_datums(std::numeric_limits<std::int64_t>::max());
  msg.add_loss_fn_outputs()->set_num_datums(std::numeric_limits<std::int64_t>::max());
  expect_output_error(msg, "loss_fn_outputs[0].num_datums: more than");
}

TEST(ProtoOutputErrors, EncodeRejectsMalformedTensors) {
  std::vector<LossFnOutput> outputs(2);
  outputs[1].emplace("logprobs", TensorData(std::vector<float>{1, 2}, std::vector<std::int64_t>{3}));
  expect_error(errc::invalid_argument, "loss_fn_outputs[1].logprobs: shape [3] has 3 elements",
               [&] { (void)to_protobuf(ForwardBackwardOutput("ArrayRecord", outputs, {})); });
  expect_error(errc::invalid_argument, "metrics.\xFF: not valid UTF-8", [&] {
    (void)to_protobuf(ForwardBackwardOutput("ArrayRecord", {}, {{"\xFF", 1.0}}));
  });
}

// ---- SampleResponse --------------------------------------------------------------------------

TEST(ProtoSampleErrors, UnknownStopReason) {
  pb::SampleResponse msg;
  msg.add_sequences();
  msg.add_sequences()->set_stop_reason(static_cast<pb::StopReason>(7));
  expect_decode_error<SampleResponse>(msg.SerializeAsString(), "sequences[1].stop_reason: unknown stop reason 7");
}

TEST(ProtoSampleErrors, ArrayLengths) {
  pb::SampleResponse msg;
  msg.add_sequences()->set_tokens("12345");
  expect_decode_error<SampleResponse>(msg.SerializeAsString(), "sequences[0].tokens: byte length 5");
  msg.mutable_sequences(0)->set_tokens("");
  msg.mutable_sequences(0)->set_logprobs("123");
  expect_decode_error<SampleResponse>(msg.SerializeAsString(), "sequences[0].logprobs: byte length 3");
  msg.mutable_sequences(0)->clear_logprobs();
  msg.set_prompt_logprobs("123456");
  expect_decode_error<SampleResponse>(msg.SerializeAsString(), "prompt_logprobs: byte length 6");
}

TEST(ProtoSampleErrors, TopkSizes) {
  pb::SampleResponse msg;
  auto* topk = msg.mutable_topk_prompt_logprobs();
  topk->set_k(2);
  topk->set_prompt_length(2);
  topk->set_token_ids(le_bytes<std::int32_t>({1, 2, 3}));
  topk->set_logprobs(le_bytes<float>({1, 2, 3, 4}));
  expect_decode_error<SampleResponse>(msg.SerializeAsString(), "topk_prompt_logprobs.token_ids: 12 bytes");
  topk->set_token_ids(le_bytes<std::int32_t>({1, 2, 3, 4}));
  topk->set_logprobs(le_bytes<float>({1, 2, 3, 4, 5}));
  expect_decode_error<SampleResponse>(msg.SerializeAsString(), "topk_prompt_logprobs.logprobs: 20 bytes");
  // n * k near 2^64 must not overflow or allocate.
  topk->set_k(std::numeric_limits<std::uint32_t>::max());
  topk->set_prompt_length(std::numeric_limits<std::uint32_t>::max());
  expect_decode_error<SampleResponse>(msg.SerializeAsString(), "topk_prompt_logprobs.token_ids");
}

TEST(ProtoSampleErrors, EncodeRejectsCacheHitsBeyondInt32) {
  SampleResponse r;
  r.prompt_cache_hit_tokens = std::int64_t{1} << 32;
  expect_error(errc::invalid_argument, "prompt_cache_hit_tokens", [&] { (void)to_protobuf(r); });
}

// ---- garbage, truncation, corruption ----------------------------------------------------------

// Corrupted strings make protobuf log "invalid UTF-8" for every attempt; keep the test output
// readable by discarding protobuf's log while a test runs.
class QuietProtobufLog {
 public:
  QuietProtobufLog() : previous_(google::protobuf::SetLogHandler(nullptr)) {}
  ~QuietProtobufLog() { google::protobuf::SetLogHandler(previous_); }
  QuietProtobufLog(const QuietProtobufLog&) = delete;
  QuietProtobufLog& operator=(const QuietProtobufLog&) = delete;

 private:
  google::protobuf::LogHandler* previous_;
};

// Decoding must either succeed or throw decode_error; anything else (a crash, another
// exception, a sanitizer report) fails the test.
template <class T>
void decode_survives(std::string_view bytes) {
  try {
    (void)from_protobuf<T>(bytes);
  } catch (const error& e) {
    ASSERT_EQ(e.code(), make_error_code(errc::decode_error)) << e.what();
    ASSERT_FALSE(e.diag().message.empty());
  }
}

TEST(ProtoMalformed, GarbageIsADecodeError) {
  for (const std::string& garbage : {std::string("\xFF\xFF\xFF\xFF"),
                                     std::string("\x0A\x05"
                                                 "ab"),
                                     std::string("\x1A\xFF\xFF\xFF\xFF\x0F"), std::string("\x07")}) {
    expect_decode_error<ForwardBackwardRequest>(garbage, "ForwardBackwardRequest: malformed protobuf message");
    expect_decode_error<ForwardBackwardOutput>(garbage, "ForwardBackwardOutput: malformed protobuf message");
    expect_decode_error<SampleResponse>(garbage, "SampleResponse: malformed protobuf message");
  }
}

template <class T>
void check_truncations_and_flips(const std::string& golden) {
  ASSERT_FALSE(golden.empty());
  for (std::size_t n = 0; n < golden.size(); ++n) decode_survives<T>(std::string_view(golden).substr(0, n));
  std::mt19937 rng(1234);  // fixed seed: reproducible
  for (int round = 0; round < 2000; ++round) {
    std::string bytes = golden;
    const int flips = 1 + static_cast<int>(rng() % 3);
    for (int f = 0; f < flips; ++f) bytes[rng() % bytes.size()] = static_cast<char>(rng() & 0xFF);
    decode_survives<T>(bytes);
  }
}

TEST(ProtoMalformed, TruncatedAndCorruptedGoldensNeverCrash) {
  const QuietProtobufLog quiet;
  check_truncations_and_flips<ForwardBackwardRequest>(read_golden("fb_request.bin"));
  check_truncations_and_flips<ForwardBackwardOutput>(read_golden("fb_output_one_record.bin"));
  check_truncations_and_flips<ForwardBackwardOutput>(read_golden("fb_output_widened.bin"));
  check_truncations_and_flips<SampleResponse>(read_golden("sample_response.bin"));
}

TEST(ProtoMalformed, WrongMessageTypeNeverCrashes) {
  const QuietProtobufLog quiet;
  for (const char* name : {"fb_request.bin", "fb_output_two_records.bin", "sample_response.bin"}) {
    const std::string bytes = read_golden(name);
    decode_survives<ForwardBackwardRequest>(bytes);
    decode_survives<ForwardBackwardOutput>(bytes);
    decode_survives<SampleResponse>(bytes);
  }
}

}  // namespace
}  // namespace tinker
