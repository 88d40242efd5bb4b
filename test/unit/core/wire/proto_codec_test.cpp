// Protobuf codec (doc/protocol.md#protobuf): byte-for-byte agreement with Python's protobuf (the
// golden files of test/golden/make_proto_goldens.py), decoding of what the Python side writes,
// round trips.
// Malformed input and encode errors are in proto_codec_errors_test.cpp.
#include <tinker/codec.hpp>

#include "tinker_public.pb.h"
#include "unit/core/wire/proto_test_util.hpp"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace tinker {
namespace {

using test::hex_bytes;
using test::le_bytes;
using test::read_golden;
using test::WireWriter;
using Shape = std::vector<std::int64_t>;
using Floats = std::vector<float>;
using Ints = std::vector<std::int64_t>;

// ---- the values of the golden files (keep in sync with make_proto_goldens.py) ---------------

TensorData csr_advantages() {
  TensorData t(Floats{1.5F, -2.0F}, Shape{2, 3});
  t.sparse_crow_indices = Ints{0, 1, 2};
  t.sparse_col_indices = Ints{2, 0};
  return t;
}

ForwardBackwardRequest golden_request() {
  Datum d0;
  d0.model_input.chunks.push_back(EncodedTextChunk(std::vector<TokenId>{1, 2, 3, 70000, 2147483647, -5}));
  d0.model_input.chunks.push_back(ImageChunk(hex_bytes("89504E470D0A1A0A0001"), ImageFormat::png, 4));
  d0.model_input.chunks.push_back(DmelChunk(hex_bytes("01020302AABB")));
  d0.loss_fn_inputs.emplace("target_tokens", TensorData(Ints{2, 3, 70000, 5, std::int64_t{1} << 40, -1}));
  d0.loss_fn_inputs.emplace("advantages", TensorData(Floats{0.5F, -1.25F, 2.0F, 0.0F, 3.5F, -0.0F}, Shape{6}));
  d0.loss_fn_inputs.emplace("logprobs", TensorData(Floats{-0.5F, -1, -2, -4, -8, -16}, Shape{2, 3}));
  Datum d1;
  d1.model_input.chunks.push_back(EncodedTextChunk(std::vector<TokenId>{42}));
  d1.model_input.chunks.push_back(ImageChunk(hex_bytes("FFD8FFE0"), ImageFormat::jpeg));
  d1.loss_fn_inputs.emplace("target_tokens", TensorData(Ints{10, 11, 12, 13, 14, 15}, Shape{2, 3}));
  d1.loss_fn_inputs.emplace("advantages", csr_advantages());
  d1.loss_fn_inputs.emplace("weights", TensorData(Floats{}));
  LossFnConfig config{{"clip_low_threshold", 0.75}, {"clip_high_threshold", 1.25}};
  return ForwardBackwardRequest("golden-model-0", 7, ForwardBackwardInput({d0, d1}, "ppo", config));
}

ForwardBackwardRequest golden_forward_only_request() {
  Datum d;
  d.model_input.chunks.push_back(EncodedTextChunk(std::vector<TokenId>{5, 6, 7}));
  d.loss_fn_inputs.emplace("target_tokens", TensorData(Ints{6, 7, 8}));
  d.loss_fn_inputs.emplace("weights", TensorData(Floats{1, 1, 0.25F}));
  return ForwardBackwardRequest("m", 1, ForwardBackwardInput({d}, "cross_entropy"), /*forward_only=*/true);
}

ForwardBackwardOutput golden_output_one_record() {
  std::vector<LossFnOutput> outputs(2);
  outputs[0].emplace("logprobs", TensorData(Floats{-0.25F, -1.5F, -3.0F}, Shape{3}));
  outputs[0].emplace("elementwise_loss", TensorData(Floats{0.25F, 1.5F, 3.0F}, Shape{3}));
  outputs[1].emplace("logprobs", TensorData(Floats{-0.125F}, Shape{1}));
  outputs[1].emplace("elementwise_loss", TensorData(Floats{0.125F}, Shape{1}));
  return ForwardBackwardOutput("ArrayRecord", outputs, Metrics{{"loss:sum", 4.875}});
}

ForwardBackwardOutput golden_output_two_records() {
  std::vector<LossFnOutput> outputs(2);
  outputs[0].emplace("logprobs", TensorData(Floats{1, 2, 3, 4}, Shape{2, 2}));
  outputs[1].emplace("logprobs", TensorData(Floats{5, 6, 7}, Shape{1, 3}));
  outputs[1].emplace("target_tokens", TensorData(Ints{9, -9}, Shape{2}));
  return ForwardBackwardOutput("ArrayRecord", outputs, Metrics{{"loss:sum", -2.5}, {"loss:mean", -1.25}});
}

SampleResponse golden_sample_response() {
  SampleResponse r;
  r.sequences.emplace_back(StopReason::stop, std::vector<TokenId>{264, 1899, 13}, Floats{-0.4F, -1.2F, -0.01F});
  r.sequences.emplace_back(StopReason::length, std::vector<TokenId>{5, 6});
  r.prompt_logprobs = std::vector<std::optional<float>>{std::nullopt, -3.2F, -0.7F};
  r.topk_prompt_logprobs = std::vector<std::optional<std::vector<TopkEntry>>>{
      std::nullopt, std::vector<TopkEntry>{{1879, -0.2F}, {11, -1.9F}}, std::vector<TopkEntry>{{13, -0.1F}}};
  r.prompt_cache_hit_tokens = 12;
  return r;
}

// ---- byte-for-byte agreement with Python -----------------------------------------------------

TEST(ProtoGolden, RequestEncodesToPythonBytes) {
  EXPECT_EQ(to_protobuf(golden_request()), read_golden("fb_request.bin"));
  EXPECT_EQ(to_protobuf(golden_forward_only_request()), read_golden("fb_request_forward_only.bin"));
}

// The request is written once, into a buffer of exactly its size: no growth copies, no spare room
// held while the body waits to be sent (doc/performance.md#training-path).
TEST(ProtoEncode, RequestFillsOneExactlySizedBuffer) {
  const std::string body = to_protobuf(golden_request());
  EXPECT_EQ(body.capacity(), body.size());
}

TEST(ProtoGolden, RequestDecodesFromPythonBytes) {
  EXPECT_EQ(from_protobuf<ForwardBackwardRequest>(read_golden("fb_request.bin")), golden_request());
  EXPECT_EQ(from_protobuf<ForwardBackwardRequest>(read_golden("fb_request_forward_only.bin")),
            golden_forward_only_request());
}

TEST(ProtoGolden, OutputEncodesToPythonBytes) {
  EXPECT_EQ(to_protobuf(golden_output_one_record()), read_golden("fb_output_one_record.bin"));
  // Datums with different trailing shapes or keys go into separate records.
  EXPECT_EQ(to_protobuf(golden_output_two_records()), read_golden("fb_output_two_records.bin"));
}

TEST(ProtoGolden, OutputDecodesFromPythonBytes) {
  EXPECT_EQ(from_protobuf<ForwardBackwardOutput>(read_golden("fb_output_one_record.bin")), golden_output_one_record());
  EXPECT_EQ(from_protobuf<ForwardBackwardOutput>(read_golden("fb_output_two_records.bin")),
            golden_output_two_records());
}

TEST(ProtoGolden, OutputWidensBfloat16AndInt32AndStripsModulePrefix) {
  std::vector<LossFnOutput> outputs(3);
  outputs[0].emplace("logprobs", TensorData(Floats{1.0F, -2.0F, 0.5F}, Shape{3}));
  outputs[0].emplace("target_tokens", TensorData(Ints{7, -8, 9}, Shape{3}));
  outputs[1].emplace("logprobs", TensorData(Floats{-0.25F}, Shape{1}));
  outputs[1].emplace("target_tokens", TensorData(Ints{100}, Shape{1}));
  outputs[2].emplace("logprobs", TensorData(Floats{}, Shape{0}));
  outputs[2].emplace("target_tokens", TensorData(Ints{}, Shape{0}));
  EXPECT_EQ(from_protobuf<ForwardBackwardOutput>(read_golden("fb_output_widened.bin")),
            ForwardBackwardOutput("TorchLossReturn", outputs, Metrics{}));
}

TEST(ProtoGolden, OutputWithoutNumDatumsCountsTheFirstField) {
  std::vector<LossFnOutput> outputs(2);
  outputs[0].emplace("logprobs", TensorData(Floats{-1}, Shape{1}));
  outputs[1].emplace("logprobs", TensorData(Floats{-2, -3}, Shape{2}));
  EXPECT_EQ(from_protobuf<ForwardBackwardOutput>(read_golden("fb_output_legacy.bin")),
            ForwardBackwardOutput("ArrayRecord", outputs, Metrics{{"loss:sum", 6.0}}));
}

TEST(ProtoGolden, SampleResponseEncodesToPythonBytes) {
  EXPECT_EQ(to_protobuf(golden_sample_response()), read_golden("sample_response.bin"));
}

TEST(ProtoGolden, SampleResponseDecodesFromPythonBytes) {
  EXPECT_EQ(from_protobuf<SampleResponse>(read_golden("sample_response.bin")), golden_sample_response());
}

TEST(ProtoGolden, SampleResponseEmptyOptionalFieldsReadAsAbsent) {
  SampleResponse expected;
  expected.sequences.emplace_back(StopReason::length, std::vector<TokenId>{});
  EXPECT_EQ(from_protobuf<SampleResponse>(read_golden("sample_response_empty_fields.bin")), expected);
}

// ---- round trips -----------------------------------------------------------------------------

TEST(ProtoRoundTrip, Requests) {
  for (const ForwardBackwardRequest& request : {golden_request(), golden_forward_only_request()}) {
    EXPECT_EQ(from_protobuf<ForwardBackwardRequest>(to_protobuf(request)), request);
  }
  ForwardBackwardRequest empty("", 0, ForwardBackwardInput({}, ""));
  EXPECT_EQ(from_protobuf<ForwardBackwardRequest>(to_protobuf(empty)), empty);
  EXPECT_EQ(to_protobuf(empty), "");  // every field at its default
}

TEST(ProtoRoundTrip, RequestExtremeValues) {
  Datum d;
  d.model_input.chunks.push_back(EncodedTextChunk(
      std::vector<TokenId>{std::numeric_limits<TokenId>::min(), 0, std::numeric_limits<TokenId>::max()}));
  d.model_input.chunks.push_back(ImageChunk({}, ImageFormat::png, std::numeric_limits<std::int32_t>::max()));
  d.model_input.chunks.push_back(DmelChunk(std::vector<std::uint8_t>{}));
  d.loss_fn_inputs.emplace(
      "ints", TensorData(Ints{std::numeric_limits<std::int64_t>::min(), -1, std::numeric_limits<std::int64_t>::max()}));
  // NaN and infinities are fine in protobuf (JSON cannot carry them).
  d.loss_fn_inputs.emplace("floats", TensorData(Floats{std::numeric_limits<float>::infinity(),
                                                       -std::numeric_limits<float>::denorm_min(), 1e38F}));
  d.loss_fn_inputs.emplace("empty_2d", TensorData(Floats{}, Shape{0, 4}));
  const ForwardBackwardRequest request("model-\xC3\xA9", -3,
                                       ForwardBackwardInput({d, d}, "dro", LossFnConfig{{"beta", 1e-300}}));
  EXPECT_EQ(from_protobuf<ForwardBackwardRequest>(to_protobuf(request)), request);

  Datum with_nan;
  with_nan.loss_fn_inputs.emplace("weights", TensorData(Floats{std::numeric_limits<float>::quiet_NaN()}));
  const auto decoded = from_protobuf<ForwardBackwardRequest>(
      to_protobuf(ForwardBackwardRequest("m", 1, ForwardBackwardInput({with_nan}, "cross_entropy"))));
  EXPECT_TRUE(std::isnan(decoded.forward_backward_input.data.at(0).loss_fn_inputs.at("weights").floats()[0]));
}

TEST(ProtoRoundTrip, EmptyLossFnConfigReadsBackAsAbsent) {
  // The wire cannot tell {} from "not set"; absent is what the JSON form defaults to.
  ForwardBackwardRequest request("m", 1, ForwardBackwardInput({}, "ppo", LossFnConfig{}));
  EXPECT_FALSE(from_protobuf<ForwardBackwardRequest>(to_protobuf(request)).forward_backward_input.loss_fn_config);
}

TEST(ProtoRoundTrip, OutputsWithMixedLayoutsUseSeveralRecords) {
  std::vector<LossFnOutput> outputs(5);
  outputs[0].emplace("logprobs", TensorData(Floats{-1, -2}, Shape{2}));
  outputs[1].emplace("logprobs", TensorData(Floats{-3}, Shape{1}));
  outputs[2].emplace("logprobs", TensorData(Ints{4, 5, 6}, Shape{3}));  // other dtype
  // outputs[3] has no fields at all
  outputs[4].emplace("logprobs", TensorData(Floats{-7, -8}, Shape{2}));
  outputs[4].emplace("extra", TensorData(Floats{1, 2, 3, 4, 5, 6}, Shape{1, 2, 3}));
  const ForwardBackwardOutput output("ArrayRecord", outputs, Metrics{{"loss:sum", 1.0}});
  const std::string bytes = to_protobuf(output);
  EXPECT_EQ(from_protobuf<ForwardBackwardOutput>(bytes), output);

  tinker_public::ForwardBackwardOutput msg;
  ASSERT_TRUE(msg.ParseFromString(bytes));
  ASSERT_EQ(msg.loss_fn_outputs_size(), 4);  // {0, 1}, {2}, {3}, {4}
  EXPECT_EQ(msg.loss_fn_outputs(0).num_datums(), 2);
  EXPECT_EQ(msg.loss_fn_outputs(2).num_datums(), 1);
  EXPECT_TRUE(msg.loss_fn_outputs(2).fields().empty());
  EXPECT_EQ(msg.loss_fn_outputs(3).fields().at("extra").trailing_shape_size(), 2);
}

TEST(ProtoRoundTrip, OutputShapesBecomeExplicitAndSparseBecomesDense) {
  std::vector<LossFnOutput> outputs(1);
  outputs[0].emplace("implicit", TensorData(Floats{1, 2}));
  outputs[0].emplace("sparse", csr_advantages());
  const auto decoded = from_protobuf<ForwardBackwardOutput>(to_protobuf(ForwardBackwardOutput("X", outputs, {})));
  ASSERT_EQ(decoded.loss_fn_outputs.size(), 1U);
  EXPECT_EQ(decoded.loss_fn_outputs[0].at("implicit"), TensorData(Floats{1, 2}, Shape{2}));
  EXPECT_EQ(decoded.loss_fn_outputs[0].at("sparse"), TensorData(Floats{0, 0, 1.5F, -2.0F, 0, 0}, Shape{2, 3}));
}

TEST(ProtoRoundTrip, OutputWithoutRecordsKeepsItsType) {
  EXPECT_EQ(from_protobuf<ForwardBackwardOutput>(to_protobuf(ForwardBackwardOutput("mod:Custom", {}, {}))),
            ForwardBackwardOutput("mod:Custom", {}, {}));
  EXPECT_EQ(from_protobuf<ForwardBackwardOutput>(to_protobuf(ForwardBackwardOutput("", {}, {{"a:sum", 2}}))),
            ForwardBackwardOutput("ArrayRecord", {}, {{"a:sum", 2}}));
  // With records, only the text after the last ':' is kept.
  std::vector<LossFnOutput> outputs(1);
  EXPECT_EQ(from_protobuf<ForwardBackwardOutput>(to_protobuf(ForwardBackwardOutput("a:b:Rec", outputs, {})))
                .loss_fn_output_type,
            "Rec");
}

TEST(ProtoRoundTrip, SampleResponses) {
  EXPECT_EQ(from_protobuf<SampleResponse>(to_protobuf(golden_sample_response())), golden_sample_response());
  SampleResponse minimal;
  EXPECT_EQ(from_protobuf<SampleResponse>(to_protobuf(minimal)), minimal);

  SampleResponse many;
  for (int i = 0; i < 50; ++i) {
    std::vector<TokenId> tokens(static_cast<std::size_t>(i));
    Floats logprobs(tokens.size(), -0.5F * static_cast<float>(i));
    many.sequences.emplace_back(i % 2 ? StopReason::stop : StopReason::length, tokens, logprobs);
  }
  many.sequences[0].logprobs.reset();  // empty logprobs could not round trip anyway
  many.prompt_cache_hit_tokens = std::numeric_limits<std::int32_t>::max();
  EXPECT_EQ(from_protobuf<SampleResponse>(to_protobuf(many)), many);
}

TEST(ProtoRoundTrip, TopkEdgeCases) {
  SampleResponse r;
  // All rows null: the matrix keeps one sentinel column so the rows survive.
  r.topk_prompt_logprobs = std::vector<std::optional<std::vector<TopkEntry>>>(3);
  r.prompt_logprobs = std::vector<std::optional<float>>(3);
  EXPECT_EQ(from_protobuf<SampleResponse>(to_protobuf(r)), r);

  // Ragged rows are padded to the longest; entries with the sentinel's logprob but another
  // token are real entries.
  r.topk_prompt_logprobs = std::vector<std::optional<std::vector<TopkEntry>>>{
      std::vector<TopkEntry>{{3, -99999.0F}}, std::nullopt, std::vector<TopkEntry>{{1, -1}, {2, -2}, {0, -3}, {4, -4}}};
  EXPECT_EQ(from_protobuf<SampleResponse>(to_protobuf(r)), r);

  // A non-null empty row cannot be told from a null one on the wire.
  r.topk_prompt_logprobs = std::vector<std::optional<std::vector<TopkEntry>>>{std::vector<TopkEntry>{}};
  const auto decoded = from_protobuf<SampleResponse>(to_protobuf(r));
  ASSERT_TRUE(decoded.topk_prompt_logprobs);
  EXPECT_EQ(decoded.topk_prompt_logprobs->at(0), std::nullopt);

  // An empty matrix (k = 0) reads back as "not requested", like an empty prompt_logprobs.
  r.topk_prompt_logprobs.emplace();
  r.prompt_logprobs.emplace();
  const auto none = from_protobuf<SampleResponse>(to_protobuf(r));
  EXPECT_FALSE(none.topk_prompt_logprobs);
  EXPECT_FALSE(none.prompt_logprobs);
}

TEST(ProtoDecode, SentinelCellsOnlyEndRows) {
  // Row 0: a real entry after a sentinel stays (only trailing sentinels are dropped).
  // Row 1: first cell sentinel -> null, whatever follows.
  tinker_public::SampleResponse msg;
  auto* topk = msg.mutable_topk_prompt_logprobs();
  topk->set_k(3);
  topk->set_prompt_length(2);
  topk->set_token_ids(le_bytes<std::int32_t>({7, 0, 8, 0, 9, 0}));
  topk->set_logprobs(le_bytes<float>({-1, -99999.0F, -2, -99999.0F, -3, -99999.0F}));
  const auto decoded = from_protobuf<SampleResponse>(msg.SerializeAsString());
  ASSERT_TRUE(decoded.topk_prompt_logprobs);
  EXPECT_EQ(decoded.topk_prompt_logprobs->at(0), (std::vector<TopkEntry>{{7, -1}, {0, -99999.0F}, {8, -2}}));
  EXPECT_EQ(decoded.topk_prompt_logprobs->at(1), std::nullopt);
}

// ---- the hand-written request encoder agrees with the generated code ----------------------

// What the generated classes write for `bytes` (deterministic: maps sorted by key).
std::string generated_reserialization(const std::string& bytes) {
  tinker_public::ForwardBackwardRequest msg;
  EXPECT_TRUE(msg.ParseFromString(bytes));
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    msg.SerializeToCodedStream(&coded);
  }
  return out;
}

