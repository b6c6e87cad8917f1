"""`cairn bench ycsb`: YCSB over legacy data structures, three builds each.

Every structure in bench/ycsb/ is an ordinary volatile C file (NAME.c) with
two ports: NAME_cairn.patch (applied to NAME.c: the pool and its root
opened in one call, the file's malloc/free in the pool, each updating
function one transaction; compiled by cairn-cc) and NAME_pmemobj.c (libpmemobj
written by hand: TOID, TX_ADD of what changes, pmemobj_tx_alloc). The
driver bench/ycsb/ycsb.c loads the records and runs the workloads in one
process per build; this module runs the builds of a cell one after the
other in every round, rotating their order from round to round, so that
paired runs are moments apart on this shared machine, and reports:

  - throughput per workload, per CPU-second its threads ran (the ratios
    use it: on a machine shared with other jobs, wall-clock throughput
    mostly measures the scheduler) and per wall-clock second, and p50/p99
    latency (all medians over rounds);
  - per round, the ratio cairn/libpmemobj and volatile/cairn of throughput;
    their median and spread (min-max over rounds); a ratio whose rounds do
    not all fall on the same side of 1.0 is "not shown";
  - the lines each port changes against the original (comments, blank
    lines and indentation ignored; a changed line counts once);
  - PNG plots in the style of Breeze Fig. 10 (throughput and latency per
    workload, one bar per build).

Pools live on --dir (default /dev/shm) with CAIRN_PMEM_FORCE=1 and
PMEM_IS_PMEM_FORCE=1 (user-space flushes on both sides).
"""
import argparse
import difflib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cairn import paths
from cairn.argtypes import positive_int

try:
    from tqdm import tqdm
except ImportError:  # a progress bar is a nicety, not a dependency of results
    tqdm = None

STRUCTURES = ("btree", "cuckoo", "chash", "critbit", "rbtree", "avl", "splay", "scapegoat",
              "skiplist", "list")
ORDERED = {"btree", "critbit", "rbtree", "avl", "splay", "scapegoat", "skiplist", "list"}
# every operation on a linked list walks it: records and operations divided
SIZE_DIVISOR = {"list": 16}
BUILDS = ("volatile", "cairn", "pmemobj")
WORKLOADS = ("A", "B", "C", "F", "D", "E")   # run in this order on the loaded data
DISTS = ("default", "uniform", "zipfian", "latest")
FORCE_ENV = {"CAIRN_PMEM_FORCE": "1", "PMEM_IS_PMEM_FORCE": "1"}
# issue 19's goals, shown next to the measured ratios, never asserted
GOAL_WRITE = {1024: 2.0, 8: 2.5}   # cairn/pmemobj on A and F
GOAL_READ = 1.1                    # volatile/cairn on C
GOAL_LINES = 10

DEFAULT = dict(records=20000, ops=20000, rounds=3)
FULL = dict(records=10_000_000, ops=10_000_000, rounds=3)   # Breeze: 10 M 1 KB records
QUICK = dict(records=2000, ops=2000, rounds=1)


