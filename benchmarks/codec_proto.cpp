// Protobuf codec throughput (doc/protocol.md#protobuf): the forward_backward request the Python SDK 0.25 always
// sends as protobuf, its zstd-compressed form, the ForwardBackwardOutput and SampleResponse
// results. Counters: bytes_per_second (of protobuf bytes) and ns_per_number (per value in the
// payload), as in codec_json.cpp, so the two codecs compare directly.
#include "codec_data.hpp"

#include <tinker/codec.hpp>

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

namespace {

using namespace tinker;
using bench::fwdbwd_numbers;
using bench::report;
using bench::sample_numbers;

constexpr double output_numbers = double(bench::fwdbwd_datums) * bench::fwdbwd_tokens * 2;  // logprobs, loss

/// What a cross_entropy forward_backward returns for the benchmark request: per-token logprobs
/// and elementwise loss for every datum (one ArrayRecord on the wire).
ForwardBackwardOutput make_forward_backward_output() {
  bench::Lcg rng(99);
  std::vector<LossFnOutput> outputs(bench::fwdbwd_datums);
  for (auto& out : outputs) {
    std::vector<float> logprobs(bench::fwdbwd_tokens);
    for (auto& v : logprobs) v = rng.next_logprob();
    std::vector<float> loss(logprobs.size());
    for (std::size_t i = 0; i < loss.size(); ++i) loss[i] = -logprobs[i];
    const std::vector<std::int64_t> shape{bench::fwdbwd_tokens};
    out.emplace("logprobs", TensorData(std::move(logprobs), shape));
    out.emplace("elementwise_loss", TensorData(std::move(loss), shape));
  }
  return ForwardBackwardOutput("ArrayRecord", std::move(outputs), Metrics{{"loss:sum", 1.0}});
}

void BM_Proto_EncodeForwardBackward(benchmark::State& state) {
  const ForwardBackwardRequest request = bench::make_forward_backward_request();
  std::size_t size = 0;
  for (auto _ : state) {
    const std::string bytes = to_protobuf(request);
    size = bytes.size();
    benchmark::DoNotOptimize(bytes.data());
  }
  report(state, size, fwdbwd_numbers);
}
BENCHMARK(BM_Proto_EncodeForwardBackward)->Unit(benchmark::kMillisecond);

void BM_Proto_DecodeForwardBackward(benchmark::State& state) {
  const std::string bytes = to_protobuf(bench::make_forward_backward_request());
  for (auto _ : state) {
    auto decoded = from_protobuf<ForwardBackwardRequest>(bytes);
    benchmark::DoNotOptimize(decoded.forward_backward_input.data.data());
  }
  report(state, bytes.size(), fwdbwd_numbers);
}
BENCHMARK(BM_Proto_DecodeForwardBackward)->Unit(benchmark::kMillisecond);

// What the Python SDK sends with proto_compress_fwdbwd: encode, then one zstd frame (level 3).
// bytes_per_second counts the uncompressed protobuf bytes.
void BM_Proto_EncodeForwardBackwardZstd(benchmark::State& state) {
  const ForwardBackwardRequest request = bench::make_forward_backward_request();
  std::size_t size = 0;
  std::size_t compressed = 0;
  for (auto _ : state) {
    const std::string bytes = to_protobuf(request);
    const std::string frame = zstd_compress(bytes);
    size = bytes.size();
    compressed = frame.size();
    benchmark::DoNotOptimize(frame.data());
  }
  report(state, size, fwdbwd_numbers);
  state.counters["compressed_ratio"] = static_cast<double>(compressed) / static_cast<double>(size);
}
BENCHMARK(BM_Proto_EncodeForwardBackwardZstd)->Unit(benchmark::kMillisecond);

// The cookbook's SFT step (128 x 2048) as the SDK encodes it, plain and with the zstd frame; bytes_per_second
// counts the protobuf body (before compression).
void BM_Proto_EncodeSftStep(benchmark::State& state) {
  const ForwardBackwardRequest request = bench::make_forward_backward_request(bench::sft_datums, bench::sft_tokens);
  std::size_t size = 0;
  for (auto _ : state) {
    const std::string bytes = to_protobuf(request);
    size = bytes.size();
    benchmark::DoNotOptimize(bytes.data());
  }
  report(state, size, bench::sft_numbers);
}
BENCHMARK(BM_Proto_EncodeSftStep)->Unit(benchmark::kMillisecond);

void BM_Proto_EncodeSftStepZstd(benchmark::State& state) {
  const ForwardBackwardRequest request = bench::make_forward_backward_request(bench::sft_datums, bench::sft_tokens);
  std::size_t size = 0;
  std::size_t compressed = 0;
  for (auto _ : state) {
    const std::string bytes = to_protobuf(request);
    const std::string frame = zstd_compress(bytes);
    size = bytes.size();
    compressed = frame.size();
    benchmark::DoNotOptimize(frame.data());
  }
  report(state, size, bench::sft_numbers);
  state.counters["compressed_ratio"] = static_cast<double>(compressed) / static_cast<double>(size);
}
BENCHMARK(BM_Proto_EncodeSftStepZstd)->Unit(benchmark::kMillisecond);

// The server side of the same body: decompress (with a bomb limit) and decode.
void BM_Proto_DecodeForwardBackwardZstd(benchmark::State& state) {
  const std::string bytes = to_protobuf(bench::make_forward_backward_request());
  const std::string frame = zstd_compress(bytes);
  for (auto _ : state) {
    auto decoded = from_protobuf<ForwardBackwardRequest>(zstd_decompress(frame, std::size_t{1} << 30));
    benchmark::DoNotOptimize(decoded.forward_backward_input.data.data());
  }
  report(state, bytes.size(), fwdbwd_numbers);
}
BENCHMARK(BM_Proto_DecodeForwardBackwardZstd)->Unit(benchmark::kMillisecond);

void BM_Proto_EncodeForwardBackwardOutput(benchmark::State& state) {
  const ForwardBackwardOutput output = make_forward_backward_output();
  std::size_t size = 0;
  for (auto _ : state) {
    const std::string bytes = to_protobuf(output);
    size = bytes.size();
    benchmark::DoNotOptimize(bytes.data());
  }
  report(state, size, output_numbers);
}
BENCHMARK(BM_Proto_EncodeForwardBackwardOutput)->Unit(benchmark::kMillisecond);

void BM_Proto_DecodeForwardBackwardOutput(benchmark::State& state) {
  const std::string bytes = to_protobuf(make_forward_backward_output());
  for (auto _ : state) {
    auto decoded = from_protobuf<ForwardBackwardOutput>(bytes);
    benchmark::DoNotOptimize(decoded.loss_fn_outputs.data());
  }
  report(state, bytes.size(), output_numbers);
}
BENCHMARK(BM_Proto_DecodeForwardBackwardOutput)->Unit(benchmark::kMillisecond);

void BM_Proto_EncodeSampleResponse(benchmark::State& state) {
  const SampleResponse response = bench::make_sample_response();
  std::size_t size = 0;
  for (auto _ : state) {
    const std::string bytes = to_protobuf(response);
    size = bytes.size();
    benchmark::DoNotOptimize(bytes.data());
  }
  report(state, size, sample_numbers);
}
BENCHMARK(BM_Proto_EncodeSampleResponse)->Unit(benchmark::kMicrosecond);

void BM_Proto_DecodeSampleResponse(benchmark::State& state) {
  const std::string bytes = to_protobuf(bench::make_sample_response());
  for (auto _ : state) {
    auto decoded = from_protobuf<SampleResponse>(bytes);
    benchmark::DoNotOptimize(decoded.sequences.data());
  }
  report(state, bytes.size(), sample_numbers);
}
BENCHMARK(BM_Proto_DecodeSampleResponse)->Unit(benchmark::kMicrosecond);

}  // namespace