// A request of random structure: every chunk kind, dense and CSR tensors of both dtypes, with
// and without shapes, empty strings, keys and arrays, negative and multi-byte varints.
ForwardBackwardRequest random_request(std::mt19937& rng) {
  const auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  const auto some_bytes = [&](int max) {
    std::vector<std::uint8_t> out(static_cast<std::size_t>(pick(max + 1)));
    for (auto& b : out) b = static_cast<std::uint8_t>(rng());
    return out;
  };
  const char* const names[] = {"", "target_tokens", "weights", "advantages", "logprobs", "x\xC3\xA9"};
  std::vector<Datum> data(static_cast<std::size_t>(pick(4)));
  for (Datum& d : data) {
    for (int c = pick(4); c > 0; --c) {
      switch (pick(3)) {
        case 0: {
          std::vector<TokenId> tokens(static_cast<std::size_t>(pick(6)));
          for (auto& t : tokens) t = static_cast<TokenId>(rng());
          d.model_input.chunks.push_back(EncodedTextChunk(tokens));
          break;
        }
        case 1: {
          std::optional<std::int64_t> expected;
          if (pick(2)) expected = static_cast<std::int32_t>(rng()) >> pick(32);
          d.model_input.chunks.push_back(
              ImageChunk(some_bytes(5), pick(2) ? ImageFormat::png : ImageFormat::jpeg, expected));
          break;
        }
        default: d.model_input.chunks.push_back(DmelChunk(some_bytes(5)));
      }
    }
    for (int t = pick(4); t > 0; --t) {
      const std::size_t n = static_cast<std::size_t>(pick(5));
      TensorData tensor;
      if (pick(2)) {
        Ints v(n);
        for (auto& x : v) {  // sign-extended, then shifted as unsigned (no UB), for 1..10-byte varints
          x = static_cast<std::int64_t>(static_cast<std::uint64_t>(static_cast<std::int32_t>(rng())) << pick(32));
        }
        tensor.values = v;
      } else {
        Floats v(n);
        for (auto& x : v) x = static_cast<float>(static_cast<std::int32_t>(rng())) / 1024.0F;
        tensor.values = v;
      }
      if (pick(3) == 0) tensor.shape = Shape{static_cast<std::int64_t>(n)};
      if (pick(3) == 0) tensor.shape = Shape{1, static_cast<std::int64_t>(n), 1};
      if (pick(4) == 0) {  // CSR: one value per row in column 0, rows = n, 130 columns (2-byte varint)
        tensor.shape = Shape{static_cast<std::int64_t>(n), 130};
        tensor.sparse_crow_indices = Ints(n + 1);
        for (std::size_t r = 0; r <= n; ++r) (*tensor.sparse_crow_indices)[r] = static_cast<std::int64_t>(r);
        tensor.sparse_col_indices = Ints(n, 0);
      }
      d.loss_fn_inputs.insert_or_assign(names[pick(6)], tensor);
    }
  }
  std::optional<LossFnConfig> config;
  if (pick(2)) config = LossFnConfig{{names[pick(6)], pick(2) ? 0.0 : -1e-7}, {"beta", 0.5}};
  const std::int64_t seq_id = pick(4) == 0 ? 0 : static_cast<std::int32_t>(rng());
  return ForwardBackwardRequest(pick(3) ? "model-1" : "", seq_id,
                                ForwardBackwardInput(std::move(data), pick(2) ? "ppo" : "", config), pick(2) == 1);
}