def add_parser(sub):
    """`cairn bench ycsb`, added to `cairn bench` by commands/bench.py."""
    p = sub.add_parser(
        "ycsb", help="YCSB on legacy data structures: volatile vs cairn-cc vs libpmemobj",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--structures", type=_subset("structure", STRUCTURES),
                   default=list(STRUCTURES), metavar="S[,S...]",
                   help=f"from {', '.join(STRUCTURES)} (default all)")
    p.add_argument("--workloads", type=_subset("workload", WORKLOADS), default=list(WORKLOADS),
                   metavar="W[,W...]", help="from A,B,C,D,E,F (default all; E on ordered "
                   "structures only)")
    p.add_argument("--value-sizes", type=_ints, default=[8, 1024],
                   metavar="B[,B...]", help="value bytes (default 8,1024)")
    p.add_argument("--threads", type=_ints, default=[1, 2], metavar="T[,T...]",
                   help="threads (default 1,2; a lock around the structure when more than 1)")
    p.add_argument("--dists", type=_subset("distribution", DISTS), default=["default"],
                   metavar="D[,D...]", help="key choosers: default (each workload's own: "
                   "zipfian, D latest), uniform, zipfian, latest")
    p.add_argument("--builds", type=_subset("build", BUILDS), default=list(BUILDS),
                   metavar="B[,B...]", help="from volatile,cairn,pmemobj (default all)")
    p.add_argument("--records", type=positive_int, help=f"records loaded (default "
                   f"{DEFAULT['records']}; --full {FULL['records']})")
    p.add_argument("--ops", type=positive_int, help=f"operations per workload (default "
                   f"{DEFAULT['ops']}; --full {FULL['ops']})")
    p.add_argument("--scale", type=float, default=1.0,
                   help="multiply records and operations by this (default 1)")
    p.add_argument("--rounds", type=positive_int, help="paired rounds (default 3)")
    p.add_argument("--full", action="store_true",
                   help="the papers' sizes: 10 M records, 10 M operations per workload")
    p.add_argument("--quick", action="store_true", help="tiny sizes, one round: proves it runs")
    p.add_argument("--seed", type=int, default=1, help="the driver's seed (default 1)")
    p.add_argument("--json", metavar="FILE", help="write every measurement as JSON")
    p.add_argument("--plots", metavar="DIR", help="write PNG plots (Breeze Fig. 10 style) here")
    p.add_argument("--dir", default="/dev/shm", help="where the pools go (default /dev/shm)")
    p.set_defaults(func=run)
    return p


def _subset(what, allowed):
    def parse(text):
        items = [t.strip() for t in text.split(",") if t.strip()]
        bad = [t for t in items if t not in allowed]
        if bad or not items:
            raise argparse.ArgumentTypeError(
                f"unknown {what} {', '.join(map(repr, bad)) or repr(text)} "
                f"(choose from {', '.join(allowed)})")
        return [a for a in allowed if a in items]
    return parse


def _ints(text):
    """argparse type: a comma list of whole numbers, each at least 1."""
    return [positive_int(t) for t in text.split(",")]


def binary(structure, build):
    return paths.build_dir() / "bench" / "ycsb" / f"ycsb-{structure}-{build}"


# ---- changed lines ----------------------------------------------------------

