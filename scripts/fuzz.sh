#!/usr/bin/env bash
# Fuzz every target for SECONDS in all (default 60), split between them:
#   pool   the pool-file parser, check and recovery (tests/fuzz/fuzz_pool.c), 60%
#   wset   the write-set parser of the pass (tests/fuzz/fuzz_wset.cpp), 20%
#   trace  the trace reader, python/cairn/trace.py (tests/fuzz/fuzz_trace.py, atheris), 20%
#
#   scripts/fuzz.sh [SECONDS]
#   scripts/fuzz.sh --coverage INPUTS    # pool target with and without checksum fix-up
#
# libFuzzer + ASan + UBSan for the C and C++ targets. Each target starts from
# its committed seeds (tests/fuzz/corpus/T, made by tests/fuzz/make_corpus.py)
# and grows its corpus in build-fuzz/corpus/T. Exits non-zero when any target
# fails (a crash, a sanitizer report, a failed property, or a target that
# cannot be built or set up); the input that failed is in build-fuzz/crashes/:
# add it to tests/fuzz/regress/T, where ctest replays it (fuzz.T.replay).
set -euo pipefail
cd "$(dirname "$0")/.."
out=build-fuzz
mode=fuzz
if [ "${1:-}" = "--coverage" ]; then mode=coverage; shift; fi
secs=${1:-60}
case $secs in ''|*[!0-9]*) echo "fuzz.sh: SECONDS must be a whole number, got '$secs'" >&2; exit 2;; esac
mkdir -p "$out/crashes"

cflags=(-g -O1 -fno-sanitize-recover=undefined -Wall -Wextra)
# The runtime is instrumented for coverage; the harness is not, so edge
# counts are the runtime's alone (fix-up code would otherwise count).
build_pool() {   # name, extra flags for the harness
  clang-19 "${cflags[@]}" -fsanitize=address,undefined "${@:2}" -Iinclude -Iruntime \
    -c tests/fuzz/fuzz_pool.c -o "$out/$1.o"
  clang-19 "${cflags[@]}" -fsanitize=fuzzer,address,undefined -Iinclude -Iruntime \
    runtime/*.c "$out/$1.o" -o "$out/$1" -lpthread -ldl
}
build_wset() {
  local llvm
  llvm=$(llvm-config-19 --cxxflags | sed 's/-fno-exceptions//; s/-I/-isystem /')
  # shellcheck disable=SC2086
  clang++-19 "${cflags[@]}" -fsanitize=fuzzer,address,undefined $llvm -Icompiler/pass \
    tests/fuzz/fuzz_wset.cpp compiler/pass/WriteSet.cpp -o "$out/fuzz_wset" \
    "$(llvm-config-19 --ldflags)" -lLLVM-19
}
setup_atheris() {   # a venv of Debian's python with atheris (PyPI; Debian has no package)
  if [ ! -x "$out/venv/bin/python" ] || ! "$out/venv/bin/python" -c 'import atheris' 2>/dev/null; then
    /usr/bin/python3 -m venv "$out/venv"
    "$out/venv/bin/pip" install -q 'atheris==3.0.0'
  fi
}

# run_target NAME SECONDS COMMAND...: libFuzzer's last lines, and the verdict
failed=()
run_target() {
  local name=$1 t=$2; shift 2
  mkdir -p "$out/corpus/$name"
  echo "== $name: ${t} s"
  local rc=0
  CAIRN_PMEM_FORCE=1 ASAN_OPTIONS=detect_leaks=0 "$@" -max_total_time="$t" -timeout=60 \
    -print_final_stats=1 -rss_limit_mb=4096 -artifact_prefix="$out/crashes/$name-" \
    "$out/corpus/$name" "tests/fuzz/corpus/$name" > "$out/$name.log" 2>&1 || rc=$?
  grep -E '^(stat::number_of_executed_units|stat::new_units_added|#[0-9]+[[:space:]]+DONE)' "$out/$name.log" || true
  if [ "$rc" -ne 0 ]; then
    echo "fuzz.sh: target $name FAILED (exit $rc); the end of $out/$name.log:" >&2
    tail -n 30 "$out/$name.log" >&2
    failed+=("$name")
  fi
}

if [ "$mode" = coverage ]; then
  # The same seeds, the same random seed and the same number of inputs for
  # both builds (on a shared machine the same seconds are not the same work);
  # the edges are the runtime's (the harness is not instrumented).
  build_pool fuzz_pool
  build_pool fuzz_pool_nofix -DFUZZ_NO_FIXUP
  for v in fuzz_pool fuzz_pool_nofix; do
    rm -rf "$out/cov-$v" && mkdir -p "$out/cov-$v"
    start=$(date +%s)
    CAIRN_PMEM_FORCE=1 ASAN_OPTIONS=detect_leaks=0 "$out/$v" -runs="$secs" -seed=1 -timeout=60 \
      -print_final_stats=1 -rss_limit_mb=4096 -artifact_prefix="$out/crashes/$v-" \
      "$out/cov-$v" tests/fuzz/corpus/pool > "$out/cov-$v.log" 2>&1 || { failed+=("$v"); }
    init=$(grep -E '^#[0-9]+[[:space:]]+INITED' "$out/cov-$v.log" | head -n 1 || true)
    done_=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$out/cov-$v.log" | tail -n 1 || true)
    echo "$v: after the seeds: ${init#*INITED }"
    echo "$v: after $secs inputs ($(( $(date +%s) - start )) s): ${done_#*DONE }"
  done
  python3 tests/fuzz/coverage_json.py "$out/coverage.json" "scripts/fuzz.sh --coverage $secs" \
    "fix-up=$out/cov-fuzz_pool.log" "no fix-up=$out/cov-fuzz_pool_nofix.log" &&
    echo "fuzz.sh: $out/coverage.json written (tests/fuzz/coverage.json is the committed one)"
else
  pool_s=$((secs * 6 / 10)); wset_s=$((secs * 2 / 10)); trace_s=$((secs - pool_s - wset_s))
  [ "$pool_s" -ge 1 ] && [ "$wset_s" -ge 1 ] && [ "$trace_s" -ge 1 ] ||
    { echo "fuzz.sh: $secs s cannot be split between three targets; give at least 5" >&2; exit 2; }
  if build_pool fuzz_pool; then run_target pool "$pool_s" "$out/fuzz_pool"
  else echo "fuzz.sh: target pool FAILED to build" >&2; failed+=(pool); fi
  if build_wset; then run_target wset "$wset_s" "$out/fuzz_wset"
  else echo "fuzz.sh: target wset FAILED to build (llvm-19-dev?)" >&2; failed+=(wset); fi
  if setup_atheris; then
    PYTHONPATH=python run_target trace "$trace_s" "$out/venv/bin/python" tests/fuzz/fuzz_trace.py
  else echo "fuzz.sh: target trace FAILED: atheris could not be installed in $out/venv" >&2; failed+=(trace); fi
fi
if [ ${#failed[@]} -ne 0 ]; then
  echo "fuzz.sh: FAILED: ${failed[*]} (inputs in $out/crashes; add each to tests/fuzz/regress/TARGET)" >&2
  exit 1
fi
echo "fuzz.sh: every target ran clean"