TEST(ProtoRequestEncoder, WritesWhatTheGeneratedCodeWrites) {
  for (const ForwardBackwardRequest& request : {golden_request(), golden_forward_only_request()}) {
    const std::string bytes = to_protobuf(request);
    EXPECT_EQ(generated_reserialization(bytes), bytes);
  }
  std::mt19937 rng(2024);  // fixed seed: reproducible
  for (int i = 0; i < 500; ++i) {
    const ForwardBackwardRequest request = random_request(rng);
    const std::string bytes = to_protobuf(request);
    ASSERT_EQ(generated_reserialization(bytes), bytes) << "request " << i;
    ASSERT_EQ(from_protobuf<ForwardBackwardRequest>(bytes), request) << "request " << i;
  }
}

// ---- decoding what other writers may produce -----------------------------------------------

// Datum { loss_fn_inputs["w"] = Tensor{dense, dtype, shape} } inside a ForwardBackwardRequest.
std::string request_with_tensor(const WireWriter& tensor) {
  const WireWriter entry = WireWriter().bytes(1, "w").message(2, tensor);
  const WireWriter datum = WireWriter().message(2, entry);
  return WireWriter().bytes(1, "m").varint(2, 1).message(3, datum).str();
}

TEST(ProtoDecode, PackedAndUnpackedShapesAreEquivalent) {
  const std::string dense = le_bytes<float>({1, 2, 3, 4, 5, 6});
  const auto packed = request_with_tensor(WireWriter().bytes(1, dense).varint(3, 1).packed(4, {2, 3}));
  const auto unpacked = request_with_tensor(WireWriter().bytes(1, dense).varint(3, 1).unpacked(4, {2, 3}));
  const TensorData expected(Floats{1, 2, 3, 4, 5, 6}, Shape{2, 3});
  for (const std::string& bytes : {packed, unpacked}) {
    EXPECT_EQ(from_protobuf<ForwardBackwardRequest>(bytes).forward_backward_input.data.at(0).loss_fn_inputs.at("w"),
              expected);
  }
}

