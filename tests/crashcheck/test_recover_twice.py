"""Power loss inside recovery, twice (twice.py): every distinct crash image
of the recover job's traced roll-back that needs recovery is recovered
again under the trace, and every crash state of that second recovery (and
of the commit and close after it) is recovered a third time and checked.
Zero failing states with the shipped runtime; a runtime whose recovery
drops a fence fails in the second recovery alone (the first level's images
come from the shipped runtime)."""
import os
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import rtjobs
import test_mutants
import twice


@pytest.fixture(scope="module")
def work():
    base = "/dev/shm" if os.path.isdir("/dev/shm") else None
    with tempfile.TemporaryDirectory(prefix="cairn-twice-", dir=base) as w:
        yield Path(w)


@pytest.fixture(scope="module")
def prog(work):
    lib = rtjobs.BUILD / "runtime" / "libcairn.a"
    if not (rtjobs.BUILD / "runtime" / "cairn-crashcheck").exists() or not lib.exists():
        pytest.skip("the runtime is not built (scripts/build.sh)")
    return rtjobs.build(lib, work / "rt_jobs")


@pytest.fixture(scope="module")
def first(prog, work):
    return twice.first_level(prog, work)


def test_first_recovery_leaves_states_part_done(first):
    """the images to recover again include states a power loss left inside
    the first recovery: one lane rolled back and retired beside two still
    open (2 open transactions), the untouched crashed pool (3), and
    every lane retired (0)"""
    assert first["failed"] == 0 and first["exhaustive_points"] == first["crash_points"], first
    open_tx = [o for _, _, o in first["images"]]
    assert len(first["images"]) == first["distinct"] - first["clean"]
    assert 3 in open_tx and 2 in open_tx and 0 in open_tx, open_tx


def test_second_recovery_crashed_on_every_state(prog, first, work):
    res = twice.second_level(prog, first["images"], work)
    print(f"recover twice: {len(first['images'])} images of {first['states']} states of the first "
          f"recovery, {res['runs']} second-level runs: {res['crash_points']} crash points, "
          f"{res['states']} states checked, {res['failed']} failed")
    bad = [r for r in res["rows"] if r["returncode"] != 0 or not r["ran_to_end"]]
    assert not bad, "\n".join(f"{r['image']} (base {r['base']}):\n{r['output']}" for r in bad[:3])
    assert res["runs"] == len(first["images"]) and res["failed"] == 0
    assert all(r["result"]["states"] > 0 for r in res["rows"])
    assert res["exhaustive_points"] == res["crash_points"], "a second-level crash point was sampled"


def test_check_holds_the_first_runs_acknowledgments(prog, first, work):
    """the second run's check holds every state to the count the image's
    first-level states were acknowledged: the first image (nothing of the
    first recovery durable, nothing acknowledged) recovers to count 1, so
    one more fails already on the pool as reopen opened it (exit 2)"""
    img, base, _ = first["images"][0]
    assert base == 1
    ok = twice.second_run(prog, "ack-ok", img, base, work)
    assert ok["returncode"] == 0, ok["output"]
    r = twice.second_run(prog, "ack-more", img, base + 1, work)
    assert r["returncode"] == 2 and "count 1 but 2 commits were acknowledged" in r["output"], \
        r["output"]


def test_recovery_mutant_caught_in_the_second_recovery(first, work):
    """RECOVER_OFENCE (recovery retires a lane before its restored data is
    ordered) linked into the second run only, over the images the shipped
    first recovery left part done (one lane retired, two open):
    crashcheck fails a state of the second recovery"""
    m = next(m for m in test_mutants.MUTANTS if m["name"] == "RECOVER_OFENCE")
    out = work / "mutant"
    (out / "base").mkdir(parents=True)
    srcs = sorted(test_mutants.RUNTIME.glob("*.c"))
    with ThreadPoolExecutor(test_mutants.JOBS_AT_ONCE) as ex:
        objs = ex.map(lambda s: test_mutants.compile_obj(s, out / "base" / (s.stem + ".o")), srcs)
        base = dict(zip([s.stem for s in srcs], objs))
    prog = rtjobs.build(test_mutants.build_mutant(m, base, out), out / "rt_jobs")
    part_done = [i for i in first["images"] if i[2] == 2]
    res = twice.second_level(prog, part_done, out, run=test_mutants.until_first_failure,
                             stop_at_failure=True)
    failed = [r for r in res["rows"] if r["returncode"] == 1]
    assert failed, f"RECOVER_OFENCE survived {res['runs']} second recoveries"
    assert "crashcheck: FAILED:" in failed[0]["output"], failed[0]["output"]
