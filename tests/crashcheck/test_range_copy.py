"""Byte copies into PM inside transactions (range_copy.c, built by cairn-cc
--trace): the runtime keeps a copied range of 256 bytes or more as one
range, not line by line, and flushes it as one range at commit. Every
crash state keeps the copies whole with the shipped runtime; with the
flush of ranges dropped (mutant TX_FLUSH_BIG, which before the ranges were
kept whole could not reach a 1 KiB copy) the checker finds torn values."""
import pytest
from planted import planted_runtime
from test_corpus import CAIRN_CC, HERE, ROOT, crashcheck, need, pool, summary  # noqa: F401

import subprocess


def build(tmp_path, libcairn=None):
    need(CAIRN_CC)
    out = tmp_path / ("range_copy_planted" if libcairn else "range_copy")
    cmd = [str(CAIRN_CC), "--trace", "-O1", "-g", "-Wall", "-Wextra", "-Werror",
           f"-I{ROOT / 'include'}", str(HERE / "range_copy.c"), "-o", str(out)]
    if libcairn:
        cmd += [str(libcairn), "-lpthread", "-ldl"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return out


def run_check(prog, pool):
    r = crashcheck("--quiet", "--max-states", "16", "--check", f"{prog} check {{pool}}", "--", prog, "run", pool,
                   pool=pool)
    return r, summary(r.stdout)


def test_copies_survive_every_crash(tmp_path, pool):
    r, s = run_check(build(tmp_path), pool)
    assert r.returncode == 0 and s["failed"] == 0, r.stdout + r.stderr[-4000:]
    assert s["states"] > 0


def test_unflushed_range_caught(tmp_path, pool):
    lib = planted_runtime(tmp_path, "CAIRN_MUTANT=CAIRN_MUT_TX_FLUSH_BIG")
    r, s = run_check(build(tmp_path, libcairn=lib), pool)
    assert r.returncode == 1 and s["failed"] > 0, r.stdout + r.stderr[-4000:]