// Fuzzing found records with no datum and no type decoding to type "" while the same output re-sent
// without records decoded to "ArrayRecord" (test/fuzz/regressions/protobuf_decode/).
TEST(ProtoDecode, EmptyTypeIsArrayRecordAlsoWithRecordsOfNoDatum) {
  const std::string bytes = WireWriter().message(2, WireWriter()).str();
  const auto decoded = from_protobuf<ForwardBackwardOutput>(bytes);
  EXPECT_EQ(decoded.loss_fn_output_type, "ArrayRecord");
  EXPECT_EQ(from_protobuf<ForwardBackwardOutput>(to_protobuf(decoded)), decoded);
}

// Fuzzing found a type whose bare class name is empty ("module::", records present) decoding to "",
// which re-sent without a type decoded to "ArrayRecord" (test/fuzz/regressions/protobuf_decode/).
TEST(ProtoDecode, ATypeWithAnEmptyBareNameIsArrayRecord) {
  const std::string bytes = WireWriter().bytes(1, "module::").message(2, WireWriter()).str();
  const auto decoded = from_protobuf<ForwardBackwardOutput>(bytes);
  EXPECT_EQ(decoded.loss_fn_output_type, "ArrayRecord");
  EXPECT_EQ(to_protobuf(from_protobuf<ForwardBackwardOutput>(to_protobuf(decoded))), to_protobuf(decoded));
}

