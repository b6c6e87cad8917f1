#!/usr/bin/env bash
# Install what cairn needs on Debian 12 (idempotent; quiet when all is there):
# clang/LLVM 19 for cairn-cc and the analyzer, libpmemobj as the benchmark
# peer, the legacy libraries the tests use, and a Python venv for the CLI.
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs=(build-essential cmake ninja-build git python3 python3-venv python3-pip
      clang-19 llvm-19-dev libclang-19-dev lld-19 libclang-rt-19-dev
      libpmemobj-dev libbsd-dev uthash-dev bear valgrind)
for f in */apt-packages.txt; do
  [ -f "$f" ] && while read -r p; do [ -n "${p%%#*}" ] && pkgs+=("${p%%#*}"); done < "$f"
done
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ ! -x .venv/bin/cairn ] || [ python/pyproject.toml -nt .venv/.stamp ]; then
  echo "install-deps: setting up the Python venv (.venv)"
  python3 -m venv .venv
  .venv/bin/pip install -q --upgrade pip==24.3.1
  .venv/bin/pip install -q -e python
  touch .venv/.stamp
fi
