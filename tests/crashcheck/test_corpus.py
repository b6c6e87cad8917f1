"""`cairn crashcheck` on the seeded bug corpus (README.md here): every bug
caught (exit 1), every correct twin clean (exit 0); a bug planted in the
runtime's inline clwb fast path caught; the kvstore example clean; and the
set-up errors that exit 2."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from planted import planted_runtime

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
BUILD = Path(os.environ.get("CAIRN_BUILD", ROOT / "build")).resolve()
CAIRN_CC = BUILD / "compiler" / "cairn-cc"
LIBDIR = BUILD / "runtime"

# name: compiler ("cc": untraced stores, lines found by comparing memory;
# "cairn-cc": built with --trace, every store traced)
CORPUS = {
    "flag_before_data": "cc",
    "never_flushed": "cc",
    "store_after_flush": "cc",
    "commit_across_lines": "cc",
    "fence_between_flushes": "cc",
    "short_flush": "cc",
    "unsnapshotted_field": "cc",
    "snapshot_after_store": "cc",
    "line_order": "cairn-cc",
    "torn_store": "cairn-cc",
    "commit_one_line": "cairn-cc",
    "nt_store_no_fence": "cc",
    "publish_before_init": "cc",
    "flush_wrong_line": "cc",
    "memcpy_short": "cc",
    "counter_in_place": "cc",
    "alloc_leak": "cc",
    "recovery_not_idempotent": "cc",
    "unflushed_length": "cc",
    "record_per_word": "cc",
    "list_link_before_next": "cc",
    "ring_order": "cc",
    "ack_before_durable": "cc",
    "valid_bit_16": "cairn-cc",
    "clobber_needs_undo": "cc",
    "log_retired_before_data": "cc",
}


def need(path):
    if not path.exists():
        pytest.skip(f"{path} is not built (scripts/build.sh)")


def build(name, bug, out_dir, libcairn=None):
    src = HERE / f"{name}.c"
    out = out_dir / f"{name}_{'bug' if bug else 'twin'}"
    if CORPUS.get(name) == "cairn-cc":
        need(CAIRN_CC)
        cmd = [str(CAIRN_CC), "--trace"]
    else:
        cmd = ["cc"]
    cmd += ["-O1", "-g", "-Wall", "-Wextra", "-Werror", f"-I{ROOT / 'include'}", str(src),
            "-o", str(out)]
    if bug:
        cmd.insert(1, "-DBUG")
    if libcairn:
        cmd += [str(libcairn), "-lpthread", "-ldl"]
    elif cmd[0] == "cc":
        cmd += [f"-L{LIBDIR}", "-lcairn", f"-Wl,-rpath,{LIBDIR}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return out


def crashcheck(*argv, pool=None, pmem_force="1"):
    need(LIBDIR / "cairn-crashcheck")
    env = dict(os.environ, CAIRN_BUILD=str(BUILD), CAIRN_PMEM_FORCE=pmem_force,
               CAIRN_UNLOGGED="off")
    if pool and pool.exists():
        pool.unlink()
    r = subprocess.run([sys.executable, "-m", "cairn", "crashcheck", *map(str, argv)],
                       capture_output=True, text=True, env=env, cwd=ROOT / "python",
                       timeout=600)
    if pool and pool.exists():
        pool.unlink()
    return r


@pytest.fixture
def pool(tmp_path):
    base = Path("/dev/shm") if Path("/dev/shm").is_dir() else tmp_path
    return base / f"cairn-crashcheck-test-{os.getpid()}-{tmp_path.name}.pool"


def summary(out):
    last = out.strip().splitlines()[-1]
    assert last.startswith("crashcheck: "), out
    fields = dict((w[1], int(w[0])) for w in
                  (p.split()[:2] for p in last[len("crashcheck: "):].split(", ")) if w[0].isdigit())
    return fields


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_bug_caught_twin_clean(name, tmp_path, pool):
    for bug in (True, False):
        prog = build(name, bug, tmp_path)
        r = crashcheck("--quiet", "--check", f"{prog} check {{pool}}", "--", prog, "run", pool,
                       pool=pool)
        s = summary(r.stdout)
        if bug:
            assert r.returncode == 1 and s["failed"] > 0, r.stdout + r.stderr
            assert "FAILED" in r.stderr and "crash point" in r.stderr
        else:
            assert r.returncode == 0 and s["failed"] == 0, r.stdout + r.stderr[-4000:]
        assert s["states"] > 0


def test_planted_fast_path_clwb_caught(tmp_path, pool):
    """persist.h's inline clwb aimed at the next line (CAIRN_PLANT_CLWB_NEXT_LINE):
    the fast path runs under tracing too, so the trace shows the wrong line."""
    if "clwb" not in Path("/proc/cpuinfo").read_text():
        pytest.skip("this CPU has no clwb: the inline clwb path does not run")
    lib = planted_runtime(tmp_path, "CAIRN_PLANT_CLWB_NEXT_LINE")
    for planted in (True, False):
        prog = build("commit_across_lines", False, tmp_path, libcairn=lib if planted else None)
        r = crashcheck("--quiet", "--check", f"{prog} check {{pool}}", "--", prog, "run", pool,
                       pool=pool)
        assert r.returncode == (1 if planted else 0), r.stdout + r.stderr[-3000:]


def test_kvstore_example_clean(tmp_path, pool):
    kv = BUILD / "examples" / "kvstore"
    need(kv)
    out = tmp_path / "kv.json"
    r = crashcheck("--quiet", "--json", out, "--nested-every", "8", "--", kv, "run", pool, "12",
                   pool=pool)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    j = json.loads(out.read_text())
    assert j["failed"] == 0 and j["states"] > 50 and j["crash_points"] > 20
    # and with the example's own verifier as the check
    r = crashcheck("--quiet", "--check", f"{kv} verify {{pool}}", "--", kv, "run", pool, "3",
                   pool=pool)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]


def test_same_seed_same_states(tmp_path, pool):
    prog = build("flag_before_data", True, tmp_path)
    outs = []
    for _ in range(2):
        out = tmp_path / "r.json"
        r = crashcheck("--quiet", "--max-states", "2", "--seed", "7", "--json", out, "--check",
                       f"{prog} check {{pool}}", "--", prog, "run", pool, pool=pool)
        assert r.returncode == 1
        j = json.loads(out.read_text())
        outs.append([(f["point"], f["state"]) for f in j["failures"]])
    assert outs[0] == outs[1] and outs[0]


def test_setup_errors_exit_2(tmp_path, pool):
    r = crashcheck("--", tmp_path / "no-such-program")
    assert r.returncode == 2 and "no such program" in r.stderr
    r = crashcheck("--", "true")
    assert r.returncode == 2 and ("no trace" in r.stderr or "no pool" in r.stderr), r.stderr
    prog = build("flag_before_data", False, tmp_path)
    r = crashcheck("--check", "false", "--", prog, "run", pool, pool=pool)
    assert r.returncode == 2 and "before any crash" in r.stderr, r.stderr
    r = crashcheck()
    assert r.returncode == 2


@pytest.mark.parametrize("name,args", [("list", ["0"]), ("tx_cycle", [])])
def test_compiler_programs_clean(name, args, tmp_path, pool):
    """cairn-cc --trace programs of the compiler's tests: recovery plus the
    pool check pass in every crash state (stores exact per store)."""
    need(CAIRN_CC)
    prog = tmp_path / name
    r = subprocess.run([str(CAIRN_CC), "--trace", "-O2", "-g",
                        str(ROOT / "tests" / "compiler" / "programs" / f"{name}.c"), "-o", str(prog)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "r.json"
    r = crashcheck("--quiet", "--json", out, "--nested-every", "4", "--", prog, pool, *args,
                   pool=pool)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    j = json.loads(out.read_text())
    assert j["failed"] == 0 and j["stores_traced"] and j["states"] >= 10


def test_every_combination_when_small(tmp_path, pool):
    """many_lines.c: 6 lines flushed together, one fence: all 2^6 states of
    that fence are built (exhaustive), and none fails."""
    prog = tmp_path / "many6"
    r = subprocess.run(["cc", "-O1", "-DLINES=6", f"-I{ROOT / 'include'}", str(HERE / "many_lines.c"),
                        "-o", str(prog), f"-L{LIBDIR}", "-lcairn", f"-Wl,-rpath,{LIBDIR}"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "r.json"
    r = crashcheck("--quiet", "--json", out, "--nested-every", "0", "--", prog, "run", pool,
                   pool=pool)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    j = json.loads(out.read_text())
    assert j["states"] >= 64 and j["skipped"] == 0 and j["max_lines_in_play"] >= 6
    r = crashcheck("--quiet", "--json", out, "--max-states", "10", "--nested-every", "0", "--",
                   prog, "run", pool, pool=pool)
    j = json.loads(out.read_text())
    assert r.returncode == 0 and j["skipped"] > 0


@pytest.mark.parametrize("domain", ["user flushes", "msync"])
def test_runtime_workload_clean(domain, tmp_path, pool):
    """The runtime's own work, every fence: cairn-trace-cost's loop of
    8-byte transactions and atomic 64-byte allocations and frees (pool
    create and close included), recovery + pool check in every state and a
    crash inside recovery every 4th state; with user-space flushes and in the
    msync domain (CAIRN_PMEM_FORCE=0: flushes are msyncs at each fence)."""
    prog = BUILD / "bench" / "cairn-trace-cost"
    need(prog)
    out = tmp_path / "r.json"
    r = crashcheck("--quiet", "--json", out, "--nested-every", "4", "--", prog, pool, "6",
                   pool=pool, pmem_force="1" if domain == "user flushes" else "0")
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    j = json.loads(out.read_text())
    assert j["failed"] == 0 and j["crash_points"] >= 30 and j["states"] >= 15
