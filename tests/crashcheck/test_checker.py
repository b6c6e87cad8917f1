"""The built-in check runs inside cairn-crashcheck's checker process, with
no fork per state (docs/crashcheck.md, "Speed"). A state whose check kills
the checker must still be a failed state, checked again in a forked child,
not a lost run."""
import json
import os

import pytest

from test_corpus import BUILD, build, crashcheck, need, pool  # noqa: F401 (pool is a fixture)


# mid: abort (SIGABRT); segv: a write to an unmapped address, which the
# checker's write-fault handler (it makes the image's pages writable as the
# check writes them) must pass on as the crash it is
@pytest.mark.parametrize("seam,signal", [("mid", 6), ("segv", 11)])
def test_check_that_dies_is_a_failed_state(tmp_path, pool, monkeypatch, seam, signal):  # noqa: F811
    prog = BUILD / "bench" / "cairn-trace-cost"
    need(prog)
    # recovery's test seam: abort half-way through rolling back a lane, so
    # every state with an unfinished transaction kills the check
    monkeypatch.setitem(os.environ, "CAIRN_TEST_CRASH_RECOVERY", seam)
    out = tmp_path / "r.json"
    r = crashcheck("--json", out, "--nested-every", "0", "--", prog, pool, "3", pool=pool)
    assert r.returncode == 1, r.stdout + r.stderr[-3000:]
    j = json.loads(out.read_text())
    assert 0 < j["failed"] < j["states"], j
    assert f"check died with signal {signal}" in r.stderr
    assert "test crash in the middle of rolling back" in r.stderr


def test_frames_resolved_once_per_run(tmp_path, pool, monkeypatch):  # noqa: F811
    """A failed state's report names where its fence was issued, resolving
    each return address of the call chain with addr2line. Failed states
    share frames (the program's main, libc's start): each address is
    resolved once in the run, not once per report."""
    prog = build("flag_before_data", True, tmp_path)
    shim, log = tmp_path / "shim", tmp_path / "addr2line.log"
    shim.mkdir()
    (shim / "addr2line").write_text('#!/bin/sh\necho "$@" >> "$ADDR2LINE_LOG"\n'
                                    'exec /usr/bin/addr2line "$@"\n')
    (shim / "addr2line").chmod(0o755)
    monkeypatch.setitem(os.environ, "PATH", f"{shim}:{os.environ['PATH']}")
    monkeypatch.setitem(os.environ, "ADDR2LINE_LOG", str(log))
    r = crashcheck("--check", f"{prog} check {{pool}}", "--", prog, "run", pool, pool=pool)
    assert r.returncode == 1, r.stdout + r.stderr[-3000:]
    assert r.stderr.count("crashcheck: FAILED") >= 2, r.stderr[-3000:]
    assert "fence issued at " in r.stderr and "flag_before_data.c:" in r.stderr, r.stderr[-3000:]
    calls = log.read_text().splitlines()
    assert calls and len(calls) == len(set(calls)), calls


def test_kept_lane_scans_give_the_verdicts_of_fresh_ones(tmp_path, pool, monkeypatch):  # noqa: F811
    """The check in place keeps a lane's scan until a write to the media
    touches that lane, including the lines the model makes durable between
    crash points. With recovery aborting whenever it rolls a lane back,
    every state whose lanes hold a transaction fails: the failed states
    must be exactly those of a run that scans every lane for every state."""
    prog = BUILD / "bench" / "cairn-trace-cost"
    need(prog)
    monkeypatch.setitem(os.environ, "CAIRN_TEST_CRASH_RECOVERY", "mid")
    runs = {}
    for rescan in (False, True):
        if rescan:
            monkeypatch.setitem(os.environ, "CAIRN_TEST_RESCAN_LANES", "1")
        out = tmp_path / f"r{int(rescan)}.json"
        r = crashcheck("--json", out, "--nested-every", "0", "--", prog, pool, "6", pool=pool)
        assert r.returncode == 1, r.stdout + r.stderr[-3000:]
        j = json.loads(out.read_text())
        runs[rescan] = (j["states"], sorted((f["point"], f["state"]) for f in j["failures"]))
    assert runs[False] == runs[True]
    assert 0 < len(runs[True][1]) < runs[True][0], runs[True]
