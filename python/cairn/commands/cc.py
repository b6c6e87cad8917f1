"""`cairn cc`: the compiler's helpers.

  cairn cc config   where cairn-cc finds clang, its plugin, runtime, write-sets
  cairn cc bench    the compiler benchmark (also `cairn bench compiler`);
                    what it runs and how it measures: BENCH_DOC below
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from cairn import paths
from cairn.argtypes import positive_int
from cairn.paired import dir_problem, quantile, run_slice, serve

BENCH_DOC = """\
The compiler benchmark (`cairn bench compiler`, also `cairn cc bench`):
legacy data structures (linked list, uthash, RB tree, splay tree; read-only
and mixed) built four ways and run side by side:
  clang       clang -O2, the unmodified volatile program (-DNO_CAIRN: without
              the program's pool and transaction code)
  clang-same  clang -O2 of the very source cairn-cc compiles (its PM-mode
              branches and transaction wrappers included, linked with
              libcairn), run on DRAM data: the same program as cc-dram, only
              the compiler differs
  cc-dram     cairn-cc -O2, nodes from malloc
  cc-pm       cairn-cc -O2, nodes in a pool on /dev/shm
Ratios are against clang; cc-dram also against clang-same.
plus dynamic checks and conversions per operation (seed 002's Table V, from
a --cairn-count build), what each log and region-test optimization removed
per operation on PM data (a count build per -fno-cairn-OPT), the pass's
static counters (--cairn-stats) and, with --icount, instructions per
operation.

How it measures: for each structure and workload, each round starts the
four builds as four live processes pinned to one CPU (--cpu), each builds
the same structure from the same keys, and then they take turns running
slices of --ops/--slices operations (the order rotates every slice); a
slice first runs a quarter as many untimed lookups (warm-up, the same keys
in every build), then times its operations. ns/op is the median over all
slices; a ratio is the median of the per-slice ratios of slices run moments
apart (in parentheses: their 25th-75th percentiles). This machine is shared
and its speed drifts by 2-4x over seconds; paired slices cancel the drift,
separate whole runs did not.
The native programs are compiler/bench/ds_bench.c and compiler/bench/icount.c.
"""

CLANG = "/usr/lib/llvm-19/bin/clang"
VARIANTS = ("clang", "clang-same", "cc-dram", "cc-pm")
STRUCTURES = ("list", "uthash", "rbtree", "splay")
WORKLOADS = ("read", "mixed")
COUNTS = ("region_tests", "log_calls", "pointer_load_checks", "relative_loads",
          "relative_stores")


def register(subparsers):
    p = subparsers.add_parser("cc", help="cairn-cc helpers: config, bench",
                              description="Helpers for cairn-cc, the compiler.")
    sub = p.add_subparsers(dest="cc_command", metavar="CMD")
    c = sub.add_parser("config", help="where cairn-cc finds its parts")
    c.set_defaults(func=run_config)
    add_bench_parser(sub, "bench")
    p.set_defaults(func=lambda args: p.print_help() or 2)


def add_bench_parser(sub, name):
    """The compiler benchmark's parser; also `cairn bench compiler`."""
    b = sub.add_parser(name, help="clang vs cairn-cc (DRAM, PM) on legacy data structures",
                       description=BENCH_DOC, formatter_class=_Raw)
    b.add_argument("--n", type=positive_int, default=100000, help="keys per structure (list: n/8)")
    b.add_argument("--ops", type=positive_int, default=1000000,
                   help="operations per build, structure, workload and round (list: ops/64)")
    b.add_argument("--rounds", type=positive_int, default=3,
                   help="rounds: fresh processes (and pool) for each")
    b.add_argument("--slices", type=positive_int, default=10,
                   help="alternating slices per round (each ops/slices operations)")
    b.add_argument("--cpu", default=str(max(os.cpu_count() or 1, 1) - 1),
                   help="CPU the builds share (taskset); 'none': do not pin")
    b.add_argument("--icount", action="store_true",
                   help="also count instructions per operation (single-stepping: slow)")
    b.add_argument("--icount-ops", type=positive_int, default=1000,
                   help="operations counted per cell with --icount (list: /64)")
    b.add_argument("--only", metavar="STRUCTURE[:WORKLOAD]",
                   help="measure one structure (and workload) only")
    b.add_argument("--quick", action="store_true", help="tiny sizes: proves it runs")
    b.add_argument("--json", metavar="FILE", help="write all results as JSON")
    b.add_argument("--dir", default="/dev/shm", help="where the pool goes")
    b.set_defaults(func=run_bench)
    return b


class _Raw(argparse.RawDescriptionHelpFormatter):
    pass


def _cairn_cc():
    return paths.tool("cairn-cc")


def run_config(args):
    return subprocess.call([str(_cairn_cc()), "--cairn-config"])


def _cc_config(cc):
    """cairn-cc's own paths (--cairn-config): include, libcairn, ..."""
    r = _build([cc, "--cairn-config"])
    return {k.strip(): v.strip() for k, v in
            (line.split(":", 1) for line in r.stdout.splitlines() if ":" in line)}


def _build(cmd):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"cairn: build failed: {' '.join(map(str, cmd))}\n{r.stderr}")
    return r


