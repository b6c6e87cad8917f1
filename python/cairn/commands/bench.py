"""`cairn bench runtime`: libcairn against libpmemobj, side by side, one run.

Both pools live on /dev/shm with forced user-space flushes (CAIRN_PMEM_FORCE=1
for cairn, PMEM_IS_PMEM_FORCE=1 for PMDK). The native programs are
bench/runtime/bench.c linked with one backend each (cairn-bench-cairn,
cairn-bench-pmemobj); this module runs them, alternating the two in every
round so both see the same machine noise, and reports medians and ratios.

Three parts:
  micro   throughput of each operation with 1 and 2 threads (each thread on
          its own objects, one pool per process, warm-up first);
  counts  flushes, fences and non-temporal stores per operation, counted by
          single-stepping the program (cairn-stepcount) over a few
          iterations: the same measurement for both libraries, plus cairn's
          own counters (cairn_stats_get) next to it;
  open    a pool full of 1 KiB objects linked from the root: fill, close,
          reopen (clean), run transactions, SIGKILL, reopen (recovery).
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cairn import paths
from cairn.argtypes import positive_int, whole_number
from cairn.paired import dir_problem
from cairn.results import verdict

try:
    from tqdm import tqdm
except ImportError:  # progress bars are a nicety, not a dependency of results
    tqdm = None

IMPLS = ("pmemobj", "cairn")
TOOLS = {"cairn": "cairn-bench-cairn", "pmemobj": "cairn-bench-pmemobj"}
OPS = ("tx_update_8B", "tx_update_8x64B",
       "alloc_free_64B", "alloc_free_1KiB", "alloc_free_4KiB",
       "tx_alloc_free_64B", "tx_alloc_free_1KiB", "tx_alloc_free_4KiB",
       "tx_insert_delete_64B", "tx_insert_delete_1KiB")
# Goals of issue 2 (cairn throughput / pmemobj throughput). Shown, never asserted.
# The insert/delete pair is what a YCSB insert pays: issue 19's write goals
# (8 B values >= 2.5x, 1 KiB >= 2x).
GOALS = {"tx_update_8B": 2.5, "tx_update_8x64B": 2.0,
         "tx_insert_delete_64B": 2.5, "tx_insert_delete_1KiB": 2.0}
GOAL_ALLOC = 3.0
GOAL_OPEN_S = 0.5
FORCE_ENV = {"CAIRN_PMEM_FORCE": "1", "PMEM_IS_PMEM_FORCE": "1"}

FULL = dict(rounds=5, seconds=0.5, warmup=0.2, iterations=20,
            pool_size=256 << 20, open_size=4 << 30, churn_s=1.0, open_repeats=3,
            floor_blocks=40, floor_ops=50000)
QUICK = dict(rounds=1, seconds=0.05, warmup=0.02, iterations=3,
             pool_size=64 << 20, open_size=64 << 20, churn_s=0.2, open_repeats=1,
             floor_blocks=2, floor_ops=2000)


def register(subparsers):
    p = subparsers.add_parser("bench", help="benchmarks against libpmemobj",
                              description="Benchmarks: cairn against its peers.")
    sub = p.add_subparsers(dest="bench_command", metavar="BENCH")
    r = sub.add_parser(
        "runtime", help="libcairn vs libpmemobj: tx, alloc, open, flushes/fences",
        description="libcairn against libpmemobj side by side in one run, pools "
                    "on /dev/shm with forced user-space flushes.")
    r.add_argument("--threads", type=_threads, default=[1, 2], metavar="N[,N...]",
                   help="thread counts, each at least 1 (default 1,2)")
    r.add_argument("--quick", action="store_true",
                   help="tiny sizes and times: proves the benchmark runs, measures little")
    r.add_argument("--json", metavar="FILE", help="write every measurement as JSON")
    r.add_argument("--rounds", type=positive_int, help="alternating rounds per impl (median taken)")
    r.add_argument("--seconds", type=_positive_float, help="measured seconds per operation (> 0)")
    r.add_argument("--open-size", type=_size, help="pool size of the open test (default 4G)")
    r.add_argument("--parts", type=_parts, default=list(PARTS), metavar="PART[,PART...]",
                   help=f"which parts to run: {', '.join(PARTS)} (default all)")
    r.add_argument("--dir", default="/dev/shm", help="where pools go (default /dev/shm)")
    r.add_argument("--markdown", action="store_true", help="print tables as Markdown")
    r.set_defaults(func=run_runtime)
    from cairn.commands import cc      # the compiler's benchmark lives with cairn-cc
    cc.add_bench_parser(sub, "compiler")
    from cairn import ycsb             # YCSB over legacy data structures
    ycsb.add_parser(sub)
    from cairn import vacation         # STAMP's vacation, three builds
    vacation.add_parser(sub)
    p.set_defaults(func=lambda args: p.print_help() or 2)


PARTS = ("micro", "counts", "open")


def _threads(text):
    """argparse type: thread counts, e.g. 1,2,4."""
    out = []
    for t in text.split(","):
        v = whole_number(t)
        if v < 1:
            raise argparse.ArgumentTypeError(f"{v} threads: each count must be at least 1")
        out.append(v)
    return out


def _parts(text):
    """argparse type: a comma-separated subset of PARTS."""
    parts = [p for p in text.split(",") if p]
    bad = [p for p in parts if p not in PARTS]
    if bad or not parts:
        raise argparse.ArgumentTypeError(f"unknown part {', '.join(map(repr, bad)) or repr(text)} "
                                         f"(choose from {', '.join(PARTS)})")
    return parts


def _positive_float(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number")
    if not v > 0 or v == float("inf"):
        raise argparse.ArgumentTypeError(f"{text} must be a number of seconds above 0")
    return v


def _size(text):
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
    t = text.strip().lower().rstrip("ib").rstrip("b")
    if t and t[-1] in units:
        return int(float(t[:-1]) * units[t[-1]])
    return int(t)


def _find_tools():
    found = {}
    for impl, name in TOOLS.items():
        try:
            found[impl] = str(paths.tool(name))
        except SystemExit as why:
            print(f"cairn bench: {impl} side skipped: {why}", file=sys.stderr)
    for key, name in (("stepcount", "cairn-stepcount"), ("floor", "cairn-flush-floor"),
                      ("tx_floor", "cairn-tx-floor")):
        try:
            found[key] = str(paths.tool(name))
        except SystemExit:
            pass
    return found


def _progress(total, desc):
    if tqdm is None or not sys.stderr.isatty() and os.environ.get("CAIRN_PROGRESS") != "1":
        return None
    return tqdm(total=total, desc=desc, unit="run", leave=False, file=sys.stderr)


def _json_lines(text):
    rows = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            rows.append(json.loads(line))
    return rows


def _run(cmd, env, timeout):
    """Run one native program; return (rows, error text or None)."""
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return [], f"timed out after {timeout} s: {' '.join(cmd)}"
    rows = _json_lines(proc.stdout)
    if proc.returncode != 0:
        err = proc.stderr.strip().splitlines()[-3:] or [f"exit {proc.returncode}"]
        return rows, f"exit {proc.returncode}: {' | '.join(err)}"
    return rows, None


# ---- floor ------------------------------------------------------------------

def run_floor(tools, workdir, errors):
    """Cost of K ordered write-back rounds (store+flush+sfence) on this machine."""
    if "floor" not in tools:
        return []
    pool = str(Path(workdir) / f"cairn-bench-floor-{os.getpid()}.pool")
    rows, err = _run([tools["floor"], "--pool", pool], dict(os.environ), timeout=300)
    Path(pool).unlink(missing_ok=True)
    if err:
        errors.append(f"floor: {err}")
    return [r for r in rows if r.get("mode") == "floor"]


def run_tx_floor(tools, cfg, env, workdir, errors):
    """cairn's 8-byte transaction against a replay of its own store pattern,
    alternating blocks in one process (bench/runtime/tx_floor.c)."""
    if "tx_floor" not in tools:
        return []
    pool = str(Path(workdir) / f"cairn-bench-txfloor-{os.getpid()}.pool")
    rows, err = _run([tools["tx_floor"], "--pool", pool, "--blocks", str(cfg["floor_blocks"]),
                      "--ops", str(cfg["floor_ops"])],
                     env, timeout=600)
    Path(pool).unlink(missing_ok=True)
    if err:
        errors.append(f"tx floor: {err}")
    return [r for r in rows if "kind" in r]


def _merge_floor(*runs):
    best = {}
    for run in runs:
        for r in run:
            k = (r.get("flush") == "nt", r["rounds"])
            if k not in best or r["ns_per_op"] < best[k]["ns_per_op"]:
                best[k] = r
    return [best[k] for k in sorted(best)]


# ---- micro ------------------------------------------------------------------

def run_micro(tools, cfg, threads, env, workdir, errors):
    """One process per (round, threads, operation, impl); the two impls run
    back to back for each operation, in an order flipped every round, so each
    pair sees the same moment of a noisy machine."""
    impls = [i for i in IMPLS if i in tools]
    rows = []
    bar = _progress(cfg["rounds"] * len(threads) * len(OPS) * len(impls), "micro")
    for rnd in range(cfg["rounds"]):
        for t in threads:
            for k, op in enumerate(OPS):
                order = impls if (rnd + k) % 2 == 0 else impls[::-1]
                for impl in order:
                    pool = str(Path(workdir) / f"cairn-bench-{impl}-{os.getpid()}.pool")
                    cmd = [tools[impl], "micro", "--pool", pool, "--ops", op,
                           "--pool-size", str(cfg["pool_size"]), "--threads", str(t),
                           "--seconds", str(cfg["seconds"]), "--warmup", str(cfg["warmup"])]
                    got, err = _run(cmd, env, timeout=300)
                    for row in got:
                        if row.get("mode") == "micro":
                            row["round"] = rnd
                            rows.append(row)
                    if err:
                        errors.append(f"micro {impl} {op} threads={t} round {rnd}: {err}")
                    Path(pool).unlink(missing_ok=True)
                    if bar:
                        bar.update()
    if bar:
        bar.close()
    return rows


def summarize_micro(rows, threads):
    out = []
    for t in threads:
        for op in OPS:
            entry = {"op": op, "threads": t}
            by_round = {}
            for impl in IMPLS:
                sel = [r for r in rows if r["impl"] == impl and r["op"] == op
                       and r["threads"] == t]
                for r in sel:
                    by_round.setdefault(r["round"], {})[impl] = r["ops_per_s"]
                if sel:
                    entry[impl] = {
                        "ops_per_s": statistics.median(r["ops_per_s"] for r in sel),
                        "ns_per_op": statistics.median(r["ns_per_op"] for r in sel),
                        "runs": len(sel)}
                    if "self" in sel[0]:
                        entry[impl]["self"] = sel[-1]["self"]
            pairs = [v["cairn"] / v["pmemobj"] for v in by_round.values()
                     if "cairn" in v and "pmemobj" in v and v["pmemobj"] > 0]
            if pairs:
                entry["ratio"] = statistics.median(pairs)
                entry["ratio_min"], entry["ratio_max"] = min(pairs), max(pairs)
            entry["goal"] = GOALS.get(op, GOAL_ALLOC)
            out.append(entry)
    return out


# ---- counts -------------------------------------------------------------------

def run_counts(tools, cfg, env, workdir, errors):
    if "stepcount" not in tools:
        errors.append("counts: cairn-stepcount is not built (x86-64 Linux only)")
        return {}
    result = {}
    impls = [i for i in IMPLS if i in tools]
    bar = _progress(len(impls), "counts")
    for impl in impls:
        pool = str(Path(workdir) / f"cairn-bench-count-{impl}-{os.getpid()}.pool")
        with tempfile.NamedTemporaryFile("r", suffix=".jsonl") as regions_file:
            cmd = [tools["stepcount"], "-o", regions_file.name, "--", tools[impl], "count",
                   "--pool", pool, "--pool-size", str(cfg["pool_size"]),
                   "--iterations", str(cfg["iterations"])]
            got, err = _run(cmd, env, timeout=1800)
            regions = _json_lines(Path(regions_file.name).read_text())
        Path(pool).unlink(missing_ok=True)
        if err:
            errors.append(f"counts {impl}: {err}")
        ops = [r for r in got if r.get("mode") == "count"]
        for op_row, reg in zip(ops, regions):
            n = op_row["iterations"]
            per = {k: v / n for k, v in reg.items() if k != "region"}
            measured = {
                "fences": per["sfence"] + per["mfence"],
                "flushes": per["clwb"] + per["clflushopt"] + per["clflush"],
                "nt_lines": per["nt_bytes"] / 64.0,
                "instructions": per["instructions"],
                "raw": per}
            result.setdefault(op_row["op"], {})[impl] = {
                "measured": measured, "self": op_row.get("self"), "iterations": n}
        if bar:
            bar.update()
    if bar:
        bar.close()
    return result


# ---- open ---------------------------------------------------------------------

def _churn_and_kill(cmd, env, churn_s):
    """Start the churn, wait until it runs, let it work, SIGKILL it."""
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 600
    ready = False
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if '"running"' in line:
            ready = True
            break
    if ready:
        time.sleep(churn_s)
    alive = proc.poll() is None
    if alive:
        proc.send_signal(signal.SIGKILL)
    _, stderr = proc.communicate()
    if not ready or not alive:
        return f"churn did not run until the kill (exit {proc.returncode}): {stderr.strip()[-300:]}"
    return None


def run_open(tools, cfg, env, workdir, errors):
    result = {}
    impls = [i for i in IMPLS if i in tools]
    bar = _progress((1 + 2 * cfg["open_repeats"]) * len(impls), "open")
    for impl in impls:
        pool = str(Path(workdir) / f"cairn-bench-open-{impl}-{os.getpid()}.pool")
        entry = result.setdefault(impl, {"pool_size": cfg["open_size"]})
        try:
            got, err = _run([tools[impl], "fill", "--pool", pool,
                             "--pool-size", str(cfg["open_size"])], env, timeout=1800)
            fill = [r for r in got if r.get("mode") == "fill"]
            if bar:
                bar.update()
            if err or not fill:
                errors.append(f"open {impl}: fill failed: {err}")
                continue
            entry["fill"] = fill[0]
            for rep in range(cfg["open_repeats"]):
                got, err = _run([tools[impl], "open", "--pool", pool], env, timeout=600)
                opened = [r for r in got if r.get("mode") == "open"]
                if bar:
                    bar.update()
                if err or not opened:
                    errors.append(f"open {impl}: open after clean close failed: {err}")
                    break
                entry.setdefault("clean_runs", []).append(opened[0])
            for rep in range(cfg["open_repeats"]):
                err = _churn_and_kill([tools[impl], "churn", "--pool", pool], env,
                                      cfg["churn_s"])
                if err:
                    errors.append(f"open {impl}: {err}")
                    break
                got, err = _run([tools[impl], "open", "--pool", pool], env, timeout=600)
                opened = [r for r in got if r.get("mode") == "open"]
                if bar:
                    bar.update()
                if err or not opened:
                    errors.append(f"open {impl}: open after SIGKILL failed: {err}")
                    break
                entry.setdefault("crash_runs", []).append(opened[0])
            for when in ("clean", "after_crash"):
                runs = entry.get("clean_runs" if when == "clean" else "crash_runs")
                if runs:
                    entry[when] = dict(runs[-1], **{
                        k: statistics.median(r[k] for r in runs)
                        for k in ("open_s", "first_alloc_s", "walk_s", "background_s")
                        if all(k in r for r in runs)})
        finally:
            Path(pool).unlink(missing_ok=True)
    if bar:
        bar.close()
    return result


# ---- tables -------------------------------------------------------------------

def _fmt(v, spec=".2f"):
    return "-" if v is None else format(v, spec)


def _ms(seconds):
    return "-" if seconds is None else f"{seconds * 1e3:.1f}"


def _table(headers, rows, markdown):
    if markdown:
        lines = ["| " + " | ".join(headers) + " |",
                 "|" + "|".join("---" for _ in headers) + "|"]
        lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
        return "\n".join(lines)
    widths = [max(len(str(x)) for x in col) for col in zip(headers, *rows)]
    fmt = "  ".join(("{:<%d}" if i == 0 else "{:>%d}") % w for i, w in enumerate(widths))
    return "\n".join(fmt.format(*[str(c) for c in r]) for r in [headers, *rows])


def render(report, markdown=False):
    parts = []
    floor = report.get("floor")
    if floor:
        flushed = [r for r in floor if r["flush"] != "nt"]
        nt = [r for r in floor if r["flush"] == "nt"]
        if flushed:
            parts.append("Floor on this machine: K ordered write-back rounds (store + %s + sfence "
                         "each, least disturbed of the runs before and after): " % flushed[0]["flush"] +
                         ", ".join("%d: %.0f ns" % (r["rounds"], r["ns_per_op"]) for r in flushed))
        if nt:
            parts.append("K ordered rounds of one whole line written by non-temporal stores + sfence: " +
                         ", ".join("%d: %.0f ns" % (r["rounds"], r["ns_per_op"]) for r in nt))
    txf = {r["kind"]: r for r in report.get("tx_floor") or []}
    if "cairn" in txf and "replica+read" in txf:
        parts.append("The 8-byte transaction against a replay of its own stores with no software "
                     "(bench/runtime/tx_floor.c, blocks alternating in one process): cairn %.0f ns, "
                     "replay %.0f ns (%.2f of cairn), replay after reading the field as the snapshot "
                     "must %.0f ns (%.2f of cairn)" % (
                         txf["cairn"]["ns_per_op"], txf["replica"]["ns_per_op"],
                         txf["replica"]["ratio_to_cairn"], txf["replica+read"]["ns_per_op"],
                         txf["replica+read"]["ratio_to_cairn"]))
    micro = report.get("micro_summary")
    if micro:
        rows = []
        for e in micro:
            pm, cn = e.get("pmemobj"), e.get("cairn")
            ratio = e.get("ratio")
            rows.append([e["op"], e["threads"],
                         _fmt(pm and pm["ns_per_op"], ".0f"), _fmt(cn and cn["ns_per_op"], ".0f"),
                         _fmt(pm and pm["ops_per_s"] / 1e3, ".0f"),
                         _fmt(cn and cn["ops_per_s"] / 1e3, ".0f"),
                         "-" if ratio is None else
                         f"{ratio:.2f}x ({e['ratio_min']:.2f}-{e['ratio_max']:.2f})",
                         f">= {e['goal']:g}x",
                         "-" if ratio is None else verdict(e["ratio_min"], e["ratio_max"],
                                                           e["goal"])])
        parts.append("Throughput, median of %d rounds; in each round the two libraries run "
                     "the operation back to back; ratio = cairn/pmemobj throughput, median of "
                     "the rounds' ratios (min-max); ns/op is per thread:\n"
                     % report["config"]["rounds"] +
                     _table(["operation", "thr", "pmemobj ns/op", "cairn ns/op",
                             "pmemobj kops/s", "cairn kops/s", "cairn/pmemobj", "goal", ""],
                            rows, markdown))
    counts = report.get("counts")
    if counts:
        def lines(m):
            return "-" if not m else "%g (%g+%g)" % (m["flushes"] + m["nt_lines"],
                                                     m["flushes"], m["nt_lines"])
        rows = []
        for op in OPS:
            c = counts.get(op, {})
            pm = c.get("pmemobj", {}).get("measured")
            cn = c.get("cairn", {}).get("measured")
            self_ = c.get("cairn", {}).get("self")
            fewer = "-"
            if pm and cn:
                fewer = "yes" if (cn["fences"] < pm["fences"] and
                                  cn["flushes"] + cn["nt_lines"] <
                                  pm["flushes"] + pm["nt_lines"]) else "NO"
            rows.append([op, _fmt(pm and pm["fences"], "g"), lines(pm),
                         _fmt(cn and cn["fences"], "g"), lines(cn),
                         "-" if not self_ else "%gd+%go, %g" % (
                             self_["dfences"], self_["ofences"], self_["flushes"]),
                         fewer,
                         _fmt(pm and pm["instructions"], ".0f"),
                         _fmt(cn and cn["instructions"], ".0f")])
        parts.append("Per operation, 1 thread, counted by single-stepping both programs "
                     "(cairn-stepcount): fences = sfence+mfence executed; lines = cache lines "
                     "written back = clwb+clflushopt+clflush (+ non-temporal bytes / 64); "
                     "cairn self = its cairn_stats_get (dfences+ofences, flushed lines):\n" +
                     _table(["operation", "pmemobj fences", "pmemobj lines (flush+nt)",
                             "cairn fences", "cairn lines (flush+nt)", "cairn self",
                             "fewer both", "pmemobj instr", "cairn instr"], rows, markdown))
    opened = report.get("open")
    if opened:
        rows = []
        for impl in IMPLS:
            e = opened.get(impl)
            if not e:
                continue
            f, c, k = e.get("fill", {}), e.get("clean", {}), e.get("after_crash", {})
            moved = "-"
            if c.get("base") and k.get("base"):
                moved = "yes" if len({f.get("base"), c["base"], k["base"]}) > 1 else "no"
            rows.append([impl, f"{e['pool_size'] / (1 << 30):g} GiB", f.get("objects", "-"),
                         _fmt(f.get("seconds"), ".1f"),
                         _ms(c.get("open_s")), _ms(c.get("first_alloc_s")),
                         _ms(k.get("open_s")), _ms(k.get("first_alloc_s")),
                         _ms(k.get("background_s")) if impl == "cairn" else "-",
                         "%s/%s" % (c.get("objects", "-"), k.get("objects", "-")),
                         " ".join(x.get("base", "?") for x in (f, c, k) if x), moved])
        parts.append(f"Open of a pool full of 1 KiB objects linked from the root (goal <= "
                     f"{GOAL_OPEN_S} s); clean = after pmemobj_close/cairn_pool_close, crash = "
                     f"after SIGKILL during transactions; first alloc = zeroed alloc+free right "
                     f"after the open (PMDK builds its heap lazily; after a crash cairn's is "
                     f"served from slots a clean close recorded as free, or else waits for the "
                     f"background mark); background = cairn's mark "
                     f"and sweep after the open returned, on another thread; median of "
                     f"{report['config']['open_repeats']} opens each:\n" +
                     _table(["impl", "pool", "objects", "fill s", "open clean ms",
                             "1st alloc ms", "open crash ms", "1st alloc ms", "background ms",
                             "walked clean/crash",
                             "root address fill/clean/crash", "moved"], rows, markdown))
    if report.get("errors"):
        parts.append("Errors:\n" + "\n".join("  " + e for e in report["errors"]))
    return "\n\n".join(parts)


def _source_state():
    """The commit the measured runtime was built from, and whether runtime/
    or include/ had uncommitted changes then."""
    source = paths.SOURCE_ROOT
    try:  # the tree the build directory was configured from
        for line in (paths.build_dir() / "CMakeCache.txt").read_text().splitlines():
            if line.startswith("CMAKE_HOME_DIRECTORY:INTERNAL="):
                source = Path(line.split("=", 1)[1])
    except OSError:
        pass

    def git(*a):
        try:
            return subprocess.run(["git", "-C", str(source), *a], text=True,
                                  capture_output=True, timeout=30).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""
    return {"commit": git("rev-parse", "--short", "HEAD") or None,
            "runtime_dirty": bool(git("status", "--porcelain", "--", "runtime", "include"))}


def _command_line(args):
    words = ["cairn", "bench", "runtime", "--threads", ",".join(map(str, args.threads))]
    words += ["--quick"] if args.quick else []
    for flag in ("rounds", "seconds", "open_size", "json"):
        if getattr(args, flag):
            words += ["--" + flag.replace("_", "-"), str(getattr(args, flag))]
    if list(args.parts) != list(PARTS):
        words += ["--parts", ",".join(args.parts)]
    return " ".join(words)


def run_runtime(args):
    cfg = dict(QUICK if args.quick else FULL)
    if args.rounds:
        cfg["rounds"] = args.rounds
    if args.seconds:
        cfg["seconds"] = args.seconds
    if args.open_size:
        cfg["open_size"] = args.open_size
    threads = list(args.threads)
    parts = set(args.parts)
    why = dir_problem(Path(args.dir))
    if why:
        print(f"cairn bench runtime: --dir {args.dir}: {why}; give a directory you can write "
              "for the pools (default /dev/shm)", file=sys.stderr)
        return 2
    tools = _find_tools()
    if not any(i in tools for i in IMPLS):
        print("cairn bench runtime: neither cairn-bench-cairn nor cairn-bench-pmemobj "
              "is built; build with cmake (bench/CMakeLists.txt)", file=sys.stderr)
        return 1
    env = dict(os.environ, **FORCE_ENV)
    errors = []
    report = {"benchmark": "runtime", "quick": bool(args.quick), "config": cfg,
              "threads": threads, "dir": args.dir, "env": FORCE_ENV,
              "impls": [i for i in IMPLS if i in tools],
              "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "command": _command_line(args), "source": _source_state()}
    floor_before = run_floor(tools, args.dir, errors) if "micro" in parts else []
    if "micro" in parts:
        micro = run_micro(tools, cfg, threads, env, args.dir, errors)
        report["micro"] = micro
        report["micro_summary"] = summarize_micro(micro, threads)
    if "micro" in parts:
        report["tx_floor"] = run_tx_floor(tools, cfg, env, args.dir, errors)
    if "counts" in parts:
        report["counts"] = run_counts(tools, cfg, env, args.dir, errors)
    if "open" in parts:
        report["open"] = run_open(tools, cfg, env, args.dir, errors)
    if floor_before:
        report["floor"] = _merge_floor(floor_before, run_floor(tools, args.dir, errors))
    report["errors"] = errors
    print(render(report, markdown=args.markdown))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    return 1 if errors else 0
