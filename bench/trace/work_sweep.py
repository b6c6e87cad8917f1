#!/usr/bin/env python3
"""`cairn sim` (WHISPER's Table 3 parameters) over traces with more and
more computation before each fence (--work-cycles: the loads, arithmetic
and cache misses a trace does not show), to find how much work per fence
the paper's order ideal < HOPS < x86+PWQ < x86 needs with HOPS at PM.

    CAIRN_BUILD=build bench/trace/work_sweep.py -o bench/trace/results/work_sweep.json T.trace...

For each trace and work the JSON has every design's runtime normalized to
x86, whether the paper's order holds, and per trace the least work of the
sweep from which it holds.
"""
import argparse
import os
import sys

import collect  # bench/trace/collect.py, beside this script

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
WORK = (0, 50, 100, 200, 400, 800, 1600, 3200, 6400)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("traces", nargs="+")
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args()
    from cairn import trace, trace_sim
    rows, first = [], []
    for path in a.traces:
        t = trace.read(path)
        name = os.path.splitext(os.path.basename(path))[0]
        holds_from = None
        for w in WORK:
            r = trace_sim.simulate(t, dict(trace_sim.WHISPER, work_cycles=w))
            n = {d: round(v["normalized"], 3) for d, v in r["designs"].items()}
            order = n["ideal"] < n["hops"] < n["x86-pwq"] < n["x86"]
            if order and holds_from is None:
                holds_from = w
            rows.append({"workload": name, "work_cycles": w, **n,
                         "hops_vs_pwq": round(n["hops"] / n["x86-pwq"], 3),
                         "paper_order": "holds" if order else "no"})
        first.append({"workload": name, "epochs": r["epochs"],
                      "least_work_for_paper_order": "beyond the sweep" if holds_from is None
                      else holds_from})
    collect.write_results(a.out, "work_sweep.py", {"sweep": rows, "crossover": first})
    for x in first:
        print(x)


if __name__ == "__main__":
    main()