def _runs(exe, mode, pool, n, ops, *filters, env=None):
    e = dict(os.environ, CAIRN_PMEM_FORCE="1", **(env or {}))
    r = subprocess.run([str(exe), mode, str(pool), str(n), str(ops), *filters],
                       capture_output=True, text=True, env=e)
    if r.returncode:
        raise SystemExit(f"cairn: {exe} {mode} failed:\n{r.stderr}")
    return [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]


def _cells(args):
    cells = [(s, w) for s in STRUCTURES for w in WORKLOADS]
    if args.only:
        s, _, w = args.only.partition(":")
        cells = [(a, b) for a, b in cells if a == s and (not w or b == w)]
        if not cells:
            raise SystemExit(f"cairn: --only {args.only}: no such structure/workload")
    return cells


def run_bench(args):
    if args.quick:
        args.n, args.ops, args.rounds, args.slices = 2000, 20000, 1, 2
        args.icount_ops = min(args.icount_ops, 200)
    why = dir_problem(Path(args.dir))
    if why:
        print(f"cairn: --dir {args.dir}: {why}; give a directory you can write for the pool "
              "(default /dev/shm)", file=sys.stderr)
        return 2
    src = paths.SOURCE_ROOT / "compiler" / "bench" / "ds_bench.c"
    cc = _cairn_cc()
    cells = _cells(args)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        bins = {"clang": tmp / "clang", "clang-same": tmp / "clang-same", "cc": tmp / "cc",
                "count": tmp / "count", "icount": tmp / "icount"}
        _build([CLANG, "-O2", "-DNO_CAIRN", src, "-o", bins["clang"]])
        conf = _cc_config(cc)
        _build([CLANG, "-O2", "-I", conf["include"], src, conf["libcairn"],
                "-Wl,-rpath," + str(Path(conf["libcairn"]).resolve().parent),
                "-o", bins["clang-same"]])
        _build([cc, "-O2", src, "-o", bins["cc"]])
        _build([cc, "-O2", "--cairn-count", src, "-o", bins["count"]])
        stats = _static_stats(cc, src, tmp)
        pool = Path(args.dir) / f"cairn-cc-bench-{os.getpid()}.pool"
        runs = {"clang": (bins["clang"], "dram"), "clang-same": (bins["clang-same"], "dram"),
                "cc-dram": (bins["cc"], "dram"), "cc-pm": (bins["cc"], "pm")}
        times = {}
        icounts = []
        try:
            for s, w in cells:
                for rnd in range(args.rounds):
                    procs = {v: serve(*runs[v], pool, args, s, w) for v in VARIANTS}
                    try:
                        for k in range(args.slices):
                            r = k % len(VARIANTS)
                            order = VARIANTS[r:] + VARIANTS[:r]
                            for v in order:
                                times.setdefault((s, w, v), []).append(run_slice(procs[v]))
                    finally:
                        for p in procs.values():
                            p.stdin.close()
                            p.wait()
                    print(f"{s} {w}: round {rnd + 1}/{args.rounds} done", file=sys.stderr)
            counts = _dynamic_counts(bins["count"], pool, args, cells)
            ablations = _ablations(cc, src, tmp, pool, args, cells, counts)
            if args.icount:
                _build([CLANG, "-O2", paths.SOURCE_ROOT / "compiler" / "bench" / "icount.c",
                        "-o", bins["icount"]])
                icounts = _instruction_counts(bins["icount"], runs, pool, args, cells)
        finally:
            if pool.exists():
                pool.unlink()
    med = {k: statistics.median(v) for k, v in times.items()}
    ratios = {}
    for (s, w, v), xs in times.items():
        if v != "clang":
            base = times[(s, w, "clang")]
            ratios[(s, w, v)] = [x / b for x, b in zip(xs, base) if b > 0]
        if v == "cc-dram":
            base = times[(s, w, "clang-same")]
            ratios[(s, w, "cc-dram/same")] = [x / b for x, b in zip(xs, base) if b > 0]
    _print_tables(med, ratios, counts, stats, icounts, args, ablations)
    if args.json:
        Path(args.json).write_text(json.dumps({
            "command": "cairn cc bench " + " ".join(
                f"--{k.replace('_', '-')}={getattr(args, k)}"
                for k in ("n", "ops", "rounds", "slices", "cpu")),
            "method": "paired slices: the four builds alive at once on one CPU, taking "
                      "turns; ns/op = median of slices; ratio = median of per-slice ratios "
                      "(against clang; cc-dram also against clang-same)",
            "ns_per_op": [{"structure": s, "workload": w, "variant": v, "median": m,
                           "samples": times[(s, w, v)],
                           **({"paired_ratio_median": statistics.median(ratios[(s, w, v)]),
                               "paired_ratio_p25": quantile(ratios[(s, w, v)], 0.25),
                               "paired_ratio_p75": quantile(ratios[(s, w, v)], 0.75)}
                              if v != "clang" else {}),
                           **({"paired_ratio_vs_same_median":
                               statistics.median(ratios[(s, w, "cc-dram/same")]),
                               "paired_ratio_vs_same_p25":
                               quantile(ratios[(s, w, "cc-dram/same")], 0.25),
                               "paired_ratio_vs_same_p75":
                               quantile(ratios[(s, w, "cc-dram/same")], 0.75)}
                              if v == "cc-dram" else {})}
                          for (s, w, v), m in med.items()],
            "per_op_counts": counts, "instructions_per_op": icounts,
            "removed_per_op_pm": ablations,
            "static_stats": stats}, indent=1))
    return 0


