"""The runtime's own jobs (rt_jobs.c) under `cairn crashcheck`: what
test_runtime_jobs.py runs with the shipped runtime (zero failures) and
test_mutants.py with each mutant (caught)."""
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
BUILD = Path(os.environ.get("CAIRN_BUILD", ROOT / "build")).resolve()

# job -> (crashcheck options, CAIRN_PMEM_FORCE). The job's own check
# (`rt_jobs JOB check {pool}`) asserts its invariant and that every
# acknowledged commit, grow and close stays; alloc and txalloc (every size
# class: many crash points) use the built-in check (recovery, the pool
# check, and every 8th state a crash inside recovery and a second
# recovery); publish the built-in check too (its table words against its
# links); bigrec's two fences with 66-67 lines in play are exhaustive through
# dead lines (docs/crashcheck.md); wbfree the built-in check with a nested
# recovery and clean close on every state (a leak counts only in a pool
# closed cleanly). NOT_EXHAUSTIVE: the crash points of a job that may stay
# sampled, and why.
JOBS = {
    "commit": ([], "1"),
    "commit_msync": ([], "0"),
    "bigrec": ([], "1"),
    "clobber": ([], "1"),
    "abort": ([], "1"),
    "nested": ([], "1"),
    "alloc": (["--nested-every", "8"], "1"),
    "txalloc": (["--nested-every", "8"], "1"),
    "zero": ([], "1"),
    "publish": ([], "1"),
    "root": ([], "1"),
    "grow": ([], "1"),
    "threads": ([], "1"),
    "gc": ([], "1"),
    "recover": ([], "1"),
    "wbfree": (["--nested-every", "1"], "1"),
}
NOT_EXHAUSTIVE = {
    # the close marks each run exact in the chunk table: 6 lines at one
    # fence, each table word flushed on its own (5-8 flushes a line), all
    # read by the check: 314,928 combinations
    "alloc": 1,
    "txalloc": 1,
}
BUILTIN_CHECK = {"alloc", "txalloc", "publish", "wbfree"}


def build(lib, out):
    """rt_jobs linked against the static runtime lib"""
    r = subprocess.run(["cc", "-O1", "-g", "-Wall", "-Wextra", "-Werror", "-std=gnu11",
                        f"-I{ROOT / 'include'}", str(HERE / "rt_jobs.c"), "-o", str(out), str(lib),
                        "-lpthread", "-ldl"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return out


def cairn_crashcheck(args, pmem="1", run=subprocess.run):
    """`cairn crashcheck --quiet ARGS` with the tree's build, the jobs'
    environment (pmem: CAIRN_PMEM_FORCE; the background mark and sweep);
    run: what runs the command (subprocess.run's arguments)"""
    env = dict(os.environ, CAIRN_BUILD=str(BUILD), CAIRN_PMEM_FORCE=pmem, CAIRN_UNLOGGED="off")
    env.pop("CAIRN_GC_SYNC", None)
    return run([sys.executable, "-m", "cairn", "crashcheck", "--quiet", *map(str, args)],
               capture_output=True, text=True, env=env, cwd=ROOT / "python", timeout=600)


def crashcheck(prog, name, pool, extra=(), run=subprocess.run):
    """`cairn crashcheck` of job `name` (a JOBS key) run by prog on pool,
    with the job's own check unless extra gives another --check"""
    opts, pmem = JOBS[name]
    job = name.split("_")[0]
    check = [] if job in BUILTIN_CHECK or "--check" in extra \
        else ["--check", f"{prog} {job} check {{pool}}"]
    if pool.exists():
        pool.unlink()
    try:
        return cairn_crashcheck([*opts, *check, *extra, "--", prog, job, "run", pool], pmem, run)
    finally:
        if pool.exists():
            pool.unlink()
