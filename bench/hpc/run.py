#!/usr/bin/env python3
"""NVL-C's HPC kernels (seed 004 section 5) side by side: DRAM against
cairn-cc's per-row checkpoint transactions, with and without
cairn_tx_clobber.

    bench/hpc/run.py [--build DIR] [--rounds N] [--scale X] [--kernels K,...]
                     [--json FILE] [--plot FILE.png]

Builds (bench/hpc/kernels.c, built by the main build into BUILD/bench/hpc):
  dram     clang -O2, arrays in DRAM, no transactions (NVL-C's reference)
  backup   hpc-cairn: arrays in a pool on /dev/shm, one CAIRN_TX per row;
           cairn-cc logs every store into the row (NVL-C's T1/T2)
  clobber  hpc-cairn --clobber: the same, and each transaction first
           clobbers its row, so only the row counter is backed up (NVL-C T3)

Each round runs every build of a kernel once, the order rotating from round
to round. Per kernel and build: median CPU seconds in the kernel (pool
creation and input initialization left out; CPU time because wall-clock
time on a shared machine mostly measures the scheduler), the undo records and bytes and lines
flushed (cairn_stats), and per-round ratios to DRAM and backup/clobber as
median with min-max. Every build must print the same checksum, or the run
stops.

Default sizes (--scale 1): triad over 2 M doubles x 10 passes, matmul 384 x
384, jacobi 1024 x 1024 x 20 sweeps; --scale multiplies the triad's vector
and the sweeps, and the matrix side by its square root.
"""
import argparse
import datetime
import json
import math
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
from cairn.results import verdict  # noqa: E402
from cairn.ycsb import _source  # noqa: E402

KERNELS = ("triad", "matmul", "jacobi")
BUILDS = ("dram", "backup", "clobber")
ROW_MIN = 4096   # the triad's checkpoint chunk (kernels.c ROW)


def die(msg):
    sys.exit(f"hpc/run.py: {msg}")


def sizes(scale):
    side = math.sqrt(scale)
    return {"triad": (max(ROW_MIN, round(2_000_000 * scale)), 10),
            "matmul": (max(8, round(384 * side)), 1),
            "jacobi": (max(8, round(1024 * side)), max(1, round(20 * scale)))}


def parse(line):
    w = line.split()
    if len(w) != 17 or w[1] != "seconds":
        die(f"unexpected output {line!r}; rebuild bench/hpc")
    d = dict(zip(w[1::2], w[2::2]))
    return {"seconds": float(d["seconds"]), "rows": int(d["rows"]), "checksum": d["checksum"],
            "undo_records": int(d["undo_records"]), "undo_bytes": int(d["undo_bytes"]),
            "log_skipped": int(d["log_skipped"]), "flushes": int(d["flushes"]),
            "fences": int(d["fences"])}


def run_build(exes, build, kernel, n, reps, pool):
    exe = exes["dram" if build == "dram" else "cairn"]
    argv = [exe, kernel, pool, str(n), str(reps)] + (["--clobber"] if build == "clobber" else [])
    if os.path.exists(pool):
        os.unlink(pool)
    r = subprocess.run(argv, capture_output=True, text=True,
                       env={**os.environ, "CAIRN_PMEM_FORCE": "1"})
    if os.path.exists(pool):
        os.unlink(pool)
    if r.returncode != 0:
        die(f"{' '.join(argv)} failed: {r.stderr.strip()}; fix the build or lower --scale")
    return parse(r.stdout.strip())


