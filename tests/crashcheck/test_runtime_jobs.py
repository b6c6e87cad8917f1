"""cairn's own runtime under `cairn crashcheck`, job by job (rt_jobs.c):
commit, abort, nested levels, clobber, records over 4 KiB, atomic and
transactional allocation and free of every size class and large objects,
reused memory's zeroes, root creation, grow, close, two threads, the msync
domain, the background mark and sweep after a crash, recovery itself (a
crashed pool's roll-back of three lanes, traced), and a clean close that
returns an emptied run. Every crash state
at every fence must pass the job's check, which also asserts that what the
program was told (a commit returned, a grow, a close) survives the crash.
test_mutants.py shows each job catching at least one broken persistence site."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rtjobs import BUILD, JOBS, NOT_EXHAUSTIVE, ROOT, build, crashcheck


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    lib = BUILD / "runtime" / "libcairn.a"
    if not (BUILD / "runtime" / "cairn-crashcheck").exists() or not lib.exists():
        pytest.skip("the runtime is not built (scripts/build.sh)")
    return build(lib, tmp_path_factory.mktemp("rt") / "rt_jobs")


@pytest.fixture
def pool(tmp_path):
    base = Path("/dev/shm") if Path("/dev/shm").is_dir() else tmp_path
    return base / f"cairn-rtjobs-{os.getpid()}-{tmp_path.name}.pool"


@pytest.mark.parametrize("name", sorted(JOBS))
def test_job_has_no_failing_state(prog, name, pool, tmp_path):
    out = tmp_path / "r.json"
    r = crashcheck(prog, name, pool, ["--json", str(out)])
    assert r.returncode == 0, f"{name}:\n{r.stdout}{r.stderr[-4000:]}"
    # the job ran to its end (crashcheck checks what a failed program did up
    # to its failure, and says so in a note)
    assert "exited with status" not in r.stderr, f"{name}:\n{r.stderr[-4000:]}"
    res = json.loads(out.read_text())
    assert res["failed"] == 0 and res["states"] > 0, res
    sampled = res["crash_points"] - res["exhaustive_points"]
    print(f"{name}: exhaustive: yes at {res['exhaustive_points']} of {res['crash_points']} crash points")
    assert sampled <= NOT_EXHAUSTIVE.get(name, 0), \
        [p for p in res["points"] if not p["exhaustive"]]


def test_check_sees_an_unacknowledged_loss(prog, tmp_path):
    """the job's check itself: count behind the acknowledged commits fails"""
    pool = tmp_path / "p.pool"
    env = dict(os.environ, CAIRN_PMEM_FORCE="1")
    assert subprocess.run([str(prog), "commit", "run", str(pool)], env=env).returncode == 0
    ok = subprocess.run([str(prog), "commit", "check", str(pool)],
                        env=dict(env, CAIRN_CRASH_COMMITS="3"), capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout
    bad = subprocess.run([str(prog), "commit", "check", str(pool)],
                         env=dict(env, CAIRN_CRASH_COMMITS="4"), capture_output=True, text=True)
    assert bad.returncode == 1 and "acknowledged" in bad.stdout, bad.stdout


def test_recovery_runs_under_the_trace(prog, tmp_path):
    """the recover job's trace opens the pool before recovery writes: each of
    the three rolled-back lanes has its restored data flushed and fenced,
    then its generation flushed and fenced, all before the first transaction
    (so crashcheck's crash points fall inside recovery)"""
    pool, trace = tmp_path / "p.pool", tmp_path / "t.trace"
    env = dict(os.environ, CAIRN_PMEM_FORCE="1", CAIRN_TRACE=str(trace))
    assert subprocess.run([str(prog), "recover", "run", str(pool)], env=env).returncode == 0
    dump = subprocess.run([sys.executable, "-m", "cairn", "trace", "dump", str(trace)],
                          capture_output=True, text=True, cwd=ROOT / "python", check=True).stdout
    events = [ln.split()[2] for ln in dump.splitlines() if len(ln.split()) > 2]
    assert "pool_open" in events and "tx_begin" in events, dump[:2000]
    opened = events.index("pool_open")
    assert "how=recovered" in [ln for ln in dump.splitlines() if " pool_open " in ln][0]
    recovery = events[opened:events.index("tx_begin")]
    assert recovery.count("ofence") >= 3 and recovery.count("dfence") >= 3, recovery
    assert recovery.count("flush") >= 6, recovery

