"""Compare any builds of ds_bench.c the way `cairn cc bench` compares its
three: all alive at once on one CPU, taking turns running slices, fresh
processes every round; ratios are per-slice against the first build.

    .venv/bin/python compiler/bench/paired_slices.py STRUCTURE WORKLOAD ROUNDS SLICES \\
        NAME=BINARY:dram|pm ...

Example (docs/RESULTS.md, run 6): clang's build against itself (an A/A
control) and against cairn-cc's, 30 rounds of 10 slices of uthash lookups:

    paired_slices.py uthash read 30 10 clang=./clang:dram clang2=./clang:dram cc=./cc:dram

Prints each round's median ratios, then per build the median ns/op and the
median (p25-p75) of the per-slice ratios. Run it with the venv's python: it
uses the `cairn` package installed there (scripts/install-deps.sh)."""
import argparse
import json
import shlex
import statistics
import sys
import time
from pathlib import Path
from types import SimpleNamespace

from cairn.argtypes import positive_int
from cairn.paired import quantile, run_slice, serve


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("structure")
    ap.add_argument("workload")
    ap.add_argument("rounds", type=positive_int)
    ap.add_argument("slices", type=positive_int)
    ap.add_argument("builds", nargs="+", metavar="NAME=BINARY:MODE")
    ap.add_argument("--n", type=positive_int, default=100000)
    ap.add_argument("--ops", type=positive_int, default=1000000)
    ap.add_argument("--cpu", default="1")
    ap.add_argument("--dir", default="/dev/shm")
    ap.add_argument("--json", metavar="FILE",
                    help="also write each build's samples and summary as JSON "
                         "(rows for docs/RESULTS.md's table blocks)")
    a = ap.parse_args()
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    builds = []
    for b in a.builds:
        name, _, rest = b.partition("=")
        exe, _, mode = rest.rpartition(":")
        if not name or not exe or mode not in ("dram", "pm"):
            ap.error(f"{b!r}: want NAME=BINARY:dram or NAME=BINARY:pm")
        builds.append((name, exe, mode))
    cfg = SimpleNamespace(n=a.n, ops=a.ops, slices=a.slices, cpu=a.cpu)
    names = [b[0] for b in builds]
    times = {nm: [] for nm in names}
    for rnd in range(a.rounds):
        procs = {nm: serve(exe, mode, Path(a.dir) / f"paired-slices-{nm}.pool", cfg,
                            a.structure, a.workload) for nm, exe, mode in builds}
        try:
            for k in range(a.slices):
                for nm in names[k % len(names):] + names[:k % len(names)]:
                    times[nm].append(run_slice(procs[nm]))
        finally:
            for p in procs.values():
                p.stdin.close()
                p.wait()
        base = times[names[0]][-a.slices:]
        print(f"round {rnd}", " ".join(
            f"{nm}={statistics.median(x / b for x, b in zip(times[nm][-a.slices:], base)):.2f}"
            for nm in names[1:]), f"{names[0]}={statistics.median(base):.0f}ns", flush=True)
    rows = []
    for nm, exe, mode in builds:
        rs = [x / b for x, b in zip(times[nm], times[names[0]])]
        rows.append({"build": nm, "binary": exe, "mode": mode,
                     "median_ns": statistics.median(times[nm]),
                     "ratio_median": statistics.median(rs), "ratio_p25": quantile(rs, 0.25),
                     "ratio_p75": quantile(rs, 0.75), "samples_ns": times[nm]})
        print(f"{nm:12s} median {rows[-1]['median_ns']:9.1f} ns  ratio "
              f"{rows[-1]['ratio_median']:.3f} (p25 {rows[-1]['ratio_p25']:.3f} "
              f"p75 {rows[-1]['ratio_p75']:.3f})")
    if a.json:
        Path(a.json).write_text(json.dumps({
            "command": "paired_slices.py " + shlex.join(sys.argv[1:]), "started": started,
            "method": "builds alive at once on one CPU, taking turns per slice; ratio = "
                      f"per-slice time over {names[0]}'s in the same turn",
            "structure": a.structure, "workload": a.workload, "rounds": a.rounds,
            "slices": a.slices, "n": a.n, "ops": a.ops, "builds": rows}, indent=1))
    for nm, _, _ in builds:
        (Path(a.dir) / f"paired-slices-{nm}.pool").unlink(missing_ok=True)


if __name__ == "__main__":
    main()
