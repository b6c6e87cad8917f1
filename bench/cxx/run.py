#!/usr/bin/env python3
"""Seed 002's C++ workloads under cairn-c++, side by side with the volatile
programs: the Boost harness (Boost.Intrusive containers in a pool) and KNN
over Armadillo matrices on the iris data set.

    .venv/bin/python bench/cxx/run.py boost [--rounds N] [--records N] [--ops N] [--json FILE]
    .venv/bin/python bench/cxx/run.py knn   [--rounds N] [--json FILE]

(the venv's python: it takes its argument types from the cairn package)

Each builds three programs: the original by clang++ -O2 (volatile), the
original by cairn-c++ -O2 (volatile data, instrumented code) and the port
(*_pm.cpp) by cairn-c++ -O2 (its data in a pool on /dev/shm, updates in
transactions); runs them in turn, ROUNDS rounds, order rotating; reports
median seconds and the median of the per-round ratios with their min-max,
and the lines the port changes against the original (comments and blank
lines not counted). Every build must print the same result, or the run stops.
The iris data comes from Debian's python3-sklearn package (downloaded, not
installed: `apt-get download`, then its iris.csv is extracted).
"""
import argparse
import difflib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from cairn.argtypes import positive_int

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
STRUCTURES = ["ll", "hash", "rbtree", "avltree", "splay", "sg"]
GOAL = 1.5   # issue 17: PM <= 1.5x the volatile build on average


def changed_lines(a, b):
    """(lines the port adds or changes, lines of the original it changes or
    removes): the + and - lines of a diff of the code lines"""
    def code(path):
        with open(path) as f:
            return [ln for ln in f.read().splitlines() if ln.strip() and
                    not ln.strip().startswith("//")]
    diff = list(difflib.unified_diff(code(a), code(b), lineterm="", n=0))
    plus = sum(1 for d in diff if d.startswith("+") and not d.startswith("+++"))
    minus = sum(1 for d in diff if d.startswith("-") and not d.startswith("---"))
    return plus, minus


def iris_csv(cache):
    """scikit-learn's iris.csv from Debian's python3-sklearn .deb"""
    out = os.path.join(cache, "iris.csv")
    if os.path.exists(out):
        return out
    os.makedirs(cache, exist_ok=True)
    r = subprocess.run(["apt-get", "download", "python3-sklearn"], cwd=cache,
                       capture_output=True, text=True)
    debs = [f for f in os.listdir(cache) if f.startswith("python3-sklearn") and f.endswith(".deb")]
    if not debs:
        sys.exit("run.py: could not download Debian's python3-sklearn for iris.csv "
                 f"({r.stderr.strip()[-300:]}); check the apt sources, or put iris.csv in {cache}")
    x = os.path.join(cache, "x")
    subprocess.run(["dpkg-deb", "-x", os.path.join(cache, debs[0]), x], check=True)
    src = os.path.join(x, "usr/lib/python3/dist-packages/sklearn/datasets/data/iris.csv")
    os.replace(src, out)
    subprocess.run(["rm", "-rf", x] + [os.path.join(cache, d) for d in debs])
    return out