TEST(ProtoDecode, PackedAndUnpackedTrailingShapesAreEquivalent) {
  const auto output_with = [](const WireWriter& trailing_shape_and_rest) {
    const WireWriter entry = WireWriter().bytes(1, "x").message(2, trailing_shape_and_rest);
    const WireWriter record = WireWriter().bytes(1, "ArrayRecord").message(2, entry).varint(3, 1);
    return WireWriter().bytes(1, "ArrayRecord").message(2, record).str();
  };
  const std::string data = le_bytes<std::int64_t>({1, 2, 3, 4, 5, 6});
  const std::string offsets = le_bytes<std::int64_t>({0, 48});
  const auto packed = output_with(WireWriter().bytes(1, data).bytes(2, offsets).varint(3, 2).packed(4, {1, 3}));
  const auto unpacked = output_with(WireWriter().bytes(1, data).bytes(2, offsets).varint(3, 2).unpacked(4, {1, 3}));
  for (const std::string& bytes : {packed, unpacked}) {
    EXPECT_EQ(from_protobuf<ForwardBackwardOutput>(bytes).loss_fn_outputs.at(0).at("x"),
              TensorData(Ints{1, 2, 3, 4, 5, 6}, Shape{2, 1, 3}));
  }
}

TEST(ProtoDecode, RequestTensorsWidenInt32AndBfloat16) {
  tinker_public::ForwardBackwardRequest msg;
  auto& inputs = *msg.add_data()->mutable_loss_fn_inputs();
  inputs["target_tokens"].set_dtype(tinker_public::DTYPE_INT32);
  inputs["target_tokens"].set_dense(le_bytes<std::int32_t>({-2147483647 - 1, -1, 5}));
  inputs["weights"].set_dtype(tinker_public::DTYPE_BFLOAT16);
  // bfloat16 1.0 = 0x3F80, -2.5 = 0xC020, +inf = 0x7F80
  inputs["weights"].set_dense(le_bytes<std::uint16_t>({0x3F80, 0xC020, 0x7F80}));
  inputs["sparse"].set_dtype(tinker_public::DTYPE_INT32);
  inputs["sparse"].mutable_sparse_csr()->set_values(le_bytes<std::int32_t>({9}));
  inputs["sparse"].mutable_sparse_csr()->set_crow_indices(le_bytes<std::int64_t>({0, 0, 1}));
  inputs["sparse"].mutable_sparse_csr()->set_col_indices(le_bytes<std::int64_t>({1}));
  inputs["sparse"].add_shape(2);
  inputs["sparse"].add_shape(2);
  const auto decoded = from_protobuf<ForwardBackwardRequest>(msg.SerializeAsString());
  const auto& got = decoded.forward_backward_input.data.at(0).loss_fn_inputs;
  EXPECT_EQ(got.at("target_tokens"), TensorData(Ints{-2147483648LL, -1, 5}));
  EXPECT_EQ(got.at("weights"), TensorData(Floats{1.0F, -2.5F, std::numeric_limits<float>::infinity()}));
  TensorData sparse(Ints{9}, Shape{2, 2});
  sparse.sparse_crow_indices = Ints{0, 0, 1};
  sparse.sparse_col_indices = Ints{1};
  EXPECT_EQ(got.at("sparse"), sparse);
}

TEST(ProtoDecode, TensorWithoutEncodingIsEmptyDense) {
  const auto bytes = request_with_tensor(WireWriter().varint(3, 2));
  EXPECT_EQ(from_protobuf<ForwardBackwardRequest>(bytes).forward_backward_input.data.at(0).loss_fn_inputs.at("w"),
            TensorData(Ints{}));
}

TEST(ProtoDecode, UnknownFieldsAreIgnored) {
  std::string bytes = to_protobuf(golden_sample_response());
  bytes += WireWriter().varint(99, 5).bytes(100, "future").str();
  EXPECT_EQ(from_protobuf<SampleResponse>(bytes), golden_sample_response());
}

}  // namespace
}  // namespace tinker