def spread(xs):
    return statistics.median(xs), min(xs), max(xs)


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 3.2))
    width = 0.38
    xs = range(len(rows))
    for k, (build, color) in enumerate((("backup", "#d62728"), ("clobber", "#2ca02c"))):
        med = [r[f"{build}_vs_dram"] for r in rows]
        lo = [r[f"{build}_vs_dram"] - r[f"{build}_vs_dram_min"] for r in rows]
        hi = [r[f"{build}_vs_dram_max"] - r[f"{build}_vs_dram"] for r in rows]
        ax.bar([x + (k - 0.5) * width for x in xs], med, width, yerr=[lo, hi], capsize=3,
               color=color, label=f"cairn-cc, {build}")
    ax.axhline(1.0, color="black", lw=0.8, ls="--", label="DRAM only")
    ax.set_xticks(list(xs), [r["kernel"] for r in rows])
    ax.set_ylabel("time / DRAM-only time")
    ax.set_title("HPC kernels, one checkpoint transaction per row")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.environ.get("CAIRN_BUILD", os.path.join(ROOT, "build")),
                    help="cairn build directory (default $CAIRN_BUILD or ./build)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--scale", type=float, default=1.0, help="size factor (default 1)")
    ap.add_argument("--kernels", default=",".join(KERNELS), help=f"subset of {','.join(KERNELS)}")
    ap.add_argument("--dir", default="/dev/shm", help="where the pool goes (default /dev/shm)")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--plot", help="draw time / DRAM time per kernel into this PNG")
    a = ap.parse_args()
    if a.rounds < 1 or a.scale <= 0:
        die("--rounds must be at least 1 and --scale above 0")
    kernels = [k for k in a.kernels.split(",") if k]
    if not kernels or any(k not in KERNELS for k in kernels):
        die(f"--kernels: choose from {','.join(KERNELS)}")
    exes = {b: os.path.join(os.path.abspath(a.build), "bench", "hpc", f"hpc-{b}")
            for b in ("dram", "cairn")}
    for b, exe in exes.items():
        if not os.access(exe, os.X_OK):
            die(f"{exe} is not built; run scripts/build.sh")
    pool = os.path.join(a.dir, f"cairn-hpc-{os.getpid()}.pool")
    result = {"command": "bench/hpc/run.py " + " ".join(sys.argv[1:]),
              "started": datetime.datetime.now(datetime.timezone.utc).isoformat(
                  timespec="seconds"),
              "rounds": a.rounds, "scale": a.scale, "kernels": []}
    result["source"] = _source()
    for kernel in kernels:
        n, reps = sizes(a.scale)[kernel]
        runs = {b: [] for b in BUILDS}
        for r in range(a.rounds):
            for b in BUILDS[r % 3:] + BUILDS[:r % 3]:
                runs[b].append(run_build(exes, b, kernel, n, reps, pool))
        sums = {x["checksum"] for b in BUILDS for x in runs[b]}
        if len(sums) != 1:
            die(f"{kernel}: the builds disagree on the result ({sorted(sums)}); a miscompile?")
        secs = {b: [x["seconds"] for x in runs[b]] for b in BUILDS}
        row = {"kernel": kernel, "n": n, "reps": reps, "rows": runs["dram"][0]["rows"]}
        for b in BUILDS:
            row[f"{b}_s"] = statistics.median(secs[b])
            for c in ("undo_records", "undo_bytes", "log_skipped", "flushes", "fences"):
                row[f"{b}_{c}"] = runs[b][0][c]
        for b in ("backup", "clobber"):
            m, lo, hi = spread([x / y for x, y in zip(secs[b], secs["dram"])])
            row.update({f"{b}_vs_dram": m, f"{b}_vs_dram_min": lo, f"{b}_vs_dram_max": hi})
        m, lo, hi = spread([x / y for x, y in zip(secs["backup"], secs["clobber"])])
        row.update(clobber_speedup=m, clobber_speedup_min=lo, clobber_speedup_max=hi,
                   clobber_faster=verdict(lo, hi, 1.0),
                   undo_bytes_per_row_backup=row["backup_undo_bytes"] / row["rows"],
                   undo_bytes_per_row_clobber=row["clobber_undo_bytes"] / row["rows"])
        result["kernels"].append(row)
        print(f"{kernel:7s} n={n} reps={reps}: dram {row['dram_s']:.3f}s "
              f"backup {row['backup_s']:.3f}s ({row['backup_vs_dram']:.2f}x, undo "
              f"{row['backup_undo_bytes']} B) clobber {row['clobber_s']:.3f}s "
              f"({row['clobber_vs_dram']:.2f}x, undo {row['clobber_undo_bytes']} B); "
              f"backup/clobber {m:.2f}x ({lo:.2f}-{hi:.2f})", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")
    if a.plot:
        plot(result["kernels"], a.plot)


if __name__ == "__main__":
    main()
