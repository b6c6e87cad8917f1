"""The corpus pair whose bug and twin differ in the compiler, not the code:
tx_compiler_logged.c built with cc (nothing logs the transaction's stores:
the bug, caught) and with cairn-cc --trace (the pass logs them: the twin,
clean)."""
import pytest
import test_corpus
from test_corpus import build, crashcheck, pool, summary  # noqa: F401 (pool: fixture)

NAME = "tx_compiler_logged"


@pytest.mark.parametrize("compiler", ["cc", "cairn-cc"])
def test_logging_by_compiler(compiler, tmp_path, pool, monkeypatch):  # noqa: F811
    monkeypatch.setitem(test_corpus.CORPUS, NAME, compiler)
    prog = build(NAME, compiler == "cc", tmp_path)
    r = crashcheck("--quiet", "--check", f"{prog} check {{pool}}", "--", prog, "run", pool,
                   pool=pool)
    s = summary(r.stdout)
    if compiler == "cc":
        assert r.returncode == 1 and s["failed"] > 0, r.stdout + r.stderr
        assert "FAILED" in r.stderr and "crash point" in r.stderr
    else:
        assert r.returncode == 0 and s["failed"] == 0, r.stdout + r.stderr[-4000:]
    assert s["states"] > 0
