#!/usr/bin/env bash
# cost.sh -- what CAIRN_TRACE costs on the demo and `cairn cc bench`'s structures.
#
#   bench/trace/cost.sh BUILD OUTDIR [ROUNDS]
#
# Builds compiler/bench/ds_bench.c and examples/kvstore/kvstore_cc.c with
# cairn-cc -O2, with and without --trace, then runs ROUNDS (default 5)
# alternating rounds of: the plain build, the --trace build untraced, and
# the --trace build with CAIRN_TRACE, and prints the median time of each
# and the slowdowns (traced / plain); each round's times go to stderr
# ("samples WORKLOAD plain|off|traced T1 T2 ...", for bench/trace/collect.py).
# ds_bench: pm mode, 2000 keys, 20000 mixed operations (its own ns per
# operation); kvstore_cc: 20000 operations (wall time); ycsb_a (bench/trace/ycsb_a.c, clang + libcairn:
# its "--trace, off" column is the same build untraced again): 1000
# records, 100000 operations. The traces of the last round stay in OUTDIR.
set -euo pipefail
build=$(realpath "$1"); out=$(realpath -m "$2"); rounds=${3:-5}
src=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out/bin"
cc=$build/compiler/cairn-cc
for t in "" --trace; do
  n=${t:+_trace}
  "$cc" -O2 $t "$src/compiler/bench/ds_bench.c" -o "$out/bin/ds$n"
  "$cc" -O2 $t -I"$src/examples/kvstore" "$src/examples/kvstore/kvstore_cc.c" -o "$out/bin/kvcc$n"
done
clang-19 -O2 -Wall -Wextra -Werror -I"$src/include" "$src/bench/trace/ycsb_a.c" \
  "$build/runtime/libcairn.so" -Wl,-rpath,"$build/runtime" -lm -o "$out/bin/ycsb_a"
export CAIRN_PMEM_FORCE=1
pool=/dev/shm/trace-cost-$$.pool
trap 'rm -f "$pool"' EXIT
ds() {   # ds BIN STRUCTURE [TRACE]: ns per operation
  rm -f "$pool"
  CAIRN_TRACE=${3:-} "$out/bin/$1" pm "$pool" 2000 20000 "$2" mixed | tail -1 |
    sed 's/.*"ns_per_op": \([0-9.]*\).*/\1/'
}
ycsb() {   # ycsb [TRACE]: ns per operation of 100000 YCSB-A operations on 1000 1 KiB records
  rm -f "$pool"
  CAIRN_TRACE=${1:-} "$out/bin/ycsb_a" "$pool" 1000 100000 | sed 's/.*"ns_per_op": \([0-9.]*\).*/\1/'
}
kv() {   # kv BIN [TRACE]: ns per operation, wall time of 20000 operations
  rm -f "$pool"
  local t0 t1
  t0=$(date +%s%N)
  CAIRN_TRACE=${2:-} KV_PROGRESS="$out/progress" "$out/bin/$1" run "$pool" 20000 >/dev/null
  t1=$(date +%s%N)
  echo $(( (t1 - t0) / 20000 ))
}
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf "%-8s %12s %12s %12s %9s %9s\n" workload plain trace-off traced "x plain" "x off"
for w in kvstore_cc list uthash rbtree splay ycsb_a; do
  p=""; o=""; t=""
  for r in $(seq "$rounds"); do
    if [ "$w" = ycsb_a ]; then       # one build: clang + libcairn, no --trace
      p+=" $(ycsb)"; o+=" $(ycsb)"; t+=" $(ycsb "$out/$w.trace")"
    elif [ "$w" = kvstore_cc ]; then
      p+=" $(kv kvcc)"; o+=" $(kv kvcc_trace)"; t+=" $(kv kvcc_trace "$out/$w.trace")"
    else
      p+=" $(ds ds "$w")"; o+=" $(ds ds_trace "$w")"; t+=" $(ds ds_trace "$w" "$out/$w.trace")"
    fi
  done
  echo "samples $w plain$p" >&2; echo "samples $w off$o" >&2; echo "samples $w traced$t" >&2
  mp=$(echo "$p" | median); mo=$(echo "$o" | median); mt=$(echo "$t" | median)
  printf "%-8s %12s %12s %12s %9.2f %9.2f\n" "$w" "$mp" "$mo" "$mt" \
    "$(echo "$mt / $mp" | bc -l)" "$(echo "$mt / $mo" | bc -l)"
done
