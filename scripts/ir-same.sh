#!/usr/bin/env bash
# The pass's output must not depend on how the plugin was built: compiles
# every RUN line of tests/compiler/ir/*.c to IR with two build trees'
# cairn-cc and fails on any difference. scripts/test.sh runs it on the
# normal build (GCC, RelWithDebInfo) against the ASan+UBSan build (clang,
# Debug, LLVM's assertions on): a difference means the pass reads something
# unspecified (argument evaluation order) or undefined.
#   scripts/ir-same.sh build build-asan
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 2 ] || { echo "usage: scripts/ir-same.sh BUILD_DIR BUILD_DIR" >&2; exit 2; }
ir() {  # build dir, flags..., source: the module's IR without its compiler banner
  local dir=$1; shift
  local clang=()
  [ -x "$dir/compiler/clang-sanitized" ] && clang=(env "CAIRN_CLANG=$dir/compiler/clang-sanitized")
  "${clang[@]}" "$dir/compiler/cairn-cc" "$@" -S -emit-llvm -o - | grep -v '^; ModuleID\|^source_filename\|clang version'
}
for d in "$1" "$2"; do
  [ -x "$d/compiler/cairn-cc" ] || { echo "ir-same: $d/compiler/cairn-cc not built; build it first (ninja -C $d cairn-cc)" >&2; exit 2; }
done
n=0 bad=0
for src in tests/compiler/ir/*.c; do
  while IFS='|' read -r flags _; do
    read -ra f <<<"${flags#// RUN:}"
    n=$((n + 1))
    if ! cmp -s <(ir "$1" "${f[@]}" "$src") <(ir "$2" "${f[@]}" "$src"); then
      echo "ir-same: $src ${f[*]}: $1 and $2 emit different IR (diff them with -S -emit-llvm)" >&2
      bad=$((bad + 1))
    fi
  done < <(grep '^// RUN:' "$src")
done
[ "$bad" -eq 0 ] || { echo "ir-same: $bad of $n cases differ" >&2; exit 1; }
echo "ir-same: $n cases, the same IR from $1 and $2"
