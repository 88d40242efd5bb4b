#!/usr/bin/env python3
"""Compares tinker-cpp's JSON encoding of float32 tensors with orjson, in one run.

Usage: benchmarks/json_vs_orjson.py <path to tinker-bench-codecs> [repetitions]

orjson (the fastest Python JSON library) encodes the same 2^20 float32 values, given to it as
Python floats, as a list. The C++ side is BM_Json_EncodeFloat32Tensor. Both are timed on this
machine in the same invocation; the goal is C++ ns/number <= 0.5 x orjson ns/number.
"""
import json
import statistics
import struct
import subprocess
import sys
import time

COUNT = 1 << 20


def float32_values():
    # Same generator as benchmarks/codec_data.hpp (Lcg(1234).next_logprob()).
    state = 1234
    values = []
    for _ in range(COUNT):
        state = (state * 1664525 + 1013904223) & 0xFFFFFFFF
        exact = -((state >> 8) / 16777216.0) * 10.0
        values.append(struct.unpack("f", struct.pack("f", exact))[0])
    return values


def time_orjson(values, repetitions):
    import orjson

    samples = []
    for _ in range(repetitions):
        start = time.perf_counter_ns()
        orjson.dumps(values)
        samples.append((time.perf_counter_ns() - start) / COUNT)
    return statistics.median(samples), min(samples)


def time_cpp(binary, repetitions):
    out = subprocess.run(
        [binary, "--benchmark_filter=BM_Json_EncodeFloat32Tensor", "--benchmark_format=json",
         f"--benchmark_repetitions={repetitions}", "--benchmark_report_aggregates_only=false"],
        check=True, capture_output=True, text=True).stdout
    # Google Benchmark reports an inverted rate counter in seconds per item.
    runs = [b["ns_per_number"] * 1e9 for b in json.loads(out)["benchmarks"] if b.get("run_type") == "iteration"]
    return statistics.median(runs), min(runs)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    repetitions = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    values = float32_values()
    orjson_median, orjson_best = time_orjson(values, repetitions)
    cpp_median, cpp_best = time_cpp(sys.argv[1], repetitions)
    print(f"orjson     : median {orjson_median:6.2f} ns/number (best {orjson_best:6.2f})")
    print(f"tinker-cpp : median {cpp_median:6.2f} ns/number (best {cpp_best:6.2f})")
    ratio = cpp_median / orjson_median
    print(f"ratio      : {ratio:.2f} (goal <= 0.50) -> {'met' if ratio <= 0.5 else 'NOT met'}")


if __name__ == "__main__":
    main()
