#!/usr/bin/env python3
"""What CAIRN_TRACE costs with this tree's trace.c against the trace.c of
REV (its libcairn built from this build's other objects), side by side:
rounds alternate the plain run, the run traced by this libcairn and the
run traced by REV's, on splay (compiler/bench/ds_bench.c under cairn-cc
--trace: pm mode, 2000 keys, OPS mixed operations) and ycsb_a
(bench/trace/ycsb_a.c: 1000 records of 1 KiB, OPS YCSB-A operations).

    CAIRN_BUILD=build bench/trace/seq_cost.py --before 82dfcd4 --rounds 5 \\
        -o bench/trace/results/seq_cost.json

Times are each program's own ns per operation; the JSON has every round
and, per workload, the medians and the slowdowns (traced / plain).
"""
import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

import collect  # bench/trace/collect.py, beside this script

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def sh(argv, **kw):
    return subprocess.run(argv, check=True, capture_output=True, text=True, **kw).stdout


def old_library(build, rev, d):
    """libcairn.so.0 with REV's trace.c and this build's other objects."""
    ninja = open(os.path.join(build, "build.ninja")).read()
    m = re.search(r"build runtime/CMakeFiles/cairn_obj\.dir/trace\.c\.o:.*\n(?:  .*\n)*?  FLAGS = (.*)\n",
                  ninja)
    flags = [f for f in m.group(1).split() if not f.startswith("-ffile-prefix-map")]
    src = os.path.join(d, "trace.c")
    with open(src, "w") as f:
        f.write(sh(["git", "-C", ROOT, "show", f"{rev}:runtime/trace.c"]))
    obj = os.path.join(d, "trace.o")
    sh(["cc", *flags, "-I", os.path.join(ROOT, "include"), "-I", os.path.join(ROOT, "runtime"),
        "-c", src, "-o", obj])
    objs = [o for o in glob.glob(os.path.join(build, "runtime/CMakeFiles/cairn_obj.dir/*.o"))
            if not o.endswith("/trace.c.o")]
    libdir = os.path.join(d, "lib")
    os.makedirs(libdir)
    sh(["cc", "-shared", "-Wl,-soname,libcairn.so.0", "-o", os.path.join(libdir, "libcairn.so.0"),
        *objs, obj, "-lpthread", "-ldl"])
    return libdir


def ns_per_op(argv, env):
    out = sh(argv, env=env).strip().splitlines()[-1]
    return json.loads(out)["ns_per_op"]


def summarize(rounds):
    """Per workload: the medians, the slowdowns of the medians, and the
    range of each round's own slowdown (traced / plain of the same round),
    with the verdict on the goal (<= 3x) judged on that whole range."""
    summary = []
    for w in ("splay", "ycsb_a"):
        runs = [x for x in rounds if x["workload"] == w]
        med = {s: statistics.median(x["ns_per_op"] for x in runs if x["side"] == s)
               for s in ("plain", "traced", "traced_before")}
        by_round = {}
        for x in runs:
            by_round.setdefault(x["round"], {})[x["side"]] = x["ns_per_op"]
        ratios = {s: [r[s] / r["plain"] for r in by_round.values()] for s in ("traced", "traced_before")}

        def verdict(v):
            return "met" if max(v) <= 3 else "NOT met" if min(v) > 3 else "not shown"
        summary.append({"workload": w, "plain_ns": med["plain"], "traced_ns": med["traced"],
                        "traced_before_ns": med["traced_before"],
                        "slowdown": round(med["traced"] / med["plain"], 2),
                        "slowdown_before": round(med["traced_before"] / med["plain"], 2),
                        "round_slowdown_min": round(min(ratios["traced"]), 2),
                        "round_slowdown_max": round(max(ratios["traced"]), 2),
                        "round_slowdown_before_min": round(min(ratios["traced_before"]), 2),
                        "round_slowdown_before_max": round(max(ratios["traced_before"]), 2),
                        "goal_3x": verdict(ratios["traced"]),
                        "goal_3x_before": verdict(ratios["traced_before"])})
    return summary


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--ops", type=int, default=20000)
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args()
    build = os.path.abspath(os.environ.get("CAIRN_BUILD", os.path.join(ROOT, "build")))
    rounds = []
    with tempfile.TemporaryDirectory() as d, tempfile.TemporaryDirectory(dir="/dev/shm") as shm:
        libdir = old_library(build, a.before, d)
        cc = os.path.join(build, "compiler", "cairn-cc")
        ds = os.path.join(d, "ds")
        sh([cc, "-O2", "--trace", os.path.join(ROOT, "compiler/bench/ds_bench.c"), "-o", ds])
        ycsb = os.path.join(d, "ycsb_a")
        sh(["clang-19", "-O2", "-I", os.path.join(ROOT, "include"),
            os.path.join(ROOT, "bench/trace/ycsb_a.c"), os.path.join(build, "runtime/libcairn.so"),
            "-Wl,-rpath," + os.path.join(build, "runtime"), "-lm", "-o", ycsb])
        pool = os.path.join(shm, "p.pool")
        workloads = {
            "splay": lambda: [ds, "pm", pool, "2000", str(a.ops), "splay", "mixed"],
            "ycsb_a": lambda: [ycsb, pool, "1000", str(a.ops)],
        }
        base = dict(os.environ, CAIRN_PMEM_FORCE="1")
        base.pop("CAIRN_TRACE", None)
        sides = {
            "plain": base,
            "traced": dict(base, CAIRN_TRACE=os.path.join(shm, "t.trace")),
            "traced_before": dict(base, CAIRN_TRACE=os.path.join(shm, "t.trace"),
                                  LD_LIBRARY_PATH=libdir),
        }
        for r in range(1, a.rounds + 1):
            order = list(sides.items())
            if r % 2 == 0:
                order.reverse()
            for w, argv in workloads.items():
                for side, env in order:
                    for f in (pool, os.path.join(shm, "t.trace")):
                        if os.path.exists(f):
                            os.unlink(f)
                    rounds.append({"round": r, "workload": w, "side": side,
                                   "ns_per_op": ns_per_op(argv(), env)})
    summary = summarize(rounds)
    collect.write_results(a.out, "seq_cost.py", {"rounds": rounds, "summary": summary})
    for s in summary:
        print(f"{s['workload']}: traced/plain {s['slowdown']} (before: {s['slowdown_before']})")


if __name__ == "__main__":
    main()
