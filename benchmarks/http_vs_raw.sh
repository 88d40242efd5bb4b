#!/usr/bin/env bash
# HTTP transport goal (issue 3): HttpClient's requests per second against a raw Beast loop on the
# same loopback server in the same run, for 1 and 64 connections; goal SDK/raw >= 0.85.
#
# Usage: benchmarks/http_vs_raw.sh [path/to/tinker-bench-http] [extra Google Benchmark flags...]
#   The binary defaults to $TINKER_BENCH_HTTP, else build/release/benchmarks/tinker-bench-http.
#   Build it in Release: cmake --preset release && cmake --build --preset release --target tinker-bench-http
#
# Prints medians of 5 repetitions (interleaved in random order so that drifting machine load hits
# both sides alike) and the SDK's heap allocations per request. Absolute rates depend on the
# VM's cross-thread wake-up latency (see doc/performance.md); the ratio is the result.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
binary="${TINKER_BENCH_HTTP:-$here/../build/release/benchmarks/tinker-bench-http}"
if [[ $# -gt 0 && "$1" != --* ]]; then
  binary="$1"
  shift
fi
if [[ ! -x "$binary" ]]; then
  echo "error: $binary not found or not executable (build the tinker-bench-http target, or pass its path)" >&2
  exit 2
fi

out="$(mktemp "${TMPDIR:-/tmp}/http_vs_raw.XXXXXX.json")"
trap 'rm -f "$out"' EXIT

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$binary" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
  --benchmark_enable_random_interleaving=true \
  --benchmark_out="$out" --benchmark_out_format=json "$@"
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
echo

python3 - "$out" <<'PY'
import json
import sys

with open(sys.argv[1]) as f:
    report = json.load(f)

medians = {}
for b in report["benchmarks"]:
    if b.get("run_type") != "aggregate" or b.get("aggregate_name") != "median":
        continue
    # run_name: "BM_Http_Sdk/64/real_time"
    side, connections = b["run_name"].split("/")[0:2]
    medians[(side, int(connections))] = b

print(f"{'connections':>11}  {'SDK req/s':>11}  {'raw req/s':>11}  {'SDK/raw':>7}  {'goal':>5}  "
      f"{'SDK allocs/req':>14}  {'raw allocs/req':>14}  {'raw+SDK headers':>15}  {'SDK/that':>8}")
for connections in (1, 64):
    sdk = medians.get(("BM_Http_Sdk", connections))
    raw = medians.get(("BM_Http_Raw", connections))
    if sdk is None or raw is None:
        print(f"{connections:>11}  (missing: filtered out or failed)")
        continue
    ratio = sdk["items_per_second"] / raw["items_per_second"]
    verdict = "ok" if ratio >= 0.85 else "BELOW"
    line = (f"{connections:>11}  {sdk['items_per_second']:>11,.0f}  {raw['items_per_second']:>11,.0f}  "
            f"{ratio:>7.3f}  {verdict:>5}  {sdk['allocs_per_request']:>14.1f}  {raw['allocs_per_request']:>14.1f}")
    full = medians.get(("BM_Http_RawSdkHeaders", connections))
    if full is not None:
        line += f"  {full['items_per_second']:>15,.0f}  {sdk['items_per_second'] / full['items_per_second']:>8.3f}"
    print(line)
print()
print("goal: SDK/raw >= 0.85 (medians of 5 interleaved repetitions, same server, same run)")
print("raw+SDK headers: diagnostic raw loop sending the SDK's header set (same wire bytes); SDK/that = the layer's own cost")
PY
