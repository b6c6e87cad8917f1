#!/usr/bin/env python3
"""The runtime's hot paths as programs meet them, two libcairn builds side by
side: BASE (before a change) and BUILD (after), and clang -O2 as the
volatile reference.

    bench/heap/run.py --base DIR [--build DIR] [--rounds N] [--json FILE]

Programs (this directory):
  stores   stores.c under cairn-cc --persistent-heap: stores into the heap
           outside any transaction (cairn__log_store for each); clang -O2
           builds the same file as the reference
  txtemp   txtemp.c under cairn-cc: one transaction allocating, filling and
           freeing 200,000 temporaries of 64 B to 3.6 KiB
  knn      bench/cxx/knn_pm.cpp under cairn-c++ (Armadillo temporaries in one
           transaction per computation; --knn-repeat computations; the
           seconds it prints, which leave out the pool's creation), and
           bench/cxx/knn.cpp by clang++ -O2 as the reference (--no-knn: skip)

Each round runs every build of a program once, the order rotating from round
to round; per program: median seconds and peak RSS per build, and the
per-round ratios BASE/BUILD and BUILD/clang as median with min-max. Every
build must print the same output, or the run stops.
"""
import argparse
import datetime
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def run(cmd):
    """(seconds, peak RSS KiB of this child, stdout); the RSS has a floor:
    the forked Python's own, about 13 MiB"""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, ru = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t0
    out, err = p.stdout.read(), p.stderr.read()
    p.stdout.close()
    p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"run.py: {' '.join(cmd)} failed: {err.strip()}; fix the build or the program")
    m = re.search(r" seconds (\S+)", out)     # knn times its computation itself
    if m:
        dt, out = float(m.group(1)), out[:m.start()] + out[m.end():]
    return dt, ru.ru_maxrss, out


def spread(xs):
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", required=True, help="build directory before the change")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="build directory after")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--json", default=os.path.join(HERE, "heap.json"))
    ap.add_argument("--knn-repeat", type=int, default=200)
    ap.add_argument("--no-knn", action="store_true")
    a = ap.parse_args()
    if a.rounds < 1:
        sys.exit("run.py: --rounds must be at least 1")
    tmp = tempfile.mkdtemp(prefix="cairn-heap-bench-")
    pool = f"/dev/shm/cairn-heap-bench-{os.getpid()}.pool"
    builds = {"base": a.base, "build": a.build}
    progs = {}
    for name, src, flags, args in [
            ("stores", "stores.c", ["--persistent-heap"], []),
            ("txtemp", "txtemp.c", [], [pool])]:
        exes = {}
        for b, d in builds.items():
            cc = os.path.join(d, "compiler", "cairn-cc")
            exe = os.path.join(tmp, f"{name}-{b}")
            subprocess.run([cc, "-O2", *flags, os.path.join(HERE, src), "-o", exe], check=True)
            exes[b] = [exe, *args]
        if name == "stores":
            exe = os.path.join(tmp, "stores-clang")
            subprocess.run(["clang-19", "-O2", os.path.join(HERE, src), "-o", exe], check=True)
            exes["clang"] = [exe]
        progs[name] = exes
    if not a.no_knn:
        sys.path.insert(0, os.path.join(ROOT, "bench", "cxx"))
        from run import iris_csv
        iris = iris_csv(os.path.join(os.environ.get("XDG_CACHE_HOME",
                                                    os.path.expanduser("~/.cache")), "cairn"))
        args = [iris, "5", str(a.knn_repeat)]
        flags = ["-std=c++17", "-O2", "-Wno-deprecated-declarations"]
        exes = {}
        for b, d in builds.items():
            exe = os.path.join(tmp, f"knn-{b}")
            subprocess.run([os.path.join(d, "compiler", "cairn-c++"), *flags,
                            os.path.join(ROOT, "bench", "cxx", "knn_pm.cpp"), "-o", exe,
                            "-larmadillo"], check=True)
            exes[b] = [exe, *args]
        exe = os.path.join(tmp, "knn-clang")
        subprocess.run(["clang++-19", *flags, os.path.join(ROOT, "bench", "cxx", "knn.cpp"),
                        "-o", exe, "-larmadillo"], check=True)
        exes["clang"] = [exe, *args]
        progs["knn"] = exes
        os.environ["KNN_POOL"] = pool
    os.environ["CAIRN_PMEM_FORCE"] = "1"
    result = {"command": "bench/heap/run.py " + " ".join(sys.argv[1:]),
              "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "rounds": a.rounds, "programs": []}
    git = ["git", "-C", ROOT]
    commit = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True)
    if commit.returncode == 0:
        dirty = subprocess.run([*git, "status", "--porcelain", "--", "runtime", "compiler",
                                "include"], capture_output=True, text=True).stdout.strip()
        result["source"] = {"commit": commit.stdout.strip(), "runtime_dirty": bool(dirty)}
    for name, exes in progs.items():
        order = list(exes)
        secs = {b: [] for b in order}
        rss = {b: [] for b in order}
        outs = set()
        for r in range(a.rounds):
            for b in order[r % len(order):] + order[:r % len(order)]:
                if os.path.exists(pool):
                    os.unlink(pool)
                dt, kib, out = run(exes[b])
                secs[b].append(dt)
                rss[b].append(kib)
                outs.add(out)
        if len(outs) != 1:
            sys.exit(f"run.py: the builds of {name} print different results: {sorted(outs)}")
        row = {"name": name}
        for b in order:
            row[f"{b}_s"] = statistics.median(secs[b])
            row[f"{b}_rss_mib"] = statistics.median(rss[b]) / 1024
        sp = spread([x / y for x, y in zip(secs["base"], secs["build"])])
        row.update(speedup=sp["median"], speedup_min=sp["min"], speedup_max=sp["max"])
        if "clang" in secs:
            for b in ("base", "build"):
                sp = spread([x / y for x, y in zip(secs[b], secs["clang"])])
                row.update({f"{b}_vs_clang": sp["median"], f"{b}_vs_clang_min": sp["min"],
                            f"{b}_vs_clang_max": sp["max"]})
        result["programs"].append(row)
        print(json.dumps(row))
    if os.path.exists(pool):
        os.unlink(pool)
    with open(a.json, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
