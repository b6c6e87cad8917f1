#!/usr/bin/env bash
# Command 1 of the README: install what is missing, build everything, run the demo.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh | tail -n 1
export CAIRN_BUILD=$PWD/build
exec .venv/bin/cairn demo "$@"
