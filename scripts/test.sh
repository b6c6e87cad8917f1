#!/usr/bin/env bash
# Command 2 of the README (and .ci/run): the whole test suite.
#   1. normal build, warnings as errors: unit tests (ctest) and end-to-end
#      tests (pytest: SIGKILL stress, cairn-cc, analyzer, benchmark smoke)
#   2. ASan+UBSan build of the runtime and unit tests
#   3. TSan build: the multi-threaded tests
#   4. a short libFuzzer run over the pool-file parser
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
export CAIRN_PMEM_FORCE=1
step() { echo; echo "=== $* ==="; }

step "build (warnings as errors)"
scripts/build.sh | tail -n 1
step "unit tests"
ctest --test-dir build --output-on-failure -j2
step "end-to-end tests"
CAIRN_BUILD=$PWD/build .venv/bin/python -m pytest -q tests

san() {  # name, sanitizer flags, test regex
  local dir=build-$1
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang-19 \
        -DCMAKE_CXX_COMPILER=clang++-19 -DCAIRN_SANITIZE="$2" -DCAIRN_RUNTIME_ONLY=ON -DCAIRN_WERROR=ON >/dev/null
  ninja -C "$dir" >/dev/null
  ctest --test-dir "$dir" --output-on-failure -j2 -R "$3"
}
step "ASan + UBSan"
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=0 \
  san asan address,undefined 'unit\.'
step "TSan"
TSAN_OPTIONS=halt_on_error=1 san tsan thread 'unit\.(threads|tx|bggc|trace)'
step "fuzz the pool-file parser (${CAIRN_FUZZ_SECONDS:-60} s)"
scripts/fuzz.sh "${CAIRN_FUZZ_SECONDS:-60}"
echo; echo "all tests passed"
