#!/usr/bin/env python3
"""Measure what installing costs and write it as JSON for docs/RESULTS.md.

    packaging/measure_install.py [--build build] [--json packaging/results/install.json]

Times `cmake --install` into a temporary prefix and `cpack -G DEB` into a
temporary directory, and records the installed size, the .deb's size,
Installed-Size and Depends, the commit and the load average. These are
times of file copying and packaging on a shared machine: they say what a
user waits, not how fast cairn runs."""
import argparse
import datetime
import json
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(cmd):
    t = time.monotonic()
    subprocess.run([str(c) for c in cmd], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.monotonic() - t


def tree_bytes(top: Path) -> int:
    return sum(f.lstat().st_size for f in top.rglob("*") if f.is_file() and not f.is_symlink())


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", type=Path, default=ROOT / "build")
    p.add_argument("--json", type=Path, default=ROOT / "packaging/results/install.json")
    args = p.parse_args()
    build = args.build.resolve()
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    runs = []
    with tempfile.TemporaryDirectory(prefix="cairn-measure-") as tmp:
        tmp = Path(tmp)
        secs = timed(["cmake", "--install", build, "--prefix", tmp / "prefix"])
        runs.append({"what": "cmake --install (unstripped)", "seconds": round(secs, 2),
                     "bytes": tree_bytes(tmp / "prefix"),
                     "command": f"cmake --install {args.build} --prefix PREFIX"})
        secs = timed(["cpack", "--config", build / "CPackConfig.cmake", "-G", "DEB",
                      "-B", tmp / "deb"])
        deb = next((tmp / "deb").glob("cairn_*.deb"))
        info = subprocess.run(["dpkg-deb", "-I", str(deb)], check=True, capture_output=True,
                              text=True).stdout
        field = lambda name: re.search(rf"^ {name}: (.*)$", info, re.M).group(1)  # noqa: E731
        runs.append({"what": "cpack -G DEB (stripped)", "seconds": round(secs, 2),
                     "bytes": deb.stat().st_size,
                     "installed_kib": int(field("Installed-Size")),
                     "command": f"cpack --config {args.build}/CPackConfig.cmake -G DEB -B DIR"})
        depends = field("Depends")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    out = {"command": f"packaging/measure_install.py --build {args.build}",
           "started": started, "source": {"commit": commit},
           "loadavg": round(os.getloadavg()[0], 1), "runs": runs, "depends": depends}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
