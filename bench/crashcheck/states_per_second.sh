#!/bin/sh
# states_per_second.sh -- cairn crashcheck's states per second, side by side
# with the process-per-state approach of tests/unit/crashsim.h (the image
# written whole and a checker process spawned for every state), on one
# trace: tests/crashcheck/many_lines.c with LINES lines flushed together
# (2^LINES states at one fence), checked with recovery + the pool check.
#   bench/crashcheck/states_per_second.sh [LINES] [ROUNDS]
# Needs CAIRN_BUILD (default ./build). Prints each run's summary line and the
# CPU seconds it used (its own and its children's: user+sys), since on a
# shared machine the CPU per state is steadier than the wall-clock rate.
set -eu
LINES=${1:-10}
ROUNDS=${2:-3}
B=${CAIRN_BUILD:-$PWD/build}
W=$(mktemp -d /dev/shm/cairn-cc-bench-XXXXXX)
trap 'rm -rf "$W"' EXIT
cc -O1 -DLINES="$LINES" -Iinclude tests/crashcheck/many_lines.c -o "$W/many" \
   -L"$B/runtime" -lcairn -Wl,-rpath,"$B/runtime"
mkdir "$W/img"
CAIRN_PMEM_FORCE=1 CAIRN_TRACE="$W/t" CAIRN_TRACE_IMAGES="$W/img" "$W/many" run "$W/p.pool"
for r in $(seq "$ROUNDS"); do
  printf 'round %s forked, built-in check:    ' "$r"
  /usr/bin/time -f '    CPU %U user + %S sys s' "$B/runtime/cairn-crashcheck" --quiet \
      --nested-every 0 "$W/t" "$W/img"
  printf 'round %s process per state:         ' "$r"
  /usr/bin/time -f '    CPU %U user + %S sys s' "$B/runtime/cairn-crashcheck" --quiet \
      --nested-every 0 --check "$B/runtime/cairn-pool check {pool} >/dev/null" "$W/t" "$W/img"
done
