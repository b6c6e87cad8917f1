"""docs/RESULTS.md's numbers, generated from the JSON the benchmarks wrote.

Every measured figure in docs/RESULTS.md stands inside a generated block:

    <!-- results: KIND FILE [ARG ...] -->
    ...text made by the block function KIND from FILE...
    <!-- /results -->

`scripts/results.py` rewrites every block from its JSON file (--write) or
says which block differs from what its data gives (--check, the default; the
test suite runs it). Outside the blocks, prose may describe methods and
configurations, but a measured quantity (a ratio, a time, a percentage, an
instruction count) written by hand is refused by lint(): it would drift from
the data. Goals (numbers after <=, >= or "goal") and code are allowed.

A goal is judged by verdict(): "met" only when the whole spread of the
paired ratios (min-max, or p25-p75) is on the goal's side, "NOT met" when the
whole spread is on the other side, "not shown" otherwise: a ratio inside the
noise is not evidence either way.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

from cairn.paired import quantile

BLOCK = re.compile(r"<!-- results: (?P<spec>[^>]*?) -->(?P<nl>\n?)(?P<body>.*?)<!-- /results -->",
                   re.S)


class ResultsError(Exception):
    pass


def verdict(lo, hi, goal, better="higher"):
    """met / NOT met / not shown, from the spread [lo, hi] of a ratio."""
    if better == "higher":
        if lo >= goal:
            return "met"
        if hi < goal:
            return "NOT met"
    else:
        if hi <= goal:
            return "met"
        if lo > goal:
            return "NOT met"
    return "not shown"


def _load(root, path):
    full = os.path.join(root, path)
    try:
        with open(full) as f:
            return json.load(f)
    except OSError as e:
        raise ResultsError(f"{path}: cannot read it ({e.strerror}); run the benchmark that writes it "
                           "or fix the block's file name") from None
    except json.JSONDecodeError as e:
        raise ResultsError(f"{path}: not JSON ({e}); restore it from git") from None


def _git_commit_of(root, path):
    try:
        out = subprocess.run(["git", "-C", root, "log", "-1", "--format=%h", "--", path],
                             capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        out = ""
    return out or "unknown"


# ---------------------------------------------------------------- blocks

def block_provenance(root, path):
    """Which command wrote the file, when, from which commit."""
    d = _load(root, path)
    src = d.get("source") or {}
    commit = src.get("commit")
    where = (f"built from commit {commit}" + (" (runtime sources modified)"
                                              if src.get("runtime_dirty") else "")
             if commit else f"the file was committed in {_git_commit_of(root, path)}; "
             "the JSON does not name the commit it measured")
    started = d.get("started")
    return (f"Data: `{path}`, written by `{d.get('command', '?')}`"
            + (f" at {started}" if started else "") + f"; {where}.\n")


def _runtime_summary(d):
    return {(e["op"], e["threads"]): e for e in d.get("micro_summary") or []}


def block_runtime(root, path):
    """The tables `cairn bench runtime --markdown` prints, from its JSON."""
    from .commands import bench
    return bench.render(_load(root, path), markdown=True) + "\n"


def block_runtime_findings(root, path):
    """What the runtime run shows, each number from the JSON."""
    d = _load(root, path)
    out = []
    summ = _runtime_summary(d)
    verdicts = {}
    for e in summ.values():
        if e.get("ratio") is None:
            continue
        verdicts.setdefault(verdict(e["ratio_min"], e["ratio_max"], e["goal"]), []).append(
            f"{e['op']} ({e['threads']} thr, {e['ratio']:.2f}x, "
            f"{e['ratio_min']:.2f}-{e['ratio_max']:.2f})")
    why = {"met": "the whole min-max spread of the paired ratios is on the goal's side",
           "not shown": "the spread straddles the goal: this run cannot tell",
           "NOT met": "the whole spread is below the goal"}
    for v in ("met", "not shown", "NOT met"):
        if v in verdicts:
            out.append(f"- Goal {v} ({why[v]}): " + "; ".join(verdicts[v]) + ".")
    txf = {r["kind"]: r for r in d.get("tx_floor") or []}
    if "cairn" in txf and "replica" in txf and "replica+read" in txf:
        c = txf["cairn"]["ns_per_op"]
        lo = min(txf["replica"]["ns_per_op"], txf["replica+read"]["ns_per_op"])
        hi = max(txf["replica"]["ns_per_op"], txf["replica+read"]["ns_per_op"])
        out.append(f"- The 8-byte transaction against a replay of its own memory operations "
                   f"with no software: cairn {c:.0f} ns, the replays {lo:.0f}-{hi:.0f} ns, so "
                   f"cairn took {c / hi:.2f}-{c / lo:.2f} of the floor of its own store pattern "
                   f"(one run of blocks alternating in one process; above 1.00 is software "
                   f"overhead, below it is noise).")
    counts = d.get("counts") or {}
    fewer = [op for op, c in counts.items()
             if c.get("pmemobj", {}).get("measured") and c.get("cairn", {}).get("measured")
             and c["cairn"]["measured"]["fences"] < c["pmemobj"]["measured"]["fences"]]
    if counts:
        out.append(f"- Fences per operation, single-stepped: fewer than libpmemobj for "
                   f"{len(fewer)} of {len(counts)} operations.")
    opened = d.get("open") or {}
    cn, pm = opened.get("cairn"), opened.get("pmemobj")
    if cn and pm:
        from .commands.bench import GOAL_OPEN_S
        ck, pk = cn.get("after_crash", {}), pm.get("after_crash", {})
        cc, pc = cn.get("clean", {}), pm.get("clean", {})
        ready_c = (ck.get("open_s") or 0) + (ck.get("first_alloc_s") or 0)
        ready_p = (pk.get("open_s") or 0) + (pk.get("first_alloc_s") or 0)
        bg = ck.get("background_s") or 0
        waited = bg > 0 and (ck.get("first_alloc_s") or 0) >= bg / 2
        out.append(
            f"- Open of the full {cn['pool_size'] / (1 << 30):g} GiB pool: clean "
            f"{cc.get('open_s', 0) * 1e3:.1f} ms (libpmemobj {pc.get('open_s', 0) * 1e3:.1f} ms), "
            f"after SIGKILL {ck.get('open_s', 0) * 1e3:.1f} ms "
            f"(libpmemobj {pk.get('open_s', 0) * 1e3:.1f} ms). Judged as a user feels it, the "
            f"time from the open after a crash to its first allocation returning: cairn "
            f"{ready_c * 1e3:.0f} ms, libpmemobj {ready_p * 1e3:.0f} ms (goal <= {GOAL_OPEN_S} s: "
            f"cairn {'met' if ready_c <= GOAL_OPEN_S else 'NOT met'}; the background mark took "
            f"{bg * 1e3:.0f} ms after the open, and the first allocation "
            f"{'waited for it' if waited else 'did not wait for it'}).")
    return "\n".join(out) + "\n"


CC_VARIANTS = ("clang", "clang-same", "cc-dram", "cc-pm")
CC_GOALS = {"cc-dram": 1.05, "cc-pm-read": 1.25}


def _cc_cells(d):
    by = {(e["structure"], e["workload"], e["variant"]): e for e in d["ns_per_op"]}
    cells = []
    seen = []
    for e in d["ns_per_op"]:
        k = (e["structure"], e["workload"])
        if k not in seen:
            seen.append(k)
    for s, w in seen:
        row = {"structure": s, "workload": w}
        base = by.get((s, w, "clang"))
        for v in CC_VARIANTS:
            e = by.get((s, w, v))
            row[v] = e and e["median"]
            if e and base and v != "clang":
                r = [b / a for a, b in zip(base["samples"], e["samples"])]
                row[v + "/ratio"] = (statistics.median(r), quantile(r, 0.25), quantile(r, 0.75))
        same = by.get((s, w, "clang-same"))
        dram = by.get((s, w, "cc-dram"))
        if same and dram:
            r = [b / a for a, b in zip(same["samples"], dram["samples"])]
            row["cc-dram/same"] = (statistics.median(r), quantile(r, 0.25), quantile(r, 0.75))
        cells.append(row)
    return cells


def _r(t):
    return "-" if not t else f"{t[0]:.2f}x ({t[1]:.2f}-{t[2]:.2f})"


def block_ccbench(root, path):
    """cairn cc bench's paired-slice table, ratios recomputed from the slices."""
    d = _load(root, path)
    lines = ["| structure | workload | clang ns/op | clang same source | cairn-cc DRAM "
             "| ratio (p25-p75) | vs same source | cairn-cc PM | ratio (p25-p75) "
             "| A/A: same source vs clang |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for c in _cc_cells(d):
        f = lambda v: "-" if c.get(v) is None else f"{c[v]:.1f}"  # noqa: E731
        lines.append(f"| {c['structure']} | {c['workload']} | {f('clang')} | {f('clang-same')} "
                     f"| {f('cc-dram')} | {_r(c.get('cc-dram/ratio'))} "
                     f"| {_r(c.get('cc-dram/same'))} | {f('cc-pm')} "
                     f"| {_r(c.get('cc-pm/ratio'))} | {_r(c.get('clang-same/ratio'))} |")
    return "\n".join(lines) + "\n"


def block_ccbench_goals(root, path):
    """Each cell against its goal, with verdict() on the p25-p75 spread."""
    d = _load(root, path)
    lines = ["| structure | workload | data | ratio to clang (p25-p75) | goal | verdict "
             "| A/A floor (clang same source vs clang) |",
             "|---|---|---|---:|---|---|---:|"]
    for c in _cc_cells(d):
        aa = c.get("clang-same/ratio")
        for data, key, goal in (("DRAM", "cc-dram/ratio", CC_GOALS["cc-dram"]),
                                ("PM", "cc-pm/ratio",
                                 CC_GOALS["cc-pm-read"] if c["workload"] == "read" else None)):
            t = c.get(key)
            if not t:
                continue
            if goal is None or (data == "PM" and c["structure"] == "splay"):
                g, v = "-", "no goal" + (" (a splay lookup writes)" if c["structure"] == "splay"
                                         and data == "PM" else "")
            else:
                g, v = f"<= {goal:g}x", verdict(t[1], t[2], goal, better="lower")
            lines.append(f"| {c['structure']} | {c['workload']} | {data} | {_r(t)} | {g} | {v} "
                         f"| {_r(aa)} |")
    return "\n".join(lines) + "\n"


def block_ccbench_counts(root, path):
    """Dynamic checks per operation and the pass's static counters."""
    d = _load(root, path)
    rows = d.get("per_op_counts") or []
    if not rows:
        return "(no dynamic counts in this run)\n"
    keys = [k for k in rows[0] if k not in ("data", "structure", "workload")]
    lines = ["| data | structure | workload | " + " | ".join(keys) + " |",
             "|---|---|---|" + "---:|" * len(keys)]
    for r in rows:
        lines.append(f"| {r['data']} | {r['structure']} | {r['workload']} | "
                     + " | ".join(f"{r[k]:.2f}" for k in keys) + " |")
    abl = d.get("removed_per_op_pm") or []
    if abl:
        lines += ["", "What each optimization removed, per operation on PM data (its "
                  "--cairn-count build with -fno-cairn-OPT):", "",
                  "| optimization | counter | structure | workload | with it | without it "
                  "| removed |", "|---|---|---|---|---:|---:|---:|"]
        lines += [f"| {r['optimization']} | {r['counter']} | {r['structure']} | {r['workload']} "
                  f"| {r['with']:.2f} | {r['without']:.2f} | {r['without'] - r['with']:.2f} |"
                  for r in abl]
    stats = d.get("static_stats") or {}
    if stats:
        lines += ["", "What the pass did to ds_bench.c (static, cairn-cc --cairn-stats):", "",
                  "| count | counter |", "|---:|---|"]
        lines += [f"| {v} | {k} |" for k, v in sorted(stats.items())]
    return "\n".join(lines) + "\n"


def _path(d, path, file):
    """d at a dotted path: keys, list indices, or [key=value] to pick a list item."""
    cur = d
    for part in path.split("."):
        m = re.fullmatch(r"\[(\w+)=([^\]]*)\]", part)
        try:
            if m:
                cur = next(x for x in cur if str(x.get(m.group(1))) == m.group(2))
            elif isinstance(cur, list):
                cur = cur[int(part)]
            else:
                cur = cur[part]
        except (KeyError, IndexError, ValueError, StopIteration, TypeError, AttributeError):
            raise ResultsError(f"{file}: no '{part}' at '{path}'; fix the block or the data") \
                from None
    return cur


def block_value(root, path, key, fmt="g"):
    """One value, e.g. <!-- results: value f.json runs.[name=a].ratio .2f -->1.23<!-- /results -->"""
    return format(_path(_load(root, path), key, path), fmt)


def block_table(root, path, key, *columns):
    """A list of records as a Markdown table; columns are KEY or KEY:FMT (default: all keys)."""
    rows = _path(_load(root, path), key, path)
    if not isinstance(rows, list) or not rows or not isinstance(rows[0], dict):
        raise ResultsError(f"{path}: '{key}' is not a list of records")
    cols = [c.partition(":") for c in columns] or [(k, "", "") for k in rows[0]]
    lines = ["| " + " | ".join(c for c, _, _ in cols) + " |",
             "|" + "---|" * len(cols)]
    for r in rows:
        lines.append("| " + " | ".join(
            "-" if r.get(c) is None else (format(r[c], f) if f else str(r[c]))
            for c, _, f in cols) + " |")
    return "\n".join(lines) + "\n"


def block_cxx_bench(root, path):
    """bench/cxx/run.py's table: the three builds and the PM goal's verdict."""
    d = _load(root, path)
    lines = ["| workload | volatile s | cairn-c++ DRAM s | ratio (min-max) | cairn-c++ PM s "
             "| ratio (min-max) | PM <= %gx |" % d["goal"], "|---|---:|---:|---:|---:|---:|---|"]
    for r in d["rows"]:
        lines.append(
            f"| {r['workload']} | {r['volatile s']:.4f} | {r['cairn-c++ DRAM s']:.4f} "
            f"| {r['cairn-c++ DRAM ratio']:.2f}x ({r['cairn-c++ DRAM min']:.2f}-"
            f"{r['cairn-c++ DRAM max']:.2f}) | {r['cairn-c++ PM s']:.4f} "
            f"| {r['cairn-c++ PM ratio']:.2f}x ({r['cairn-c++ PM min']:.2f}-"
            f"{r['cairn-c++ PM max']:.2f}) | "
            f"{verdict(r['cairn-c++ PM min'], r['cairn-c++ PM max'], d['goal'], 'lower')} |")
    lines += ["", f"PM against volatile, geometric mean of the medians: "
              f"{d['pm_ratio_geomean']:.2f}x (goal <= {d['goal']:g}x: "
              f"{'met' if d['pm_ratio_geomean'] <= d['goal'] else 'NOT met'}); the port changes "
              f"{d['changed_lines']} code lines (+) and {d['removed_lines']} (-) of the original."]
    return "\n".join(lines) + "\n"


def _ycsb(name):
    def block(root, *args):
        from cairn import ycsb
        return getattr(ycsb, name)(root, *args)
    return block


BLOCKS = {
    "cxx-bench": block_cxx_bench,
    "ycsb-goals": _ycsb("block_goals"),
    "ycsb-ratios": _ycsb("block_ratios"),
    "ycsb-lines": _ycsb("block_lines"),
    "ycsb-findings": _ycsb("block_findings"),
    "value": block_value,
    "table": block_table,
    "provenance": block_provenance,
    "runtime": block_runtime,
    "runtime-findings": block_runtime_findings,
    "ccbench": block_ccbench,
    "ccbench-goals": block_ccbench_goals,
    "ccbench-counts": block_ccbench_counts,
}


def register(name, fn):
    """Add a block kind (used by modules that own a benchmark's JSON)."""
    BLOCKS[name] = fn


def render_block(root, spec):
    words = spec.split()
    if not words or words[0] not in BLOCKS:
        raise ResultsError(f"unknown results block '{spec}': known kinds are "
                           + ", ".join(sorted(BLOCKS)))
    return BLOCKS[words[0]](root, *words[1:])


def regenerate(text, root):
    """(new text, [specs of blocks whose text changed])"""
    changed = []

    def sub(m):
        body = render_block(root, m.group("spec"))
        if not m.group("nl"):            # an inline block: one value inside a sentence
            body = body.rstrip("\n")
        if body != m.group("body"):
            changed.append(m.group("spec"))
        return f"<!-- results: {m.group('spec')} -->{m.group('nl')}{body}<!-- /results -->"
    return BLOCK.sub(sub, text), changed


MEASURED = re.compile(
    r"(?<![\w.<>=≤≥-])(?<![<>]= )(?<!goal )(?<!goal: )"
    r"\d[\d,]*(?:\.\d+)?(?:-\d[\d,]*(?:\.\d+)?)?"
    r"(?:x\b|\s?%|\s?(?:ns|us|µs|ms|s|kops/s|instructions)\b)")


def lint(text):
    """Hand-written measured quantities outside generated blocks and code:
    [(line number, the line)]."""
    bad = []
    spans = [(m.start(), m.end()) for m in BLOCK.finditer(text)]
    pos = 0
    fence = False
    for no, line in enumerate(text.splitlines(keepends=True), 1):
        start, pos = pos, pos + len(line)
        if line.lstrip().startswith("```"):
            fence = not fence
            continue
        if fence or line.startswith("    ") or line.startswith("\t"):
            continue
        if any(a <= start < b for a, b in spans):
            continue
        prose = re.sub(r"`[^`]*`", "", line)
        if MEASURED.search(prose):
            bad.append((no, line.rstrip("\n")))
    return bad


def _root():
    """the source tree: this module's checkout (python/cairn/results.py)"""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    p = argparse.ArgumentParser(prog="scripts/results.py", description="Regenerate (--write) or check the measured numbers in docs/RESULTS.md.")
    p.add_argument("--write", action="store_true", help="rewrite the generated blocks")
    p.add_argument("--doc", default=os.path.join(_root(), "docs", "RESULTS.md"),
                   help="the document (default: docs/RESULTS.md)")
    args = p.parse_args()
    try:
        with open(args.doc) as f:
            text = f.read()
    except OSError as e:
        sys.exit(f"results: cannot read {args.doc}: {e.strerror}")
    try:
        new, changed = regenerate(text, _root())
    except ResultsError as e:
        sys.exit(f"results: {e}")
    problems = 0
    if args.write:
        if changed:
            with open(args.doc, "w") as f:
                f.write(new)
        print(f"results: {len(changed)} block(s) rewritten")
    else:
        for spec in changed:
            print(f"results: block '{spec}' differs from its data; run scripts/results.py --write")
            problems += 1
    for no, line in lint(new):
        print(f"{os.path.relpath(args.doc, _root())}:{no}: a measured figure written by hand "
              f"(put it in a generated block): {line.strip()[:120]}")
        problems += 1
    sys.exit(1 if problems else 0)



if __name__ == "__main__":
    main()
