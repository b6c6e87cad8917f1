#!/usr/bin/env bash
# Command 2 of the README (and .ci/run): the whole test suite. It fails when
# any part is missing (cmake stops without LLVM 19, clang 19 or libpmemobj)
# and when any test is skipped (ctest: scripts/ctest-gated.sh; pytest: the
# skip gate in tests/conftest.py; CAIRN_ALLOW_SKIPS is cleared here).
#   1. normal build, warnings as errors: unit tests (ctest) and end-to-end
#      tests (pytest: SIGKILL stress, cairn-cc, analyzer, benchmark smoke)
#   2. ASan+UBSan build (no benchmarks), leak detection on: unit tests, and
#      cairn-cc, its plugins, the analyzer and the programs cairn-cc builds
#   3. TSan build (runtime, cairn-cc, examples, analyzer): every unit test
#      but crashstates, and the pytest tests whose programs run threads
#      (the analyzer's workers and the benchmarks' 2-thread runs included)
#   4. a short libFuzzer run over the pool-file parser
# The sanitizer trees of steps 2 and 3 build in the background (nice 10)
# while step 1's tests run.
# docs/testing.md says what each step covers and what it costs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
export CAIRN_PMEM_FORCE=1
unset CAIRN_ALLOW_SKIPS
step() { echo; echo "=== $* ($(date -u +%H:%M:%S)) ==="; }
pytest() { .venv/bin/python -m pytest -q -p no:cacheprovider "$@"; }

# A build with sanitizers (clang 19, Debug: LLVM's assertions on in the
# plugins), of the parts its tests run (CAIRN_PARTS): never the benchmarks.
san_build() {  # name, sanitizers, extra cmake arguments...
  local dir=build-$1 san=$2
  shift 2
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang-19 \
        -DCMAKE_CXX_COMPILER=clang++-19 -DCAIRN_SANITIZE="$san" -DCAIRN_WERROR=ON "$@"
  ninja -C "$dir" -j2
}
export -f san_build

step "build (warnings as errors)"
scripts/build.sh | tail -n 1
# The ASan+UBSan and TSan trees build in the background, at nice 10, while
# the normal tree's tests run: those run one test at a time and leave most
# of the second core idle. The build gets its own process group (set -m:
# bash sets it before `&` returns), so that a failing step stops all of it
# (the EXIT trap); its output: build/sanitize-trees.log.
step "sanitizer trees: building in the background (build/sanitize-trees.log)"
set -m
nice -n 10 bash -c 'set -e
  san_build asan address,undefined -DCAIRN_PARTS="compiler;analyzer;examples;tests"
  san_build tsan thread -DCAIRN_PARTS="compiler;analyzer;examples;tests"' \
  >build/sanitize-trees.log 2>&1 &
san_pid=$!
set +m
trap 'kill -- -"$san_pid" 2>/dev/null || true' EXIT
step "unit tests"
scripts/ctest-gated.sh --test-dir build -j2
step "end-to-end tests"
CAIRN_BUILD=$PWD/build pytest tests
step "sanitizer trees: waiting for the background build"
if ! wait "$san_pid"; then
  tail -n 40 build/sanitize-trees.log
  echo "test.sh: the sanitizer trees failed to build (build/sanitize-trees.log above)" >&2
  exit 1
fi

# pytest over a sanitized build: cairn-cc runs clang through the wrapper that
# loads the sanitizer runtime for the plugins, and the test programs it
# builds get -fsanitize (tests/compiler/conftest.py).
san_pytest() {  # name, sanitizers, pytest arguments...
  local dir=$PWD/build-$1 san=$2
  shift 2
  CAIRN_BUILD=$dir CAIRN_CLANG=$dir/compiler/clang-sanitized CAIRN_TEST_SANITIZE=$san \
    pytest "$@"
}

# Step times: docs/testing.md, "Step times".
step "ASan + UBSan"
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/tests/sanitize/lsan.supp:print_suppressions=0
scripts/ctest-gated.sh --test-dir build-asan -j2
# the pass emits the same IR whether GCC or clang (Debug, assertions, ASan)
# built it
scripts/ir-same.sh build build-asan
# the representative subset (docs/testing.md): the SIGKILL stress of both
# kvstores, the pass and type-id plugins over their IR and type-id tests,
# the programs of the compiler's end-to-end tests, and the analyzer
san_pytest asan address,undefined tests/e2e tests/compiler/test_ir.py \
  tests/compiler/test_type_id.py tests/compiler/test_e2e.py tests/compiler/test_ports.py \
  tests/analyzer
unset ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS

step "TSan"
# tests/sanitize/tsan.supp: libLLVM's own lazy initialisation, which TSan
# cannot see synchronised (libLLVM is not instrumented); nothing of cairn's
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/tests/sanitize/tsan.supp
# the runtime, compiler/rt, the examples and the analyzer's own sources
# sanitized; cairn-cc and its plugins plain (they run inside clang:
# CMakeLists.txt); the analyzer links the plain libclang-cpp and libLLVM
# (the TSan tree was built in the background above)
# every unit test but one: the runtime starts its own thread (the
# background mark after a crash, gc.c: its only thread) in tests that start
# none themselves. unit.crashstates is left out: it forks ~700 checker
# children, each copying TSan's shadow mappings (over its 600 s limit); it
# starts no thread of its own (crashsim.h is single-threaded), and the one
# thread it reaches, the background mark its children wait for in
# cairn_pool_recovery (its nested states run the mark on the main thread,
# CAIRN_GC_SYNC=1), is checked here by unit.bggc (the mark running beside
# allocations, frees and a crash) and unit.recover.
scripts/ctest-gated.sh --test-dir build-tsan -j2 -E '^unit\.crashstates$'
# the pytest tests whose programs run threads, built with -fsanitize=thread:
# their own threads (mt_stress, the traced program's, C++ atomics), the
# background mark of every open after a SIGKILL (the kvstores, the cairn-cc
# stress programs), cairn-analyze's parser workers (-j 2), and one short
# 2-thread run of each benchmark driver (cairn bench runtime's
# cairn-bench-cairn, a YCSB cairn-cc port, vacation with 2 clients), built
# by the test from bench/ (tests/bench/test_bench_threads.py)
san_pytest tsan thread tests/e2e tests/compiler/test_e2e.py tests/compiler/test_trace.py \
  tests/compiler/test_cxx.py tests/analyzer/test_analyze.py tests/bench/test_bench_threads.py \
  -k 'sigkill or threads or killed_run or thread_local'
unset TSAN_OPTIONS

step "fuzz the pool-file parser (${CAIRN_FUZZ_SECONDS:-60} s)"
scripts/fuzz.sh "${CAIRN_FUZZ_SECONDS:-60}"
echo; echo "all tests passed"
