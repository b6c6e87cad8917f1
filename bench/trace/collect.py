#!/usr/bin/env python3
"""Gather the trace results docs/RESULTS.md shows into one JSON file.

    bench/trace/collect.py --reports DIR --sim SIM.json --sim-host HOST.json \
        --cost COST.txt --cost-samples COST_SAMPLES.txt --speed-trace T.trace -o bench/trace/results/trace.json

DIR holds `cairn trace report --json` outputs named WORKLOAD.json; SIM and
HOST are `cairn sim --json` of the same traces (Table 3 and --preset host);
COST is bench/trace/cost.sh's table and COST_SAMPLES its stderr (each round).
--stepcount LIBRARY FILE (repeatable): cairn-stepcount's output for
bench/trace/update_1k.c built for that library. --speed-trace is timed here: CPU
seconds of `cairn trace report`, `cairn sim` and `cairn trace stats` on it.
"""
import argparse
import datetime
import json
import math
import os
import resource
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
DESIGNS = ("x86", "x86-pwq", "x86-eadr", "hops", "hops-pwq", "ideal")
ORDER = ("kvstore", "kvstore_cc", "list", "uthash", "rbtree", "splay", "ycsb_a")

# WHISPER's published figures (ASPLOS 2017, section 5 and Fig. 10), as its
# text states them
PAPER = [
    {"figure": "epochs per transaction (Fig. 3)", "whisper": "between 5 and 50 for most; "
     "Echo and N-store TPC-C over a hundred"},
    {"figure": "singleton epochs (Fig. 4)", "whisper": "75% on average (native and library)"},
    {"figure": "self-dependencies (Fig. 5)", "whisper": "25-55% native, 80% NVML apps"},
    {"figure": "cross-dependencies", "whisper": "5% NFS, 1.16% exim, less for the rest"},
    {"figure": "write amplification", "whisper": "NVML ~1000%, Mnemosyne 300-600%, "
     "N-store 200-1400%, PMFS 10%"},
    {"figure": "non-temporal writes", "whisper": "PMFS 96%, Mnemosyne 67%"},
    {"figure": "PM share of memory accesses (Fig. 6)", "whisper": "about 4% (>96% DRAM)"},
    {"figure": "Fig. 10, normalized to x86", "whisper": "x86+PWQ 0.845, HOPS 0.757, "
     "HOPS+PWQ 0.746, ideal 0.593 (means)"},
]


def pct(x):
    return None if x is None else round(100 * x, 1)


def whisper_row(name, r):
    tx, ep, d, wa = r["transactions"], r["epochs"], r["dependencies"], r["write_amplification"]
    u = wa["user_bytes"] or 0
    ex = wa["extra_bytes"]
    share = (lambda k: round(100 * ex.get(k, 0) / u, 1) if u else None)
    return {"workload": name, "transactions": tx["committed"],
            "epochs_per_tx_median": tx["epochs_median"],
            "epochs_per_tx_mean": round(tx["epochs_mean"], 2) if tx["epochs_mean"] else None,
            "epochs_per_tx_max": tx["epochs_max"], "epochs": ep["count"],
            "singleton_pct": pct(ep["singleton_share"]),
            "mean_lines": round(ep["mean_lines"], 2) if ep["mean_lines"] else None,
            "self_dep_pct": pct(d["self_share"]), "cross_dep_pct": pct(d["cross_share"]),
            "write_amp_pct": pct(wa["amplification"]), "log_pct": share("log"),
            "commit_pct": share("commit"), "alloc_pct": share("allocator metadata"),
            "user_bytes_from": "stores" if wa["user_bytes_from"].startswith("store") else "log_append",
            "nt_pct": pct(r["non_temporal"]["share"]), "pm_stores_pct": pct(r["stores"]["pm_share"])}


def fig10(sim):
    rows = []
    for name in ORDER:
        v = sim.get(name + ".trace")
        if v:
            row = {"workload": name}
            row.update({d: round(v["designs"][d]["normalized"], 3) for d in DESIGNS})
            row["x86_ms"] = round(v["designs"]["x86"]["ns"] / 1e6, 3)
            rows.append(row)
    g = {"workload": "geometric mean"}
    g.update({d: round(math.exp(sum(math.log(r[d]) for r in rows) / len(rows)), 3)
              for d in DESIGNS})
    g["x86_ms"] = None
    return rows + [g]


def cost(path, samples_path):
    """cost.sh's medians, and each workload's paired per-round ratios
    traced / plain judged against the <= 3x goal on their min-max spread."""
    from cairn.results import verdict
    samples = {}
    for line in open(samples_path) if samples_path else ():
        p = line.split()
        if len(p) > 3 and p[0] == "samples":
            samples[(p[1], p[2])] = [float(x) for x in p[3:]]
    rows = []
    for line in open(path):
        p = line.split()
        if len(p) == 6 and p[0] != "workload":
            same = p[0] == "ycsb_a"             # one build: no separate --trace build
            row = {"workload": p[0], "plain_ns": float(p[1]),
                   "trace_off_ns": None if same else float(p[2]),
                   "traced_ns": float(p[3]), "traced_vs_plain": float(p[4]),
                   "traced_vs_off": None if same else float(p[5]),
                   "paired_min": None, "paired_max": None, "goal_3x": "not judged (no rounds)"}
            if (p[0], "plain") in samples:
                ratios = [t / b for b, t in zip(samples[(p[0], "plain")],
                                                samples[(p[0], "traced")])]
                row.update(paired_min=round(min(ratios), 2), paired_max=round(max(ratios), 2),
                           goal_3x=verdict(min(ratios), max(ratios), 3.0, better="lower"))
            rows.append(row)
    return rows


