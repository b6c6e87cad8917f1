#!/usr/bin/env python3
"""Profiles of YCSB-A runs of the cairn builds (perf record -e cpu-clock),
each beside its libpmemobj build's throughput from a run just before it.

    bench/ycsb/profile.py [--base DIR] --cells chash:1024,btree:8 --json OUT

--base DIR: a copy of an older build tree's bench/ycsb/ and runtime/ (the
"before" programs, run with DIR/runtime first on LD_LIBRARY_PATH); both the
base and the current build are profiled, one after the other, per cell.
Writes rows {structure, value_size, build, rank, percent, dso, symbol} for
the top symbols, and the driver's A row (operations per CPU-second)."""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def ops_per_cpu(out):
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 9 and f[3] == "A":
            return float(f[7])
    raise SystemExit(f"profile.py: no A row in the driver's output:\n{out}")


def run(tree, structure, build, size, ops, perf_data=None):
    exe = tree / "bench" / "ycsb" / f"ycsb-{structure}-{build}"
    pool = Path("/dev/shm") / f"ycsb-profile-{os.getpid()}.pool"
    pool.unlink(missing_ok=True)
    env = dict(os.environ, CAIRN_PMEM_FORCE="1", PMEM_IS_PMEM_FORCE="1",
               LD_LIBRARY_PATH=str(tree / "runtime"))
    cmd = [str(exe), "--pool", str(pool), "--records", "20000", "--ops", str(ops),
           "--workloads", "LOAD,A", "--value-size", str(size)]
    if perf_data:
        cmd = ["perf", "record", "-q", "-e", "cpu-clock", "-o", str(perf_data), *cmd]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    pool.unlink(missing_ok=True)
    if r.returncode:
        raise SystemExit(f"profile.py: {exe.name} failed: {r.stderr[-2000:]}")
    return ops_per_cpu(r.stdout)


def top(perf_data, n):
    r = subprocess.run(["perf", "report", "-i", str(perf_data), "--no-children", "--stdio",
                        "--sort", "dso,symbol"], capture_output=True, text=True, check=True)
    rows = []
    for line in r.stdout.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+(\S+)\s+\[.\]\s+(.+)$", line)
        if m:
            sym = re.sub(r"(\s+-)+\s*$", "", m.group(3)).strip()   # perf's empty columns
            rows.append((float(m.group(1)), m.group(2), sym))
    return rows[:n]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=Path)
    ap.add_argument("--cells", default="chash:1024,btree:1024,chash:8,btree:8")
    ap.add_argument("--ops", type=int, default=300000)
    ap.add_argument("--top", type=int, default=8)
    ap.add_argument("--json", type=Path, required=True)
    a = ap.parse_args()
    build = Path(os.environ.get("CAIRN_BUILD", ROOT / "build"))
    trees = ([("base", a.base)] if a.base else []) + [("build", build)]
    rows, runs = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for cell in a.cells.split(","):
            s, _, v = cell.partition(":")
            for name, tree in trees:
                pm = run(build, s, "pmemobj", int(v), a.ops)
                data = Path(tmp) / "perf.data"
                cairn = run(tree, s, "cairn", int(v), a.ops, data)
                runs.append({"structure": s, "value_size": int(v), "build": name,
                             "cairn_ops_per_cpu_s": round(cairn), "pmemobj_ops_per_cpu_s": round(pm),
                             "ratio": round(cairn / pm, 3)})
                for k, (pct, dso, sym) in enumerate(top(data, a.top), 1):
                    rows.append({"structure": s, "value_size": int(v), "build": name, "rank": k,
                                 "percent": pct, "dso": dso, "symbol": sym})
                print(f"{s} {v} B {name}: cairn {cairn:.0f}, pmemobj {pm:.0f} ops/CPU-s",
                      file=sys.stderr)
    git = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True).stdout.strip()
    out = {"command": "bench/ycsb/profile.py " + " ".join(sys.argv[1:]),
           "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "commit": git, "method": "per cell and tree: one libpmemobj run, then the cairn build "
           "under perf record -e cpu-clock (load 20000 records, then --ops YCSB-A operations)",
           "runs": runs, "rows": rows}
    a.json.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
