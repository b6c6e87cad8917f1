#!/usr/bin/env python3
"""Records per second of `cairn trace report` and `cairn sim`: the per-record
pass in Python as it was at REV (the reader and the analysis of that commit)
against cairn-trace-scan in this tree, side by side, alternating in one run.

    CAIRN_BUILD=build bench/trace/scan_speed.py --before 82dfcd4 --rounds 3 \\
        -o bench/trace/results/scan_speed.json TRACE...

Each round runs both commands on each trace once with each side, in
alternating order; the time is the CPU seconds of the command and its
children (getrusage), steadier than the wall clock on a shared machine.
The JSON has every round, and per trace and command the median of each side
and their ratio.
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import io

import collect  # bench/trace/collect.py, beside this script

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))

COMMANDS = {"report": ["trace", "report", "--json"], "sim": ["sim", "--json"]}


def extract(rev, dest):
    """python/cairn and runtime/*.h of commit rev into dest (the layout the
    reader of that commit looks for its headers in)."""
    blob = subprocess.run(["git", "-C", ROOT, "archive", rev, "python/cairn", "runtime"],
                          capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
        tar.extractall(dest, members=[m for m in tar.getmembers()
                                      if m.name.startswith("python/") or m.name.endswith(".h")])
    return os.path.join(dest, "python")


def cpu_seconds(pythonpath, argv):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = dict(os.environ, PYTHONPATH=pythonpath)
    subprocess.run([sys.executable, "-m", "cairn", *argv], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--before", required=True, help="the commit whose Python pass is compared")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args()
    from cairn import trace
    with tempfile.TemporaryDirectory() as d:
        sides = {"python (" + a.before + ")": extract(a.before, d),
                 "cairn-trace-scan": os.path.join(ROOT, "python")}
        rounds = []
        for r in range(1, a.rounds + 1):
            order = list(sides.items()) if r % 2 else list(reversed(sides.items()))
            for path in a.traces:
                records = trace.read(path).records
                for cmd, argv in COMMANDS.items():
                    for side, pp in order:
                        sec = cpu_seconds(pp, [*argv, path])
                        rounds.append({"round": r, "trace": os.path.basename(path), "command": cmd,
                                       "side": side, "records": records, "cpu_s": round(sec, 3),
                                       "records_per_s": round(records / sec) if sec else None})
    summary = []
    for path in a.traces:
        name = os.path.basename(path)
        for cmd in COMMANDS:
            med = {side: statistics.median(x["cpu_s"] for x in rounds
                                           if x["trace"] == name and x["command"] == cmd
                                           and x["side"] == side) for side in sides}
            old, new = med.values()
            records = next(x["records"] for x in rounds if x["trace"] == name)
            summary.append({"trace": name, "command": cmd, "records": records,
                            "python_records_per_s": round(records / old),
                            "c_records_per_s": round(records / new),
                            "python_s_per_million": round(old / records * 1e6, 2),
                            "c_s_per_million": round(new / records * 1e6, 2),
                            "speedup": round(old / new, 1)})
    collect.write_results(a.out, "scan_speed.py", {"rounds": rounds, "summary": summary})
    for s in summary:
        print(f"{s['trace']} {s['command']}: python {s['python_records_per_s']} records/s, "
              f"C {s['c_records_per_s']} records/s ({s['speedup']}x)")


if __name__ == "__main__":
    main()
