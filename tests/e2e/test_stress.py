"""SIGKILL stress (NVL-C section 5.1, stricter): the kvstore writer is killed
at random instants at least 200 times; after each kill the pool is reopened
(recovered), checked in full by `cairn pool check`, and its contents must
equal a replay of the operations it says it committed, with nothing the
writer reported committed missing."""
import os
from pathlib import Path

import pytest

from cairn import crashloop, paths


@pytest.mark.parametrize("program", ["kvstore", "kvstore_cc"])
def test_sigkill_200_times(tmp_path, program):
    """kvstore logs by hand (cairn_tx_add); kvstore_cc is plain C built by cairn-cc."""
    pool = Path("/dev/shm") / f"cairn-stress-{os.getpid()}-{program}.pool"
    pool.unlink(missing_ok=True)
    try:
        rep = crashloop.kill_loop(pool, kills=200, writer=paths.tool(program), min_ms=1.0,
                                  max_ms=40.0, seed=1234)
        fails = rep.failures
        assert not fails, "\n".join(f"kill {f.round}: {f.detail}" for f in fails[:5])
        assert len(rep.results) == 200
        torn = sum(1 for r in rep.results if r.torn)
        # the kills must really land inside transactions, or the test proves little
        assert torn >= 30, f"only {torn} of 200 kills hit an open transaction"
        assert rep.results[-1].recovered > 1000
    finally:
        pool.unlink(missing_ok=True)


def test_pool_check_names_corruption(tmp_path):
    """`cairn pool check` exits 1 and names the problem on a damaged pool."""
    import subprocess
    from cairn import paths
    pool = Path("/dev/shm") / f"cairn-check-{os.getpid()}.pool"
    pool.unlink(missing_ok=True)
    tool = str(paths.tool("cairn-pool"))
    try:
        subprocess.run([str(paths.tool("kvstore")), "run", str(pool), "200"], check=True,
                       capture_output=True, env={**os.environ, "CAIRN_PMEM_FORCE": "1"})
        ok = subprocess.run([tool, "check", str(pool)], capture_output=True, text=True)
        assert ok.returncode == 0 and "consistent" in ok.stdout
        info = subprocess.run([tool, "info", str(pool)], capture_output=True, text=True)
        assert info.returncode == 0 and "closed cleanly" in info.stdout
        with open(pool, "r+b") as f:       # flip a bit in the header's layout name
            f.seek(20)
            b = f.read(1)
            f.seek(20)
            f.write(bytes([b[0] ^ 1]))
        bad = subprocess.run([tool, "check", str(pool)], capture_output=True, text=True)
        # a pool that cannot be read is an error like any other command's (stderr,
        # "cairn-pool: ..."), not an "error:" finding on stdout
        assert bad.returncode == 2 and bad.stderr.startswith("cairn-pool: ")
        assert "checksum" in bad.stderr
    finally:
        pool.unlink(missing_ok=True)
