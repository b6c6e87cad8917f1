#!/usr/bin/env python3
"""cairn crashcheck's measured numbers, written as JSON for docs/RESULTS.md.

    CAIRN_BUILD=build bench/crashcheck/run.py --json bench/crashcheck/results/crashcheck.json

1. States per second, side by side in one run, on one trace
   (tests/crashcheck/many_lines.c, --lines lines flushed together: 2^lines
   states at one fence): cairn-crashcheck's built-in check (run in its
   checker process on one kept mapping, docs/crashcheck.md "Speed") against
   the process-per-state approach of tests/unit/crashsim.h (the image
   written whole and a checker spawned per state: --check 'cairn-pool check
   {pool}'), alternating, --rounds rounds. CPU seconds are the run's and its
   children's (getrusage), steadier than the wall clock on a shared machine.
2. States per workload, with the CPU seconds of the whole run (the
   program's traced run and cairn-crashcheck) and of cairn-crashcheck alone
   (its states per CPU second: the checker's speed, the median of --rounds
   runs on one trace, with a met / NOT met / not shown verdict against the
   goal over the rounds): the kvstore example, two cairn-cc --trace compiler
   test programs, the runtime's own loop (cairn-trace-cost), many_lines,
   unlinked_lines (a fence whose lines nothing reads: pruned); with how many
   crash points were explored exhaustively and how many were pruned. With
   --baseline BIN (a cairn-crashcheck built from the code before a change)
   the checker step of each workload also runs with BIN, alternating, on
   the same trace, and the two must agree on every count (before/after).
3. The seeded bug corpus: failed states of each bug and of its twin.
"""
import argparse
import datetime
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("CAIRN_BUILD", ROOT / "build")).resolve()
TOOL = BUILD / "runtime" / "cairn-crashcheck"
GOAL_STATES_PER_S = 10000
sys.path.insert(0, str(ROOT / "tests" / "crashcheck"))


def cpu_of_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def cc(src, out, *flags, compiler="cc"):
    cmd = ([str(BUILD / "compiler" / "cairn-cc"), "--trace"] if compiler == "cairn-cc" else ["cc"])
    cmd += ["-O1", "-g", *flags, f"-I{ROOT / 'include'}", str(src), "-o", str(out)]
    if compiler == "cc":
        cmd += [f"-L{BUILD / 'runtime'}", "-lcairn", f"-Wl,-rpath,{BUILD / 'runtime'}"]
    subprocess.run(cmd, check=True)
    return out