def _instruction_counts(icount, runs, pool, args, cells):
    """Instructions per operation, single-stepped between the program's marks."""
    out = []
    for s, w in cells:
        row = {"structure": s, "workload": w}
        for v in VARIANTS:
            exe, mode = runs[v]
            r = subprocess.run([str(icount), str(exe), mode, str(pool), str(args.n),
                                str(args.icount_ops), s, w], capture_output=True, text=True,
                               env=dict(os.environ, CAIRN_PMEM_FORCE="1",
                                        CAIRN_BENCH_STEPMARK="1"))
            m = re.search(r"instructions (\d+)", r.stderr)
            recs = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
            if r.returncode or not m or not recs:
                raise SystemExit(f"cairn: icount {exe} {mode} {s} {w} failed:\n{r.stderr}")
            row[v] = int(m.group(1)) / max(recs[0]["ops"], 1)
        out.append(row)
        print(f"{s} {w}: instructions counted", file=sys.stderr)
    return out


def _dynamic_counts(exe, pool, args, cells, modes=("dram", "pm")):
    """Checks and conversions per operation: a run with OPS=0 subtracted
    from a run with OPS=k, per structure and workload."""
    out = []
    ops = max(args.ops // 10, 1000)
    for mode in modes:
        for s, w in cells:
            got = []
            for k in (0, ops):
                with tempfile.NamedTemporaryFile("r", suffix=".json") as f:
                    recs = _runs(exe, mode, pool, args.n, k, s, w,
                                 env={"CAIRN_CC_COUNTS": f.name})
                    got.append(json.loads(f.read().splitlines()[-1]))
            real_ops = recs[0]["ops"] if recs else ops
            out.append({"data": mode, "structure": s, "workload": w,
                        **{c: (got[1][c] - got[0][c]) / max(real_ops, 1) for c in COUNTS}})
    return out


# The optimizations that remove logs or region tests, and the counter each
# one lowers: measured by turning each off in its own --cairn-count build.
ABLATIONS = (("merge-logs", "log_calls"), ("elim-dominated-logs", "log_calls"),
             ("hoist-loop-logs", "log_calls"), ("skip-volatile", "region_tests"),
             ("skip-check-pm", "region_tests"))


def _ablations(cc, src, tmp, pool, args, cells, base):
    """Per operation on PM data: the counter with every optimization on
    (base) and with one turned off, for each optimization of ABLATIONS."""
    have = {(r["data"], r["structure"], r["workload"]): r for r in base}
    rows = []
    for opt, counter in ABLATIONS:
        exe = tmp / f"count-no-{opt}"
        _build([cc, "-O2", "--cairn-count", f"-fno-cairn-{opt}", src, "-o", exe])
        for r in _dynamic_counts(exe, pool, args, cells, modes=("pm",)):
            on = have[("pm", r["structure"], r["workload"])][counter]
            rows.append({"optimization": opt, "counter": counter,
                         "structure": r["structure"], "workload": r["workload"],
                         "with": on, "without": r[counter]})
        print(f"ablation -fno-cairn-{opt} counted", file=sys.stderr)
    return rows


def _static_stats(cc, src, tmp):
    r = _build([cc, "-O2", "-c", src, "-o", tmp / "stats.o", "--cairn-stats"])
    stats = {}
    for line in r.stderr.splitlines():
        m = re.match(r"\s*(\d+)\s+cairn\s+-\s+(.*)", line)
        if m:
            stats[m.group(2).strip()] = int(m.group(1))
    return stats


def _print_tables(med, ratios, counts, stats, icounts, args, ablations=()):
    def ratio(key):
        xs = ratios[key]
        return (f"{statistics.median(xs):.2f}x ({quantile(xs, 0.25):.2f}-"
                f"{quantile(xs, 0.75):.2f})")
    print(f"\n### cairn-cc on legacy data structures (n={args.n}, ops={args.ops} x "
          f"{args.rounds} rounds, {args.slices} paired slices a round)\n")
    print("| structure | workload | clang ns/op | clang same source | cairn-cc DRAM "
          "| ratio (p25-p75) | vs same source | cairn-cc PM | ratio (p25-p75) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for s in STRUCTURES:
        for w in WORKLOADS:
            c, cs, d, p = (med.get((s, w, v)) for v in VARIANTS)
            if c is None:
                continue
            print(f"| {s} | {w} | {c:.1f} | {cs:.1f} | {d:.1f} | {ratio((s, w, 'cc-dram'))} "
                  f"| {ratio((s, w, 'cc-dram/same'))} | {p:.1f} | {ratio((s, w, 'cc-pm'))} |")
    if icounts:
        print(f"\n### Instructions per operation (single-stepped, {args.icount_ops} "
              "operations, list /64)\n")
        print("| structure | workload | clang | clang same source | cairn-cc DRAM | ratio "
              "| vs same source | cairn-cc PM | ratio |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
        for r in icounts:
            c, cs, d, p = (r[v] for v in VARIANTS)
            print(f"| {r['structure']} | {r['workload']} | {c:.1f} | {cs:.1f} | {d:.1f} "
                  f"| {d / c:.2f}x | {d / cs:.2f}x | {p:.1f} | {p / c:.2f}x |")
    print("\n### Dynamic checks and conversions per operation (cairn-cc --cairn-count)\n")
    print("| data | structure | workload | " + " | ".join(COUNTS) + " |")
    print("|---|---|---|" + "---:|" * len(COUNTS))
    for row in counts:
        print(f"| {row['data']} | {row['structure']} | {row['workload']} | " +
              " | ".join(f"{row[c]:.2f}" for c in COUNTS) + " |")
    if ablations:
        print("\n### What each optimization removed, per operation on PM data "
              "(its --cairn-count build with -fno-cairn-OPT)\n")
        print("| optimization | counter | structure | workload | with it | without it "
              "| removed |")
        print("|---|---|---|---|---:|---:|---:|")
        for r in ablations:
            print(f"| {r['optimization']} | {r['counter']} | {r['structure']} | "
                  f"{r['workload']} | {r['with']:.2f} | {r['without']:.2f} | "
                  f"{r['without'] - r['with']:.2f} |")
    print("\n### What the pass did to ds_bench.c (static, cairn-cc --cairn-stats)\n")
    print("| count | counter |")
    print("|---:|---|")
    for k, v in sorted(stats.items(), key=lambda kv: kv[0]):
        print(f"| {v} | {k} |")
