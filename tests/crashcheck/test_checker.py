"""The built-in check runs inside cairn-crashcheck's checker process, with
no fork per state (docs/crashcheck.md, "Speed"). A state whose check kills
the checker must still be a failed state, checked again in a forked child,
not a lost run."""
import json
import os

import pytest

from test_corpus import BUILD, crashcheck, need, pool  # noqa: F401 (pool is a fixture)


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