def measure(name, builds, runs, env, rounds, pool):
    """runs: [(label, argv-after-exe)]; each build must print the same
    result (its output without the timing); seconds = the word after
    "seconds". Returns per-label rows."""
    names = list(builds)
    rows = []
    done, total = 0, len(runs) * rounds
    for label, argv in runs:
        times = {n: [] for n in names}
        ratios = {n: [] for n in names[1:]}
        for rnd in range(rounds):
            got, results = {}, set()
            for n in names[rnd % 3:] + names[:rnd % 3]:
                if os.path.exists(pool):
                    os.unlink(pool)
                r = subprocess.run([builds[n], *argv], capture_output=True, text=True, env=env)
                if r.returncode:
                    sys.exit(f"run.py: {n} {label} failed ({r.returncode}):\n{r.stderr[-2000:]}")
                w = r.stdout.split()
                i = w.index("seconds")
                got[n] = float(w[i + 1])
                results.add(" ".join(w[:i]))
            if os.path.exists(pool):
                os.unlink(pool)
            if len(results) != 1:
                sys.exit(f"run.py: the builds of {name} {label} disagree: {results}")
            for n in names:
                times[n].append(got[n])
            for n in names[1:]:
                ratios[n].append(got[n] / got[names[0]])
            done += 1
            print(f"\r{name}: {done}/{total} rounds", end="", file=sys.stderr, flush=True)
        row = {"workload": label, "result": results.pop()}
        for n in names:
            row[n + " s"] = statistics.median(times[n])
        for n in names[1:]:
            row[n + " ratio"] = statistics.median(ratios[n])
            row[n + " min"], row[n + " max"] = min(ratios[n]), max(ratios[n])
        rows.append(row)
    print(file=sys.stderr)
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("what", choices=["boost", "knn"])
    p.add_argument("--rounds", type=positive_int, default=7)
    p.add_argument("--records", type=positive_int, default=10000, help="boost: records loaded")
    p.add_argument("--ops", type=positive_int, default=100000, help="boost: operations")
    p.add_argument("--repeat", type=positive_int, default=200, help="knn: computations per run")
    p.add_argument("--only", help="boost: comma-separated structures (default: all)")
    p.add_argument("--json", help="write the results here")
    p.add_argument("--build", default=os.environ.get("CAIRN_BUILD", os.path.join(ROOT, "build")))
    a = p.parse_args()
    cxx = os.path.join(a.build, "compiler", "cairn-c++")
    if not os.access(cxx, os.X_OK):
        sys.exit(f"run.py: {cxx} not found; build cairn first (scripts/build.sh)")
    tmp = tempfile.mkdtemp(prefix="cairn-cxx-bench-")
    shm = "/dev/shm" if os.path.isdir("/dev/shm") else tmp
    pool = os.path.join(shm, f"cairn-cxx-bench-{os.getpid()}.pool")
    env = dict(os.environ, CAIRN_PMEM_FORCE="1", KV_POOL=pool, KNN_POOL=pool)
    flags = ["-std=c++17", "-O2", "-Wno-deprecated-declarations"]
    if a.what == "boost":
        structures = a.only.split(",") if a.only else STRUCTURES
        bad = [s for s in structures if s not in STRUCTURES]
        if bad:
            sys.exit(f"run.py: unknown structure {bad[0]}; choose from {', '.join(STRUCTURES)}")
        orig, port, libs = "boost_kv.cpp", "boost_kv_pm.cpp", []
        runs = [(s, [s, str(a.records), str(a.ops)]) for s in structures]
    else:
        orig, port, libs = "knn.cpp", "knn_pm.cpp", ["-larmadillo"]
        iris = iris_csv(os.path.join(os.environ.get("XDG_CACHE_HOME",
                                                    os.path.expanduser("~/.cache")), "cairn"))
        runs = [("iris k=5", [iris, "5", str(a.repeat)])]
    builds = {}
    for name, (cc, src) in {"volatile": ("clang++-19", orig), "cairn-c++ DRAM": (cxx, orig),
                            "cairn-c++ PM": (cxx, port)}.items():
        builds[name] = os.path.join(tmp, name.replace(" ", "_").replace("+", "x"))
        r = subprocess.run([cc, *flags, os.path.join(HERE, src), "-o", builds[name], *libs],
                           capture_output=True, text=True)
        if r.returncode:
            sys.exit(f"run.py: building {name} failed:\n{r.stderr[-3000:]}")
    rows = measure(a.what, builds, runs, env, a.rounds, pool)
    plus, minus = changed_lines(os.path.join(HERE, orig), os.path.join(HERE, port))
    report = {
        "command": "bench/cxx/run.py " + " ".join(sys.argv[1:]),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "source": {"commit": subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                                            capture_output=True, text=True).stdout.strip()},
        "config": {"rounds": a.rounds, "records": a.records, "ops": a.ops, "repeat": a.repeat},
        "changed_lines": plus, "removed_lines": minus,
        "rows": rows,
        "pm_ratio_geomean": statistics.geometric_mean([r["cairn-c++ PM ratio"] for r in rows]),
        "goal": GOAL,
    }
    print("| workload | volatile s | cairn-c++ DRAM s | ratio (min-max) | cairn-c++ PM s | ratio (min-max) |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['workload']} | {r['volatile s']:.4f} | {r['cairn-c++ DRAM s']:.4f} | "
              f"{r['cairn-c++ DRAM ratio']:.2f}x ({r['cairn-c++ DRAM min']:.2f}-"
              f"{r['cairn-c++ DRAM max']:.2f}) | {r['cairn-c++ PM s']:.4f} | "
              f"{r['cairn-c++ PM ratio']:.2f}x ({r['cairn-c++ PM min']:.2f}-"
              f"{r['cairn-c++ PM max']:.2f}) |")
    print(f"PM against volatile, geometric mean: {report['pm_ratio_geomean']:.2f}x; "
          f"{port}: +{plus} -{minus} code lines against {orig}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(report, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
