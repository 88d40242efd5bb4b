// JSON codec throughput: forward_backward requests, SampleResponses and raw float32 tensors.
// Counters: bytes_per_second (of JSON text) and ns_per_number (per value in the payload).
#include "codec_data.hpp"

#include <tinker/codec.hpp>

#include <benchmark/benchmark.h>

namespace {

using namespace tinker;
using bench::fwdbwd_numbers;
using bench::report;
using bench::sample_numbers;

void BM_Json_EncodeForwardBackward(benchmark::State& state) {
  const ForwardBackwardRequest request = bench::make_forward_backward_request();
  std::string out;
  for (auto _ : state) {
    out.clear();
    append_json(request, out);
    benchmark::DoNotOptimize(out.data());
  }
  report(state, out.size(), fwdbwd_numbers);
}
BENCHMARK(BM_Json_EncodeForwardBackward)->Unit(benchmark::kMillisecond);

// The cookbook's SFT step (128 x 2048) as the SDK encodes it: to_json into a fresh string.
void BM_Json_EncodeSftStep(benchmark::State& state) {
  const ForwardBackwardRequest request = bench::make_forward_backward_request(bench::sft_datums, bench::sft_tokens);
  std::size_t size = 0;
  for (auto _ : state) {
    const std::string out = to_json(request);
    size = out.size();
    benchmark::DoNotOptimize(out.data());
  }
  report(state, size, bench::sft_numbers);
}
BENCHMARK(BM_Json_EncodeSftStep)->Unit(benchmark::kMillisecond);

void BM_Json_DecodeForwardBackward(benchmark::State& state) {
  const std::string json = to_json(bench::make_forward_backward_request());
  for (auto _ : state) {
    auto decoded = from_json<ForwardBackwardRequest>(json);
    benchmark::DoNotOptimize(decoded.forward_backward_input.data.data());
  }
  report(state, json.size(), fwdbwd_numbers);
}
BENCHMARK(BM_Json_DecodeForwardBackward)->Unit(benchmark::kMillisecond);

void BM_Json_EncodeSampleResponse(benchmark::State& state) {
  const SampleResponse response = bench::make_sample_response();
  std::string out;
  for (auto _ : state) {
    out.clear();
    append_json(response, out);
    benchmark::DoNotOptimize(out.data());
  }
  report(state, out.size(), sample_numbers);
}
BENCHMARK(BM_Json_EncodeSampleResponse)->Unit(benchmark::kMillisecond);

void BM_Json_DecodeSampleResponse(benchmark::State& state) {
  const std::string json = to_json(bench::make_sample_response());
  for (auto _ : state) {
    auto decoded = from_json<SampleResponse>(json);
    benchmark::DoNotOptimize(decoded.sequences.data());
  }
  report(state, json.size(), sample_numbers);
}
BENCHMARK(BM_Json_DecodeSampleResponse)->Unit(benchmark::kMillisecond);

// The orjson comparison (benchmarks/json_vs_orjson.py) encodes the same 1M values.
void BM_Json_EncodeFloat32Tensor(benchmark::State& state) {
  const TensorData tensor(bench::make_float_tensor(1 << 20));
  std::string out;
  for (auto _ : state) {
    out.clear();
    append_json(tensor, out);
    benchmark::DoNotOptimize(out.data());
  }
  report(state, out.size(), double(1 << 20));
}
BENCHMARK(BM_Json_EncodeFloat32Tensor)->Unit(benchmark::kMillisecond);

}  // namespace
