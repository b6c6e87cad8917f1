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


def test_recovery_crashed_twice(prog, tmp_path):
    """Power loss inside recovery, twice: crash images of the recover job's
    traced roll-back that a power loss left part done (a lane retired
    beside an unfinished one, or some restored lines lost) are saved by
    the check; crashcheck then
    runs `rt_jobs recover reopen` on each, so the second recovery is traced
    too and every crash state of it is recovered a third time and checked."""
    saved = tmp_path / "saved"
    saved.mkdir()
    pool = Path("/dev/shm") / f"cairn-rtjobs-{os.getpid()}-twice.pool"
    r = crashcheck(prog, "recover", pool,
                   ["--max-states", "16", "--check", f"cp {{pool}} {saved}/$$.img && {prog} recover check {{pool}}"])
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    # inside recovery: a rolled-back line still 0xdead, or a lane unfinished
    # beside a retired one; not the untouched image (3 lanes open, 5 lines
    # dead: t[0..2] and a[]'s two); those with lanes retired first
    dead = (0xdead).to_bytes(8, "little") * 8
    half, seen = [], set()
    for img in sorted(saved.iterdir()):
        data = img.read_bytes()
        info = subprocess.run([str(BUILD / "runtime" / "cairn-pool"), "--json", "info", str(img)],
                              capture_output=True, text=True)
        open_tx = json.loads(info.stdout).get("open_transactions", 0) if info.returncode == 0 else 0
        lines = data.count(dead)
        if data in seen or not open_tx or (open_tx == 3 and lines == 5) or not (lines or open_tx == 2):
            continue
        seen.add(data)
        half.append((open_tx, lines, img))
    half = [img for _, _, img in sorted(half)]
    assert half, "no crash state fell inside recovery with part of it done"
    env = dict(os.environ, CAIRN_BUILD=str(BUILD), CAIRN_PMEM_FORCE="1", CAIRN_UNLOGGED="off")
    for img in half[:3]:
        out = tmp_path / f"{img.stem}.json"
        r = subprocess.run([sys.executable, "-m", "cairn", "crashcheck", "--quiet", "--max-states", "16",
                            "--json", str(out), "--check", f"{prog} recover check {{pool}}", "--",
                            str(prog), "recover", "reopen", str(img)],
                           capture_output=True, text=True, env=env, cwd=ROOT / "python", timeout=600)
        assert r.returncode == 0, f"{img}:\n{r.stdout}{r.stderr[-3000:]}"
        res = json.loads(out.read_text())
        assert res["failed"] == 0 and res["crash_points"] >= 4, res