def trace_run(work, prog_args):
    """The first step of `cairn crashcheck` on PROG ARGS: the program run
    with tracing on. Its trace and images directory, and its CPU seconds"""
    pool = Path(work) / "p.pool"
    if pool.exists():
        pool.unlink()
    tr, img = Path(work) / "w.trace", Path(work) / "w.images"
    if tr.exists():
        tr.unlink()
    subprocess.run(["rm", "-rf", str(img)], check=True)
    img.mkdir()
    env = dict(os.environ, CAIRN_BUILD=str(BUILD), CAIRN_PMEM_FORCE="1", CAIRN_UNLOGGED="off")
    args = [str(a).replace("POOL", str(pool)) for a in prog_args]
    c0 = cpu_of_children()
    subprocess.run(args, env=dict(env, CAIRN_TRACE=str(tr), CAIRN_TRACE_IMAGES=str(img)),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cpu = cpu_of_children() - c0
    if pool.exists():
        pool.unlink()
    return tr, img, cpu


def check_run(work, tool, tr, img, *opts):
    """The second step: cairn-crashcheck (tool) on the trace, with the same
    defaults as `cairn crashcheck`. Its JSON summary and CPU seconds"""
    pool, out = Path(work) / "p.pool", Path(work) / "r.json"
    env = dict(os.environ, CAIRN_BUILD=str(BUILD), CAIRN_PMEM_FORCE="1", CAIRN_UNLOGGED="off")
    opts = [str(o).replace("POOL", str(pool)) for o in opts]
    c0 = cpu_of_children()
    subprocess.run([str(tool), "--quiet", "--json", str(out), *opts, str(tr), str(img)], env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cpu = cpu_of_children() - c0
    if pool.exists():
        pool.unlink()
    return json.loads(out.read_text()), cpu


def crashcheck(work, prog_args, *opts):
    """`cairn crashcheck` on PROG ARGS, in its two steps: its JSON summary,
    the CPU seconds of both steps and those of cairn-crashcheck alone"""
    tr, img, prog_cpu = trace_run(work, prog_args)
    j, cpu = check_run(work, TOOL, tr, img, *opts)
    return j, prog_cpu + cpu, cpu


def verdict(rates):
    lo, hi = min(rates), max(rates)
    return "met" if lo >= GOAL_STATES_PER_S else "NOT met" if hi < GOAL_STATES_PER_S else "not shown"


def side_by_side(work, lines, rounds):
    prog = cc(ROOT / "tests" / "crashcheck" / "many_lines.c", Path(work) / "many", f"-DLINES={lines}")
    tr, img = Path(work) / "t", Path(work) / "img"
    img.mkdir()
    env = dict(os.environ, CAIRN_PMEM_FORCE="1", CAIRN_TRACE=str(tr), CAIRN_TRACE_IMAGES=str(img))
    subprocess.run([str(prog), "run", str(Path(work) / "bench.pool")], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    os.unlink(Path(work) / "bench.pool")
    methods = [("built-in check in the checker", []),
               ("process per state", ["--check", f"{BUILD / 'runtime' / 'cairn-pool'} check {{pool}} >/dev/null"])]
    rows = []
    for r in range(1, rounds + 1):
        for name, extra in methods:
            out = Path(work) / "s.json"
            c0 = cpu_of_children()
            subprocess.run([str(TOOL), "--quiet", "--nested-every", "0", "--json", str(out), *extra,
                            str(tr), str(img)], check=True, stdout=subprocess.DEVNULL)
            cpu = cpu_of_children() - c0
            j = json.loads(out.read_text())
            rows.append({"round": r, "method": name, "states": j["states"],
                         "states_per_second": j["states_per_second"], "cpu_s": cpu,
                         "cpu_ms_per_state": 1e3 * cpu / j["states"],
                         "cpu_states_per_second": j["states"] / cpu})
    pairs = [(a, b) for a in rows for b in rows
             if a["round"] == b["round"] and a["method"] == methods[0][0] and b["method"] == methods[1][0]]
    cpu_ratios = [b["cpu_ms_per_state"] / a["cpu_ms_per_state"] for a, b in pairs]
    wall_ratios = [a["states_per_second"] / b["states_per_second"] for a, b in pairs]
    forked = [a["cpu_states_per_second"] for a, _ in pairs]
    lo, hi = min(forked), max(forked)
    verdict = "met" if lo >= GOAL_STATES_PER_S else "NOT met" if hi < GOAL_STATES_PER_S else "not shown"
    return rows, {"cpu_ratio_median": statistics.median(cpu_ratios), "cpu_ratio_min": min(cpu_ratios),
                  "cpu_ratio_max": max(cpu_ratios), "wall_ratio_min": min(wall_ratios),
                  "wall_ratio_max": max(wall_ratios), "forked_cpu_states_per_s_min": lo,
                  "forked_cpu_states_per_s_max": hi, "goal_states_per_s": GOAL_STATES_PER_S,
                  "goal_verdict": verdict}


def workloads(work, rounds, baseline):
    kv = BUILD / "examples" / "kvstore"
    progs = ROOT / "tests" / "compiler" / "programs"
    lst = cc(progs / "list.c", Path(work) / "list", "-O2", compiler="cairn-cc")
    txc = cc(progs / "tx_cycle.c", Path(work) / "tx_cycle", "-O2", compiler="cairn-cc")
    many = cc(ROOT / "tests" / "crashcheck" / "many_lines.c", Path(work) / "many12", "-DLINES=12")
    unl = cc(ROOT / "tests" / "crashcheck" / "unlinked_lines.c", Path(work) / "unlinked")
    runs = [
        ("kvstore example, 30 operations (64 MiB pool)", [kv, "run", "POOL", "30"], []),
        ("kvstore example, 5 operations, its verify as the check", [kv, "run", "POOL", "5"],
         ["--check", f"{kv} verify {{pool}}"]),
        ("list.c, cairn-cc --trace -O2 (stores traced)", [lst, "POOL", "0"], []),
        ("tx_cycle.c, cairn-cc --trace -O2", [txc, "POOL"], []),
        ("cairn-trace-cost, 6 iterations (the runtime's own loop)",
         [BUILD / "bench" / "cairn-trace-cost", "POOL", "6"], []),
        ("many_lines.c, 12 lines at one fence", [many, "run", "POOL"], ["--nested-every", "0"]),
        ("unlinked_lines.c, 16 unread lines at one fence, its check", [unl, "run", "POOL"],
         ["--check", f"{unl} check {{pool}}"]),
    ]
    out = []
    for name, args, opts in runs:
        tr, img, prog_cpu = trace_run(work, args)
        if baseline:
            # the images as the runtime before this change wrote them: whole
            dense = Path(work) / "w.dense"
            subprocess.run(["rm", "-rf", str(dense)], check=True)
            subprocess.run(["cp", "-r", "--sparse=never", str(img), str(dense)], check=True)
        after, before = [], []
        for _ in range(rounds):                  # alternating, this build first
            j, cpu = check_run(work, TOOL, tr, img, *opts)
            after.append(cpu)
            if baseline:
                b, bcpu = check_run(work, baseline, tr, dense, *opts)
                before.append(bcpu)
                same = {k: (b[k], j[k]) for k in ("crash_points", "states", "failed", "duplicates")
                        if b[k] != j[k]}
                if same:
                    sys.exit(f"bench/crashcheck/run.py: {name}: {baseline} and {TOOL} disagree: {same}")
        checker_cpu = statistics.median(after)
        row = {"workload": name, "crash_points": j["crash_points"], "states": j["states"],
               "duplicates": j["duplicates"], "skipped": j["skipped"], "failed": j["failed"],
               "exhaustive_points": j["exhaustive_points"], "pruned_points": j["pruned_points"],
               "max_lines_in_play": j["max_lines_in_play"], "cpu_s": prog_cpu + checker_cpu,
               "checker_cpu_s": checker_cpu, "checker_cpu_s_rounds": after,
               "states_per_second": j["states_per_second"],
               "checker_cpu_states_per_second": j["states"] / checker_cpu if checker_cpu > 0 else None,
               "checker_cpu_states_per_second_min": j["states"] / max(after),
               "checker_cpu_states_per_second_max": j["states"] / max(min(after), 1e-9),
               "goal_verdict": verdict([j["states"] / max(c, 1e-9) for c in after]),
               "failure_statuses": sorted({f["status"] for f in j["failures"]})}
        if baseline:
            bcpu = statistics.median(before)
            ratios = [b / a for a, b in zip(after, before) if a > 0]
            row.update({"before_checker_cpu_s": bcpu, "before_checker_cpu_s_rounds": before,
                        "before_checker_cpu_states_per_second": j["states"] / bcpu if bcpu > 0 else None,
                        "cpu_ratio_min": min(ratios), "cpu_ratio_max": max(ratios)})
        out.append(row)
    return out


def corpus(work):
    from test_corpus import CORPUS
    out = []
    for name, compiler in sorted(CORPUS.items()):
        row = {"program": name, "compiler": "cairn-cc --trace" if compiler == "cairn-cc" else "cc"}
        for variant, flags in (("bug", ["-DBUG"]), ("twin", [])):
            prog = cc(ROOT / "tests" / "crashcheck" / f"{name}.c", Path(work) / f"{name}_{variant}",
                      *flags, compiler=compiler)
            j, _, _ = crashcheck(work, [prog, "run", "POOL"], "--check", f"{prog} check {{pool}}")
            row[f"{variant}_states"] = j["states"]
            row[f"{variant}_failed"] = j["failed"]
        out.append(row)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", required=True, help="where to write the results")
    p.add_argument("--lines", type=int, default=10)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--baseline", type=Path,
                   help="a cairn-crashcheck built from the code before a change: each workload's "
                        "checker step runs with it and with this build, alternating, --rounds times "
                        "(it gets the trace images whole, as the runtime before wrote them)")
    args = p.parse_args()
    if not TOOL.exists():
        sys.exit(f"bench/crashcheck/run.py: {TOOL} is not built; run scripts/build.sh")
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    dirty = bool(subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "runtime"],
                                capture_output=True, text=True).stdout.strip())
    base = "/dev/shm" if os.path.isdir("/dev/shm") else None
    with tempfile.TemporaryDirectory(prefix="cairn-cc-bench-", dir=base) as work:
        rows, summary = side_by_side(work, args.lines, args.rounds)
        wl = workloads(work, args.rounds, args.baseline)
        cp = corpus(work)
    result = {"command": "bench/crashcheck/run.py " + " ".join(sys.argv[1:]), "started": started,
              "source": {"commit": commit, "runtime_dirty": dirty},
              "config": {"lines": args.lines, "rounds": args.rounds,
                         "baseline": str(args.baseline) if args.baseline else None,
                         "load_average": os.getloadavg()[0], "cpus": os.cpu_count()},
              "side_by_side": rows, "summary": summary, "workloads": wl, "corpus": cp}
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