def written_back(files, updates, value=1024):
    """Per update of update_1k.c under cairn-stepcount, for each library:
    lines written back (clwb/clflushopt/clflush) and non-temporal bytes,
    bytes to PM, fences, and write amplification over the value's bytes."""
    rows = []
    for lib, path in files:
        r = [json.loads(x) for x in open(path) if x.startswith("{")][0]
        flushed = r["clwb"] + r["clflushopt"] + r["clflush"]
        total = (flushed * 64 + r["nt_bytes"]) / updates
        rows.append({"library": lib, "updates": updates,
                     "flushed_lines": round(flushed / updates, 2),
                     "nt_bytes": round(r["nt_bytes"] / updates, 1),
                     "bytes_to_pm": round(total, 1),
                     "fences": round((r["sfence"] + r["mfence"]) / updates, 2),
                     "write_amp_pct": round(100 * (total - value) / value, 1)})
    return rows


def cpu_seconds(argv):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
                   env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python")))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return round(after.ru_utime - before.ru_utime, 2), after.ru_maxrss


def write_results(path, script, data):
    """data as JSON at path, with the command line, the time and the commit
    that made it (what docs/RESULTS.md's provenance blocks print); script is
    the bench/trace script's name."""
    out = {
        "command": f"bench/trace/{script} " + " ".join(sys.argv[1:]),
        "started": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "source": {"commit": subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                                            capture_output=True, text=True).stdout.strip()},
        **data,
    }
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reports", required=True)
    ap.add_argument("--sim", required=True)
    ap.add_argument("--sim-host", required=True)
    ap.add_argument("--cost", required=True)
    ap.add_argument("--cost-samples", required=True, help="cost.sh's stderr")
    ap.add_argument("--cost-first", help="an earlier cost.sh table (medians only)")
    ap.add_argument("--speed-trace", required=True)
    ap.add_argument("--stepcount", nargs=2, action="append", metavar=("LIBRARY", "OUT.jsonl"),
                    default=[], help="cairn-stepcount of update_1k.c built for LIBRARY")
    ap.add_argument("--stepcount-updates", type=int, default=200)
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args()
    reports = {n: json.load(open(os.path.join(a.reports, n + ".json"))) for n in ORDER
               if os.path.exists(os.path.join(a.reports, n + ".json"))}
    sim, host = json.load(open(a.sim)), json.load(open(a.sim_host))
    speed = {"trace": os.path.basename(a.speed_trace)}
    from cairn import trace
    speed["records"] = trace.read(a.speed_trace).records
    for cmd, argv in (("report", ["trace", "report"]), ("sim", ["sim"]), ("stats", ["trace", "stats"])):
        sec, rss_kb = cpu_seconds([sys.executable, "-m", "cairn", *argv, a.speed_trace])
        speed[cmd + "_cpu_s"] = sec
        speed[cmd + "_s_per_million"] = round(sec / speed["records"] * 1e6, 2)
        speed["max_rss_mb"] = round(rss_kb / 1024)        # the largest of the three
    table = [whisper_row(n, reports[n]) for n in ORDER if n in reports]
    f10 = fig10(sim)
    g = f10[-1]
    ycsb = next((r for r in table if r["workload"] == "ycsb_a"), None)
    goals = {
        "write_amp_ycsb_a_pct": ycsb and ycsb["write_amp_pct"],
        "write_amp_verdict": None if not ycsb else ("met" if ycsb["write_amp_pct"] <= 100
                                                    else "NOT met"),
        # WHISPER: "between 5 and 50" epochs for most durable transactions
        "epochs_below_whisper": ", ".join(r["workload"] for r in table
                                          if r["epochs_per_tx_median"] < 5),
        "epochs_not_below_whisper": ", ".join(f"{r['workload']} (median {r['epochs_per_tx_median']:g})"
                                              for r in table if r["epochs_per_tx_median"] >= 5),
        "order_pwq_met": all(r["ideal"] < r["hops-pwq"] < r["x86-pwq"] < r["x86"] for r in f10),
        "order_paper_met": all(r["ideal"] < r["hops"] < r["x86-pwq"] < r["x86"] for r in f10),
        "hops_saves_pct_min": round(100 * (1 - max(r["hops"] for r in f10[:-1])), 1),
        "hops_saves_pct_max": round(100 * (1 - min(r["hops"] for r in f10[:-1])), 1),
    }
    goals["order_pwq_verdict"] = "met" if goals["order_pwq_met"] else "NOT met"
    goals["order_paper_verdict"] = "met" if goals["order_paper_met"] else "NOT met"
    write_results(a.out, "collect.py", {
        "whisper_table": table,
        "paper": PAPER,
        "fig10": f10,
        "fig10_host": fig10(host),
        "host_params": [next(iter(host.values()))["params"]["measured"]],
        "update_1k": written_back(a.stepcount, a.stepcount_updates),
        "cost": cost(a.cost, a.cost_samples),
        "cost_first": cost(a.cost_first, None) if a.cost_first else [],
        "speed": [speed],
        "goals": goals,
        "geomean": g,
    })


if __name__ == "__main__":
    main()
