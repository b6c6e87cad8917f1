#!/usr/bin/env bash
# Fuzz the pool-file parser and recovery with libFuzzer for N seconds (default 60).
#   scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
mkdir -p build-fuzz tests/fuzz/corpus
clang-19 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -Iinclude -Iruntime runtime/*.c tests/fuzz/fuzz_pool.c -o build-fuzz/fuzz_pool -lpthread -ldl  # every runtime source
# the corpus grows in build-fuzz; the committed seeds stay as they are
mkdir -p build-fuzz/corpus
cp -n tests/fuzz/corpus/* build-fuzz/corpus/ 2>/dev/null || true
CAIRN_PMEM_FORCE=1 ASAN_OPTIONS=detect_leaks=0 build-fuzz/fuzz_pool -max_total_time="$secs" \
  -print_final_stats=1 -rss_limit_mb=4096 build-fuzz/corpus 2>&1 | tail -n 12