def _code_lines(text):
    """The source's lines of code: comments and blank lines dropped,
    indentation and inner runs of blanks ignored."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


def changed_lines(original, port):
    """Lines a port changes against its original: a replaced block counts
    the longer of its two sides, an added or deleted block its length."""
    a, b = _code_lines(original), _code_lines(port)
    n = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            n += max(i2 - i1, j2 - j1)
    return n


def port_source(structure, port, directory="ycsb"):
    """The text of a port: NAME_pmemobj.c, or NAME.c with NAME_cairn.patch
    (in bench/DIRECTORY)."""
    src = paths.SOURCE_ROOT / "bench" / directory
    if port != "cairn":
        return (src / f"{structure}_{port}.c").read_text()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / f"{structure}_cairn.c"
        r = subprocess.run(["patch", "-s", "-o", str(out), str(src / f"{structure}.c"),
                            str(src / f"{structure}_cairn.patch")],
                           capture_output=True, text=True)
        if r.returncode:
            raise SystemExit(f"cairn: {structure}_cairn.patch does not apply to {structure}.c "
                             f"(remake it with diff -u): {(r.stdout + r.stderr).strip()}")
        return out.read_text()


def line_counts(structures=STRUCTURES):
    src = paths.SOURCE_ROOT / "bench" / "ycsb"
    out = []
    for s in structures:
        orig = (src / f"{s}.c").read_text()
        row = {"structure": s, "original_lines": len(_code_lines(orig))}
        for port in ("cairn", "pmemobj"):
            row[port] = changed_lines(orig, port_source(s, port))
        out.append(row)
    return out


# ---- running ------------------------------------------------------------------

def run_driver(structure, build, pool, records, ops, workloads, value_size, threads, dist,
               seed=1, extra=()):
    """One process of one build: load, then the workloads. Returns its rows."""
    exe = binary(structure, build)
    if not exe.exists():
        raise SystemExit(f"cairn: {exe.name} is not built in {exe.parent}; "
                         f"run scripts/build.sh (or set CAIRN_BUILD)")
    with tempfile.NamedTemporaryFile("r", suffix=".json") as out:
        cmd = [str(exe), "--pool", str(pool), "--records", str(records), "--ops", str(ops),
               "--workloads", ",".join(["LOAD", *workloads]) if workloads else "",
               "--value-size", str(value_size), "--threads", str(threads),
               "--dist", dist, "--seed", str(seed), "--json", out.name, *extra]
        if not workloads:
            del cmd[cmd.index("--workloads"):cmd.index("--workloads") + 2]
        r = subprocess.run(cmd, capture_output=True, text=True,
                           env=dict(os.environ, **FORCE_ENV))
        if r.returncode:
            raise SystemExit(f"cairn: ycsb-{structure}-{build} failed (exit {r.returncode}):\n"
                             f"  {' '.join(cmd)}\n{r.stderr.strip()}")
        rows = json.loads(out.read())
    m = re.search(r"ycsb: keys (\d+)", r.stderr)
    for row in rows:
        row["keys"] = int(m.group(1)) if m else None
    return rows


def _source():
    """The commit the builds came from, and whether bench/ or the runtime had
    uncommitted changes."""
    def git(*a):
        r = subprocess.run(["git", "-C", str(paths.SOURCE_ROOT), *a], capture_output=True,
                           text=True)
        return r.stdout.strip() if r.returncode == 0 else ""
    commit = git("rev-parse", "--short", "HEAD")
    if not commit:
        return {}
    return {"commit": commit,
            "runtime_dirty": bool(git("status", "--porcelain", "--", "bench", "runtime",
                                      "compiler"))}


def _cells(args):
    for s in args.structures:
        for v in args.value_sizes:
            for t in args.threads:
                for d in args.dists:
                    yield s, v, t, d


def run(args):
    sizes = dict(QUICK if args.quick else FULL if args.full else DEFAULT)
    for k in ("records", "ops", "rounds"):
        if getattr(args, k):
            sizes[k] = getattr(args, k)
    records = max(int(sizes["records"] * args.scale), 1)
    ops = max(int(sizes["ops"] * args.scale), 1)
    rounds = sizes["rounds"]
    where = Path(args.dir)
    if not where.is_dir() or not os.access(where, os.W_OK | os.X_OK):
        print(f"cairn: --dir {args.dir}: not a directory this user can write; give one "
              "for the pools (default /dev/shm)", file=sys.stderr)
        return 2
    for s in args.structures:
        for b in args.builds:
            if not binary(s, b).exists():
                print(f"cairn: {binary(s, b)} is not built; run scripts/build.sh "
                      "(libpmemobj-dev and clang-19 are needed for all three builds)",
                      file=sys.stderr)
                return 2
    cells = list(_cells(args))
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    total = len(cells) * rounds * len(args.builds)
    bar = tqdm(total=total, unit="run", file=sys.stderr, disable=None) if tqdm else None
    pool = where / f"cairn-ycsb-{os.getpid()}.pool"
    rows = []
    try:
        for ci, (s, v, t, d) in enumerate(cells):
            wl = [w for w in args.workloads if w != "E" or s in ORDERED]
            div = SIZE_DIVISOR.get(s, 1)
            for rnd in range(rounds):
                k = (rnd + ci) % len(args.builds)
                for b in args.builds[k:] + args.builds[:k]:
                    if bar:
                        bar.set_description(f"{s} {v}B {t}t {d} r{rnd + 1} {b}")
                    for row in run_driver(s, b, pool, max(records // div, 1),
                                          max(ops // div, 1), wl, v, t, d, args.seed):
                        row["round"] = rnd
                        row["key_dist"], row["dist"] = row["dist"], d   # chosen, asked
                        rows.append(row)
                    if pool.exists():
                        pool.unlink()
                    if bar:
                        bar.update()
    finally:
        if bar:
            bar.close()
        if pool.exists():
            pool.unlink()
    summary = summarize(rows, args.builds)
    lines = line_counts(args.structures)
    command = "cairn bench ycsb " + " ".join(
        [f"--structures {','.join(args.structures)}", f"--workloads {','.join(args.workloads)}",
         f"--value-sizes {','.join(map(str, args.value_sizes))}",
         f"--threads {','.join(map(str, args.threads))}", f"--dists {','.join(args.dists)}",
         f"--builds {','.join(args.builds)}", f"--records {records}", f"--ops {ops}",
         f"--rounds {rounds}"])
    print(render(summary, lines, command, records, ops, rounds))
    if args.json:
        Path(args.json).write_text(json.dumps({
            "command": command, "started": started, "source": _source(),
            "method": "per cell, each round runs every build once (load, then the workloads "
                      "in order), builds in rotating order; throughput = median over rounds "
                      "(ops_per_cpu_s: per CPU-second the driver's threads ran; ops_per_s: "
                      "per wall-clock second); ratios on ops_per_cpu_s (_wall: on ops_per_s); "
                      "a ratio is the median of the per-round ratios, spread = min-max over "
                      "rounds; 'not shown' when the rounds do not all fall on one side of 1",
            "records": records, "ops": ops, "rounds": rounds,
            "line_counts": lines, "summary": summary, "runs": rows}, indent=1))
    if args.plots:
        for f in plot(summary, Path(args.plots)):
            print(f"plot: {f}", file=sys.stderr)
    return 0


# ---- summarizing ----------------------------------------------------------------

def _ratio(xs):
    """Median of per-round ratios, their spread and the verdict against 1.0."""
    xs = [x for x in xs if x > 0]
    if not xs:
        return None
    shown = len(xs) >= 2 and (min(xs) > 1 or max(xs) < 1)
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs),
            "rounds": len(xs), "shown": shown}


def summarize(rows, builds):
    """One entry per (structure, value size, threads, dist, phase)."""
    groups = {}
    for r in rows:
        if r["phase"] == "CHECK":
            continue
        key = (r["structure"], r["value_size"], r["threads"], r["dist"], r["phase"])
        groups.setdefault(key, {}).setdefault(r["build"], {})[r["round"]] = r
    out = []
    for (s, v, t, d, ph), per_build in groups.items():
        e = {"structure": s, "value_size": v, "threads": t, "dist": d, "phase": ph}
        for b in builds:
            runs = per_build.get(b, {})
            if runs:
                e[b] = {k: statistics.median(x[k] for x in runs.values())
                        for k in ("ops_per_s", "ops_per_cpu_s", "p50_ns", "p99_ns")}
                e[b]["rounds"] = len(runs)

        def per_round(num, den, metric):
            a, b = per_build.get(num, {}), per_build.get(den, {})
            return [a[k][metric] / b[k][metric] for k in a if k in b and b[k][metric] > 0]
        for num, den in (("cairn", "pmemobj"), ("volatile", "cairn")):
            if num in per_build and den in per_build:
                e[f"{num}_vs_{den}"] = _ratio(per_round(num, den, "ops_per_cpu_s"))
                e[f"{num}_vs_{den}_wall"] = _ratio(per_round(num, den, "ops_per_s"))
        out.append(e)
    order = {p: i for i, p in enumerate(("LOAD",) + WORKLOADS)}
    out.sort(key=lambda e: (STRUCTURES.index(e["structure"]), e["value_size"], e["threads"],
                            e["dist"], order.get(e["phase"], 99)))
    return out


def _goal_verdict(r, goal, higher_is_better=True):
    """'met' when every round meets the goal, 'not met' when none does,
    else 'not shown'."""
    lo, hi = (r["min"], r["max"]) if higher_is_better else (-r["max"], -r["min"])
    g = goal if higher_is_better else -goal
    return "met" if lo >= g else "not met" if hi < g else "not shown"


def _fmt_ratio(r, goal=None, higher_is_better=True):
    if not r:
        return "-"
    txt = f"{r['median']:.2f}x ({r['min']:.2f}-{r['max']:.2f})"
    if not r["shown"]:
        txt += " not shown"
    if goal is not None:
        txt += f"; goal {_goal_verdict(r, goal, higher_is_better)}"
    return txt


def goals_table(summary):
    """Issue 19's goals per structure and thread count: cairn / pmemobj on
    A and F (>= 2x with 1 KiB values, >= 2.5x with 8 B), volatile / cairn on
    C (<= 1.1x). Each cell: median ratio and its verdict over the rounds."""
    mark = {"met": "met", "not met": "NOT met", "not shown": "not shown"}
    cells, rows = {}, []
    for e in summary:
        key = (e["structure"], e["threads"], e["dist"])
        if key not in cells:
            cells[key] = {}
            rows.append(key)
        v, ph = e["value_size"], e["phase"]
        if ph in ("A", "F") and v in GOAL_WRITE and e.get("cairn_vs_pmemobj"):
            r = e["cairn_vs_pmemobj"]
            cells[key][(ph, v)] = f"{r['median']:.2f}x {mark[_goal_verdict(r, GOAL_WRITE[v])]}"
        if ph == "C" and e.get("volatile_vs_cairn"):
            r = e["volatile_vs_cairn"]
            cells[key][(ph, v)] = f"{r['median']:.2f}x {mark[_goal_verdict(r, GOAL_READ, False)]}"
    cols = [("A", 1024), ("F", 1024), ("A", 8), ("F", 8), ("C", 1024), ("C", 8)]
    out = ["Goals (issue 19): cairn / pmemobj throughput on A and F (>= 2x with 1 KiB "
           "values, >= 2.5x with 8 B); volatile / cairn on C (<= 1.1x). 'met' when every "
           "round meets the goal, 'NOT met' when none does, else 'not shown'.", "",
           "| structure | threads | dist | A 1 KiB | F 1 KiB | A 8 B | F 8 B "
           "| C 1 KiB vs volatile | C 8 B vs volatile |",
           "|---|---:|---|---|---|---|---|---|---|"]
    for key in rows:
        out.append(f"| {key[0]} | {key[1]} | {key[2]} | " +
                   " | ".join(cells[key].get(c, "-") for c in cols) + " |")
    return "\n".join(out)


def _kops(e, b):
    return f"{e[b]['ops_per_cpu_s'] / 1000:.1f}" if b in e else "-"


def render(summary, lines, command, records, ops, rounds):
    out = [f"### YCSB on legacy data structures ({records} records, {ops} operations per "
           f"workload, {rounds} paired rounds)", "", f"`{command}`", "",
           "Throughput in thousands of operations per CPU-second (the CPU time the "
           "driver's threads ran; median over rounds); ratios are medians of per-round "
           "ratios (min-max over rounds); the last column is cairn / pmemobj in "
           "wall-clock throughput, which this shared machine's load makes noisier.", "",
           "| structure | value | threads | dist | workload | volatile | cairn | pmemobj "
           "| cairn / pmemobj | volatile / cairn | cairn / pmemobj (wall) |",
           "|---|---:|---:|---|---|---:|---:|---:|---|---|---|"]
    for e in summary:
        goal_w = GOAL_WRITE.get(e["value_size"]) if e["phase"] in ("A", "F") else None
        goal_r = GOAL_READ if e["phase"] == "C" else None
        vc_txt = _fmt_ratio(e.get("volatile_vs_cairn"), goal_r, higher_is_better=False)
        out.append(f"| {e['structure']} | {e['value_size']} B | {e['threads']} | {e['dist']} "
                   f"| {e['phase']} | {_kops(e, 'volatile')} | {_kops(e, 'cairn')} "
                   f"| {_kops(e, 'pmemobj')} | {_fmt_ratio(e.get('cairn_vs_pmemobj'), goal_w)} "
                   f"| {vc_txt} | {_fmt_ratio(e.get('cairn_vs_pmemobj_wall'))} |")
    out += ["", goals_table(summary), "",
            "Latency per operation, p50 / p99 in microseconds (median over rounds)", "",
            "| structure | value | threads | dist | workload | volatile | cairn | pmemobj |",
            "|---|---:|---:|---|---|---:|---:|---:|"]
    for e in summary:
        cols = [f"{e[b]['p50_ns'] / 1000:.2f} / {e[b]['p99_ns'] / 1000:.2f}" if b in e else "-"
                for b in BUILDS]
        out.append(f"| {e['structure']} | {e['value_size']} B | {e['threads']} | {e['dist']} "
                   f"| {e['phase']} | " + " | ".join(cols) + " |")
    out += ["", f"Lines changed against the volatile original (code lines; comments, blank "
            f"lines and indentation ignored; goal for cairn <= {GOAL_LINES})", "",
            "| structure | original lines | cairn port | libpmemobj port |",
            "|---|---:|---:|---:|"]
    for r in lines:
        out.append(f"| {r['structure']} | {r['original_lines']} | {r['cairn']} "
                   f"| {r['pmemobj']} |")
    if any(s in SIZE_DIVISOR for s in {e["structure"] for e in summary}):
        out += ["", "The linked list runs " + ", ".join(
            f"{s} with records and operations divided by {d}" for s, d in SIZE_DIVISOR.items())
            + " (each of its operations walks the list)."]
    return "\n".join(out)


# ---- plots ------------------------------------------------------------------------

def plot(summary, outdir):
    """Breeze Fig. 10 style: per structure, value size, threads and dist, a
    figure with throughput and p50 latency per workload, one bar per build."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    outdir.mkdir(parents=True, exist_ok=True)
    figs = {}
    for e in summary:
        if e["phase"] == "LOAD":
            continue
        figs.setdefault((e["structure"], e["value_size"], e["threads"], e["dist"]), []).append(e)
    written = []
    colors = {"volatile": "#999999", "cairn": "#1f77b4", "pmemobj": "#ff7f0e"}
    for (s, v, t, d), es in figs.items():
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.2))
        builds = [b for b in BUILDS if any(b in e for e in es)]
        width = 0.8 / max(len(builds), 1)
        for i, b in enumerate(builds):
            xs = [k + (i - (len(builds) - 1) / 2) * width for k in range(len(es))]
            ax1.bar(xs, [e[b]["ops_per_cpu_s"] / 1000 if b in e else 0 for e in es], width,
                    label=b, color=colors[b])
            ax2.bar(xs, [e[b]["p50_ns"] / 1000 if b in e else 0 for e in es], width,
                    label=b, color=colors[b])
        for ax, title in ((ax1, "throughput (Kops per CPU-second)"),
                          (ax2, "p50 latency (us)")):
            ax.set_xticks(range(len(es)))
            ax.set_xticklabels([f"YCSB-{e['phase']}" for e in es])
            ax.set_title(title, fontsize=10)
            ax.grid(axis="y", alpha=0.3)
        ax1.legend(fontsize=8)
        fig.suptitle(f"{s}, {v} B values, {t} thread{'s' if t > 1 else ''}, {d} keys",
                     fontsize=10)
        fig.tight_layout()
        f = outdir / f"ycsb-{s}-{v}B-{t}t-{d}.png"
        fig.savefig(f, dpi=100)
        plt.close(fig)
        written.append(f)
    return written


