#!/usr/bin/env bash
# Configure and build everything into ./build (or $CAIRN_BUILD), warnings as errors.
#   scripts/build.sh [extra cmake args]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${CAIRN_BUILD:-build}
cmake -S . -B "$build" -G Ninja -DCAIRN_WERROR=ON "$@" >/dev/null
ninja -C "$build" ${NINJA_QUIET:+-v}
