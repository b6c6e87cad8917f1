#!/usr/bin/env python3
"""Power loss during the second recovery, on every state of the first, as JSON for docs/RESULTS.md.

    CAIRN_BUILD=build bench/crashcheck/recover_twice.py --json bench/crashcheck/results/recover-twice.json

What tests/crashcheck/test_recover_twice.py runs (tests/crashcheck/twice.py)
with the shipped runtime: the recover job of rt_jobs.c under `cairn
crashcheck`, every distinct crash image of it that needs recovery opened
again under the trace (`rt_jobs recover reopen`), and every crash state of
that second run recovered a third time and checked. Written: the first
run's counts, the second-level runs' summed counts (crash points, states
checked, failed), the same per number of transactions the image still
held open (3: the first recovery had rolled back nothing durably; 0: all
of it), and the wall and CPU seconds of the whole (CAIRN_TWICE_JOBS
second-level runs at once, default 2).
"""
import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "crashcheck"))
from rtjobs import BUILD, build  # noqa: E402
import twice  # noqa: E402
from rt_jobs import provenance  # noqa: E402  (bench/crashcheck/rt_jobs.py)

COUNTS = ("crash_points", "exhaustive_points", "states", "failed", "duplicates", "skipped")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", required=True, help="where to write the results")
    args = p.parse_args()
    lib = BUILD / "runtime" / "libcairn.a"
    if not lib.exists():
        sys.exit(f"bench/crashcheck/recover_twice.py: {lib} is not built; run scripts/build.sh")
    prov = provenance("runtime", "tests/crashcheck")
    load = os.getloadavg()[0]
    base = "/dev/shm" if os.path.isdir("/dev/shm") else None
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="cairn-twice-", dir=base) as w:
        work = Path(w)
        prog = build(lib, work / "rt_jobs")
        first = twice.first_level(prog, work)
        print(f"first recovery: {first['states']} states at {first['crash_points']} crash points, "
              f"{len(first['images'])} distinct images to recover again", file=sys.stderr)
        second = twice.second_level(prog, first["images"], work)
    wall = time.monotonic() - t0
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    broken = [r for r in second["rows"] if r["result"] is None or not r["ran_to_end"]]
    if broken:
        sys.exit(f"bench/crashcheck/recover_twice.py: a second-level run did not finish "
                 f"({broken[0]['image']}):\n{broken[0]['output']}")
    open_tx = {Path(img).name: o for img, _, o in first["images"]}
    groups = {}
    for r in second["rows"]:
        o = open_tx[r["image"]]
        g = groups.setdefault(o, dict(open_transactions=o, images=0, **{k: 0 for k in COUNTS}))
        g["images"] += 1
        for k in COUNTS:
            g[k] += r["result"][k]
    result = {
        "command": "bench/crashcheck/recover_twice.py " + " ".join(sys.argv[1:]),
        **prov,
        "config": {"load_average": load, "cpus": os.cpu_count(), "runs_at_once": twice.JOBS_AT_ONCE},
        "first": {k: first[k] for k in (*COUNTS, "saved", "distinct", "clean")}
                 | {"images": len(first["images"])},
        "second": {k: second[k] for k in (*COUNTS, "runs", "failed_runs")},
        "by_open_transactions": [groups[o] for o in sorted(groups, reverse=True)],
        "wall_s": round(wall, 1),
        "cpu_s": round(ru.ru_utime + ru.ru_stime, 1),
    }
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    print(f"second recovery: {second['states']} states at {second['crash_points']} crash points "
          f"in {second['runs']} runs, {second['failed']} failed; {wall:.0f} s; wrote {args.json}",
          file=sys.stderr)
    return 1 if second["failed_runs"] else 0


if __name__ == "__main__":
    sys.exit(main())