# ---- docs/RESULTS.md blocks (python/cairn/results.py) --------------------------

def _results_json(root, path):
    from cairn.results import _load
    return _load(root, path)


def block_goals(root, path):
    """The goals table of a `cairn bench ycsb --json` file."""
    return goals_table(_results_json(root, path)["summary"]) + "\n"


def block_ratios(root, path, threads="1"):
    """Per-round spreads behind the goals table, for one thread count."""
    d = _results_json(root, path)
    cols = (("A", 1024), ("F", 1024), ("A", 8), ("F", 8), ("C", 1024), ("C", 8))
    cells = {}
    for e in d["summary"]:
        if e["threads"] != int(threads) or (e["phase"], e["value_size"]) not in cols:
            continue
        r = e.get("volatile_vs_cairn" if e["phase"] == "C" else "cairn_vs_pmemobj")
        if r:
            cells.setdefault(e["structure"], {})[(e["phase"], e["value_size"])] = \
                f"{r['median']:.2f}x ({r['min']:.2f}-{r['max']:.2f})"
    out = ["| structure | A 1 KiB | F 1 KiB | A 8 B | F 8 B | C 1 KiB vs volatile "
           "| C 8 B vs volatile |", "|---|---|---|---|---|---|---|"]
    for s in STRUCTURES:
        if s in cells:
            out.append(f"| {s} | " + " | ".join(cells[s].get(c, "-") for c in cols) + " |")
    return "\n".join(out) + "\n"


