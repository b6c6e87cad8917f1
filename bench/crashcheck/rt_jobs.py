#!/usr/bin/env python3
"""cairn's own runtime jobs under `cairn crashcheck`, as JSON for docs/RESULTS.md.

    CAIRN_BUILD=build bench/crashcheck/rt_jobs.py --json bench/crashcheck/results/rt-jobs.json

Each job of tests/crashcheck/rt_jobs.c (the ones test_runtime_jobs.py
runs, with the same options: tests/crashcheck/rtjobs.py) is run once under
`cairn crashcheck` with the shipped runtime; per job: crash points, the
points explored exhaustively, states checked, duplicates, skipped, failed,
the most lines in play at one point, lines dropped as dead or unread, and
the wall and CPU seconds of the whole run (traced program, checker and
checks). Progress on stderr, one line per job.
"""
import argparse
import datetime
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "crashcheck"))
from rtjobs import BUILD, JOBS, build, crashcheck  # noqa: E402


def cpu_of_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_job(prog, name, work):
    out = Path(work) / f"{name}.json"
    pool = Path(work) / f"{name}.pool"
    t0, c0 = time.monotonic(), cpu_of_children()
    r = crashcheck(prog, name, pool, ["--json", str(out)])
    wall, cpu = time.monotonic() - t0, cpu_of_children() - c0
    if r.returncode != 0 or "exited with status" in r.stderr or not out.exists():
        sys.exit(f"bench/crashcheck/rt_jobs.py: job {name} failed (crashcheck exit "
                 f"{r.returncode}):\n{r.stdout}{r.stderr[-3000:]}")
    j = json.loads(out.read_text())
    points = j.get("points") or []   # per crash point, when the tool writes them
    return {
        "job": name,
        "crash_points": j["crash_points"],
        "exhaustive_points": j["exhaustive_points"],
        "states": j["states"],
        "duplicates": j.get("duplicates", 0),
        "skipped": j.get("skipped", 0),
        "failed": j["failed"],
        "max_lines_in_play": j["max_lines_in_play"],
        "pruned_points": j.get("pruned_points", 0),
        "dead_lines": sum(p.get("dead_lines") or 0 for p in points),
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
    }


def provenance(*paths):
    """when the run started, and the commit it measured (dirty: the given
    paths have uncommitted changes), as the results JSON records them"""
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    dirty = bool(subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", *paths],
                                capture_output=True, text=True).stdout.strip())
    return {"started": started, "source": {"commit": commit, "runtime_dirty": dirty}}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", required=True, help="where to write the results")
    p.add_argument("--jobs", nargs="*", default=sorted(JOBS), help="which jobs (default: all)")
    args = p.parse_args()
    unknown = [j for j in args.jobs if j not in JOBS]
    if unknown:
        sys.exit(f"bench/crashcheck/rt_jobs.py: no job {', '.join(unknown)}; "
                 f"jobs: {', '.join(sorted(JOBS))}")
    lib = BUILD / "runtime" / "libcairn.a"
    if not lib.exists():
        sys.exit(f"bench/crashcheck/rt_jobs.py: {lib} is not built; run scripts/build.sh")
    prov = provenance("runtime")
    base = "/dev/shm" if os.path.isdir("/dev/shm") else None
    rows = []
    with tempfile.TemporaryDirectory(prefix="cairn-rtjobs-", dir=base) as work:
        prog = build(lib, Path(work) / "rt_jobs")
        for i, name in enumerate(args.jobs, 1):
            row = run_job(prog, name, work)
            rows.append(row)
            print(f"[{i}/{len(args.jobs)}] {name}: {row['states']} states at "
                  f"{row['crash_points']} crash points ({row['exhaustive_points']} exhaustive), "
                  f"{row['failed']} failed, {row['wall_s']} s", file=sys.stderr)
    total = {k: sum(r[k] for r in rows) for k in
             ("crash_points", "exhaustive_points", "states", "failed")}
    result = {"command": "bench/crashcheck/rt_jobs.py " + " ".join(sys.argv[1:]),
              **prov,
              "config": {"load_average": os.getloadavg()[0], "cpus": os.cpu_count()},
              "jobs": rows, "total": total}
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
