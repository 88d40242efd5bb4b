#!/usr/bin/env bash
# The long fault soak: the same test as CI's (test/faults/soak_test.cpp), sized for hours rather
# than a minute, built in Release. Prints the audit's numbers, and descriptors and RSS at the
# start and end of each phase (both should stay flat).
#
# Usage: test/faults/long_soak.sh [build-dir]       (default: build/release, configured if missing)
# Environment: TINKER_SOAK_STEPS (5000), TINKER_SOAK_SAMPLES (100000), TINKER_SOAK_IN_FLIGHT (1000),
#              TINKER_SOAK_FAULT_RATE (0.10), TINKER_SOAK_SEED (1)
set -euo pipefail
cd "$(dirname "$0")/../.."
build="${1:-build/release}"
if [[ ! -f "${build}/CMakeCache.txt" ]]; then
  cmake --preset release -B "${build}" -DTINKER_BUILD_TESTS=ON
fi
cmake --build "${build}" --target tinker_fault_tests
export TINKER_SOAK_STEPS="${TINKER_SOAK_STEPS:-5000}"
export TINKER_SOAK_SAMPLES="${TINKER_SOAK_SAMPLES:-100000}"
export TINKER_SOAK_IN_FLIGHT="${TINKER_SOAK_IN_FLIGHT:-1000}"
start=$(date +%s)
"${build}/test/tinker_fault_tests"
echo "long soak passed in $(($(date +%s) - start)) s"
