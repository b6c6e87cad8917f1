"""`cairn cc`: the compiler's helpers.

  cairn cc config   where cairn-cc finds clang, its plugin, runtime, write-sets
  cairn cc bench    legacy data structures (linked list, uthash, RB tree,
                    splay tree; read-only and mixed) built three ways and run
                    side by side in one run, alternating every round:
                      clang     clang -O2, the unmodified volatile program
                      cc-dram   cairn-cc -O2, nodes from malloc
                      cc-pm     cairn-cc -O2, nodes in a pool on /dev/shm
                    plus dynamic checks and conversions per operation (seed
                    002's Table V, from a --cairn-count build) and the pass's
                    static counters (--cairn-stats).
The native program is compiler/bench/ds_bench.c.
"""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from cairn import paths

CLANG = "/usr/lib/llvm-19/bin/clang"
VARIANTS = ("clang", "cc-dram", "cc-pm")
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
                       description=__doc__, formatter_class=_Raw)
    b.add_argument("--n", type=int, default=100000, help="keys per structure (list: n/8)")
    b.add_argument("--ops", type=int, default=1000000, help="operations (list: ops/64)")
    b.add_argument("--rounds", type=int, default=3, help="alternating rounds (median)")
    b.add_argument("--quick", action="store_true", help="tiny sizes: proves it runs")
    b.add_argument("--json", metavar="FILE", help="write all results as JSON")
    b.add_argument("--dir", default="/dev/shm", help="where the pool goes")
    b.set_defaults(func=run_bench)
    return b


class _Raw(__import__("argparse").RawDescriptionHelpFormatter):
    pass


def _cairn_cc():
    p = paths.build_dir() / "compiler" / "cairn-cc"
    if not p.exists():
        raise SystemExit(f"cairn: cairn-cc is not built in {paths.build_dir()} "
                         f"(ninja -C {paths.build_dir()} cairn-cc)")
    return p


def run_config(args):
    return subprocess.call([str(_cairn_cc()), "--cairn-config"])


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


def run_bench(args):
    if args.quick:
        args.n, args.ops, args.rounds = 2000, 20000, 1
    src = paths.SOURCE_ROOT / "compiler" / "bench" / "ds_bench.c"
    cc = _cairn_cc()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        bins = {"clang": tmp / "clang", "cc": tmp / "cc", "count": tmp / "count"}
        _build([CLANG, "-O2", "-DNO_CAIRN", src, "-o", bins["clang"]])
        _build([cc, "-O2", src, "-o", bins["cc"]])
        _build([cc, "-O2", "--cairn-count", src, "-o", bins["count"]])
        stats = _static_stats(cc, src, tmp)
        pool = Path(args.dir) / f"cairn-cc-bench-{os.getpid()}.pool"
        runs = {"clang": (bins["clang"], "dram"), "cc-dram": (bins["cc"], "dram"),
                "cc-pm": (bins["cc"], "pm")}
        times = {}
        try:
            for rnd in range(args.rounds):
                order = VARIANTS if rnd % 2 == 0 else VARIANTS[::-1]
                for v in order:
                    exe, mode = runs[v]
                    for rec in _runs(exe, mode, pool, args.n, args.ops):
                        key = (rec["structure"], rec["workload"], v)
                        times.setdefault(key, []).append(rec["ns_per_op"])
                    print(f"round {rnd + 1}/{args.rounds} {v} done", file=sys.stderr)
            counts = _dynamic_counts(bins["count"], pool, args)
        finally:
            if pool.exists():
                pool.unlink()
    med = {k: statistics.median(v) for k, v in times.items()}
    _print_tables(med, counts, stats, args)
    if args.json:
        Path(args.json).write_text(json.dumps({
            "command": "cairn cc bench " + " ".join(
                f"--{k}={getattr(args, k)}" for k in ("n", "ops", "rounds")),
            "ns_per_op": [{"structure": s, "workload": w, "variant": v, "median": m,
                           "samples": times[(s, w, v)]} for (s, w, v), m in med.items()],
            "per_op_counts": counts, "static_stats": stats}, indent=1))
    return 0


def _dynamic_counts(exe, pool, args):
    """Checks and conversions per operation: a run with OPS=0 subtracted
    from a run with OPS=k, per structure and workload."""
    out = []
    ops = max(args.ops // 10, 1000)
    for mode in ("dram", "pm"):
        for s in STRUCTURES:
            for w in WORKLOADS:
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


def _static_stats(cc, src, tmp):
    r = _build([cc, "-O2", "-c", src, "-o", tmp / "stats.o", "--cairn-stats"])
    stats = {}
    for line in r.stderr.splitlines():
        m = re.match(r"\s*(\d+)\s+cairn\s+-\s+(.*)", line)
        if m:
            stats[m.group(2).strip()] = int(m.group(1))
    return stats


def _print_tables(med, counts, stats, args):
    print(f"\n### cairn-cc on legacy data structures (n={args.n}, ops={args.ops}, "
          f"median of {args.rounds})\n")
    print("| structure | workload | clang ns/op | cairn-cc DRAM | ratio | cairn-cc PM | ratio |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for s in STRUCTURES:
        for w in WORKLOADS:
            c, d, p = (med.get((s, w, v)) for v in VARIANTS)
            if c is None:
                continue
            print(f"| {s} | {w} | {c:.1f} | {d:.1f} | {d / c:.2f}x | {p:.1f} | {p / c:.2f}x |")
    print("\n### Dynamic checks and conversions per operation (cairn-cc --cairn-count)\n")
    print("| data | structure | workload | " + " | ".join(COUNTS) + " |")
    print("|---|---|---|" + "---:|" * len(COUNTS))
    for row in counts:
        print(f"| {row['data']} | {row['structure']} | {row['workload']} | " +
              " | ".join(f"{row[c]:.2f}" for c in COUNTS) + " |")
    print("\n### What the pass did to ds_bench.c (static, cairn-cc --cairn-stats)\n")
    print("| count | counter |")
    print("|---:|---|")
    for k, v in sorted(stats.items(), key=lambda kv: kv[0]):
        print(f"| {v} | {k} |")
