"""Byte copies into PM inside transactions (range_copy.c, built by cairn-cc
--trace): the runtime keeps a copied range of 256 bytes or more as one
range, not line by line, and flushes it as one range at commit. Every
crash state keeps the copies whole with the shipped runtime; with the
flush of ranges dropped (a libcairn.so built as mutant TX_FLUSH_BIG, found
first through LD_LIBRARY_PATH) the checker finds torn values."""
import subprocess

from test_corpus import CAIRN_CC, HERE, ROOT, crashcheck, need, pool, summary  # noqa: F401


def build(tmp_path):
    need(CAIRN_CC)
    out = tmp_path / "range_copy"
    r = subprocess.run([str(CAIRN_CC), "--trace", "-O1", "-g", "-Wall", "-Wextra", "-Werror",
                        f"-I{ROOT / 'include'}", str(HERE / "range_copy.c"), "-o", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return out


def mutant_shared_runtime(tmp_path, mutant):
    """runtime/*.c built with -DCAIRN_MUTANT=CAIRN_MUT_<mutant> into
    tmp_path/so/libcairn.so.0 (the soname cairn-cc's programs load)"""
    d = tmp_path / "so"
    d.mkdir()
    objs = []
    for src in sorted((ROOT / "runtime").glob("*.c")):
        o = d / (src.stem + ".o")
        r = subprocess.run(["cc", "-O2", "-std=gnu11", "-fPIC", f"-DCAIRN_MUTANT=CAIRN_MUT_{mutant}",
                            f"-I{ROOT / 'include'}", f"-I{ROOT / 'runtime'}", "-c", str(src),
                            "-o", str(o)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        objs.append(str(o))
    subprocess.run(["cc", "-shared", "-Wl,-soname,libcairn.so.0", *objs, "-o",
                    str(d / "libcairn.so.0"), "-lpthread", "-ldl"], check=True)
    return d


def run_check(prog, pool):
    r = crashcheck("--quiet", "--max-states", "16", "--check", f"{prog} check {{pool}}", "--",
                   prog, "run", pool, pool=pool)
    return r, summary(r.stdout)


def test_copies_survive_every_crash(tmp_path, pool):
    r, s = run_check(build(tmp_path), pool)
    assert r.returncode == 0 and s["failed"] == 0, r.stdout + r.stderr[-4000:]
    assert s["states"] > 0


def test_unflushed_range_caught(tmp_path, pool, monkeypatch):
    prog = build(tmp_path)
    libdir = mutant_shared_runtime(tmp_path, "TX_FLUSH_BIG")
    monkeypatch.setenv("LD_LIBRARY_PATH", str(libdir))
    r, s = run_check(prog, pool)
    assert r.returncode == 1 and s["failed"] > 0, r.stdout + r.stderr[-4000:]