def block_lines(root, path):
    """Changed-line counts as the bench command computed them."""
    d = _results_json(root, path)
    out = [f"| structure | original lines | cairn port | goal (<= {GOAL_LINES}) "
           f"| libpmemobj port |", "|---|---:|---:|---|---:|"]
    out += [f"| {r['structure']} | {r['original_lines']} | {r['cairn']} "
            f"| {'met' if r['cairn'] <= GOAL_LINES else 'NOT met'} | {r['pmemobj']} |"
            for r in d["line_counts"]]
    return "\n".join(out) + "\n"


def _span(rs):
    return f"{min(rs):.2f}x-{max(rs):.2f}x"


def block_findings(root, path, profiles):
    """Where cairn loses, each figure from the run's JSON and the profiles' JSON."""
    d, p = _results_json(root, path), _results_json(root, profiles)
    S = d["summary"]
    hot = {"splay", "list"}

    def med(sel, key):
        return [e[key]["median"] for e in S if sel(e) and e.get(key)]
    w1k = med(lambda e: e["phase"] in ("A", "F") and e["value_size"] == 1024
              and e["structure"] not in hot, "cairn_vs_pmemobj")
    w8 = med(lambda e: e["phase"] in ("A", "F") and e["value_size"] == 8
             and e["structure"] not in hot, "cairn_vs_pmemobj")
    reach8 = sorted({e["structure"] for e in S if e["phase"] in ("A", "F")
                     and e["value_size"] == 8 and e.get("cairn_vs_pmemobj")
                     and e["cairn_vs_pmemobj"]["max"] >= GOAL_WRITE[8]})
    splay_c = med(lambda e: e["structure"] == "splay" and e["phase"] == "C", "volatile_vs_cairn")
    splay_w = med(lambda e: e["structure"] == "splay" and e["phase"] in ("A", "B", "C", "F"),
                  "cairn_vs_pmemobj")
    read = [e for e in S if e["phase"] == "C" and e["structure"] != "splay"
            and e.get("volatile_vs_cairn")]
    bad = [f"{e['structure']}, {e['value_size']} B, {e['threads']} thread(s): "
           f"{e['volatile_vs_cairn']['median']:.2f}x" for e in read
           if _goal_verdict(e["volatile_vs_cairn"], GOAL_READ, False) == "not met"]
    lst = {e["value_size"]: e["volatile_vs_cairn"]["median"] for e in read
           if e["structure"] == "list" and e["threads"] == 1}
    wall = [v for e in S if e.get("cairn_vs_pmemobj_wall")
            for v in (e["cairn_vs_pmemobj_wall"]["min"], e["cairn_vs_pmemobj_wall"]["max"])]
    spread = [e["cairn_vs_pmemobj_wall"]["max"] / e["cairn_vs_pmemobj_wall"]["min"]
              for e in S if e.get("cairn_vs_pmemobj_wall") and e["cairn_vs_pmemobj_wall"]["min"]]
    spread_cpu = [e["cairn_vs_pmemobj"]["max"] / e["cairn_vs_pmemobj"]["min"]
                  for e in S if e.get("cairn_vs_pmemobj") and e["cairn_vs_pmemobj"]["min"]]
    lc = d["line_counts"]

    def prof(cell):
        tops = {r["symbol"]: r["percent"] for r in cell["cairn_top"]}
        return tops, cell["ops_per_cpu_s"]
    c1k = next(c for c in p["cells"] if c["value_size"] == 1024)
    c8 = next(c for c in p["cells"] if c["value_size"] == 8)
    t1, o1 = prof(c1k)
    t8, o8 = prof(c8)
    pct = lambda t, s: f"{t.get(s, 0):.1f}%"  # noqa: E731
    out = [
        f"- Noise: the paired wall-clock ratios of one cell spread by a factor of "
        f"{statistics.median(spread):.2f} between rounds (median over cells; at most "
        f"{max(spread):.1f}), the CPU-time ratios by {statistics.median(spread_cpu):.2f} "
        f"(at most {max(spread_cpu):.1f}); wall-clock ratios ranged over {_span(wall)}.",
        f"- Writes of 1 KiB values (A and F) on the eight structures other than the splay "
        f"tree and the list: cairn / libpmemobj {_span(w1k)} (goal >= 2x). An update copies a "
        f"whole new 1 KiB value over the old one: libpmemobj snapshots it with one "
        f"`pmemobj_tx_add_range`, cairn-cc's instrumented memcpy goes through the runtime's "
        f"per-line machinery. Profile of {c1k['structure']}, {c1k['value_size']} B, "
        f"YCSB-{c1k['workload']} (cairn {o1['cairn'] / 1e3:.0f} K operations per CPU-second, "
        f"libpmemobj {o1['pmemobj'] / 1e3:.0f} K in the same pair of runs): `mark_protected` "
        f"{pct(t1, 'mark_protected')} (the 16 lines of the value entered one by one in the "
        f"transaction's logged-line hash set; `cairn__hash` {pct(t1, 'cairn__hash')} more), "
        f"`tx_end` {pct(t1, 'tx_end')}, `emit_rec_lines` {pct(t1, 'emit_rec_lines')}, "
        f"`cairn_cc__fix_words` {pct(t1, 'cairn_cc__fix_words')} (the copied bytes scanned "
        f"word by word for pointers), `cairn_tx_commit` {pct(t1, 'cairn_tx_commit')}.",
        f"- Writes of 8 B values on the same eight: {_span(w8)} (goal >= 2.5x); structures "
        f"whose best round reaches 2.5x: {', '.join(reach8) or 'none'}. Profile of "
        f"{c8['structure']}, {c8['value_size']} B, YCSB-{c8['workload']} (cairn "
        f"{o8['cairn'] / 1e3:.0f} K operations per CPU-second, libpmemobj "
        f"{o8['pmemobj'] / 1e3:.0f} K): `tx_end` {pct(t8, 'tx_end')}, `retire_log` "
        f"{pct(t8, 'retire_log')}, `emit_rec` {pct(t8, 'emit_rec')}; "
        f"{c8['tx_end_hot_instruction_percent']:.1f}% of `tx_end`'s samples sit on "
        f"{c8['tx_end_hot_instruction']}: a full fence that waits for the transaction's "
        f"stores to drain. A release store with a cheaper waiter hand-off is the first thing "
        f"to try (issue 19 item 6; runtime/ was being restructured, so not here).",
        f"- Splay tree: every read splays, so both ports run each read as a transaction that "
        f"logs its rotations: volatile / cairn on C {_span(splay_c)}, while cairn / "
        f"libpmemobj on A, B, C and F is {_span(splay_w)}.",
        f"- C against volatile, the splay tree aside: volatile / cairn {_span([e['volatile_vs_cairn']['median'] for e in read])}; "
        f"goal (<= 1.1x) not met in: {'; '.join(bad) or 'no cell'}. With 1 KiB values cairn "
        f"is often the faster; likely cause, not verified: malloc interleaves each small node "
        f"with its value, so a walk strides over values, while cairn's allocator keeps "
        f"objects of one size together (the list: {lst.get(8, 0):.2f}x with 8 B values, "
        f"{lst.get(1024, 0):.2f}x with 1 KiB).",
        f"- Porting effort: the cairn ports change {min(r['cairn'] for r in lc)}-"
        f"{max(r['cairn'] for r in lc)} code lines (goal <= {GOAL_LINES}; Breeze reported "
        f"18-20), the libpmemobj ports {min(r['pmemobj'] for r in lc)}-"
        f"{max(r['pmemobj'] for r in lc)} (Breeze: NVML 45-101). " + (
            "Ports written with cairn.h's porting conveniences (docs/compiler.md): one line "
            "per updating function (`CAIRN_TX_FUNCTION(pool)`), and per file `cairn.h`, the "
            "pool variable, `CAIRN_HEAP_POOL(pool);`, `CAIRN_OPEN_ROOT` for the root's "
            "`calloc`, `CAIRN_TX(pool)` on the new root's initialization and "
            "`cairn_pool_close`." if max(r['cairn'] for r in lc) <= GOAL_LINES else
            "These ports predate cairn.h's porting conveniences: three lines a function on "
            "`CAIRN_TX(pool) { ... }` (the block, its end, a `return -1;` for a transaction "
            "that cannot begin), about seven on opening or creating the pool and its root and "
            "closing it, two on `cairn.h` and the pool variable, and one per "
            "`malloc`/`calloc`/`free` call, error paths included."),
    ]
    return "\n".join(out) + "\n"
