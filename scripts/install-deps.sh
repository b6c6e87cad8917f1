#!/usr/bin/env bash
# Install what cairn needs on Debian 12 (idempotent; quiet when all is there):
# clang/LLVM 19 for cairn-cc and the analyzer, libpmemobj as the benchmark
# peer, the legacy libraries the tests use, and a Python venv for the CLI.
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs=(build-essential cmake ninja-build git python3 python3-venv python3-pip
      clang-19 llvm-19-dev libclang-19-dev lld-19 libclang-rt-19-dev
      libpmemobj-dev pkg-config libbsd-dev uthash-dev bear valgrind zlib1g-dev
      python3-setuptools python3-wheel python3-tqdm python3-pytest python3-matplotlib)
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
# The CLI's few dependencies (tqdm, pytest) come pinned by Debian 12 (tqdm
# 4.64.1, pytest 7.2.1), so a fresh machine needs no package index beyond
# Debian's; the venv sees them and installs cairn itself in editable mode.
if [ ! -x .venv/bin/cairn ] || [ python/pyproject.toml -nt .venv/.stamp ]; then
  echo "install-deps: setting up the Python venv (.venv)"
  /usr/bin/python3 -m venv --system-site-packages .venv   # Debian's python sees Debian's packages
  .venv/bin/pip install -q --no-deps --no-build-isolation --no-index -e python
  touch .venv/.stamp
fi
