"""The built-in check runs inside cairn-crashcheck's checker process, with
no fork per state (docs/crashcheck.md, "Speed"). A state whose check kills
the checker must still be a failed state, checked again in a forked child,
not a lost run."""
import json
import os

from test_corpus import BUILD, crashcheck, need, pool  # noqa: F401 (pool is a fixture)


def test_check_that_dies_is_a_failed_state(tmp_path, pool, monkeypatch):  # noqa: F811
    prog = BUILD / "bench" / "cairn-trace-cost"
    need(prog)
    # recovery's test seam: abort half-way through rolling back a lane, so
    # every state with an unfinished transaction kills the check
    monkeypatch.setitem(os.environ, "CAIRN_TEST_CRASH_RECOVERY", "mid")
    out = tmp_path / "r.json"
    r = crashcheck("--json", out, "--nested-every", "0", "--", prog, pool, "3", pool=pool)
    assert r.returncode == 1, r.stdout + r.stderr[-3000:]
    j = json.loads(out.read_text())
    assert 0 < j["failed"] < j["states"], j
    assert "check died with signal 6" in r.stderr
    assert "test crash in the middle of rolling back" in r.stderr
