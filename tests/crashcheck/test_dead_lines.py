"""Dead lines (docs/crashcheck.md, "Dead lines"): a line in play whose
differing bytes the check writes before it reads them, on every state,
cannot change a verdict, so crashcheck enumerates it at one version.
bigrec's fences with 66-67 lines in play become exhaustive that way; a bug
that leaves a data line in play with the wrong undo record or commit mark
(runtime mutants built as test_mutants.py builds them) is still caught with
the reduction at every crash point."""
import json
import os
import struct
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import rtjobs
from test_corpus import pool  # noqa: F401
from test_mutants import MUTANTS, RUNTIME, compile_obj

# a data line left out of the undo record's order (the record's fence
# dropped: data may persist without its record) and a data range not
# flushed before the commit mark (the mark may persist without the data)
PLANTED = ("TX_LOG_FENCE", "TX_FLUSH_BIG")


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    """the shipped runtime and the PLANTED mutants' libcairn.a"""
    if not (rtjobs.BUILD / "runtime" / "libcairn-readtrack.so").exists():
        pytest.skip("the runtime is not built (scripts/build.sh)")
    out = tmp_path_factory.mktemp("dead")
    srcs = sorted(RUNTIME.glob("*.c"))
    by_name = {m["name"]: m for m in MUTANTS}
    jobs = [(s, out / f"{s.stem}.o", None) for s in srcs]
    for name in PLANTED:
        (out / name).mkdir()
        tag = f"CAIRN_MUTATED({name})"
        assert not any(tag in h.read_text() for h in RUNTIME.glob("*.h")), name
        jobs += [(s, out / name / f"{s.stem}.o", by_name[name]["n"]) for s in srcs if tag in s.read_text()]
    with ThreadPoolExecutor(2) as ex:
        list(ex.map(lambda j: compile_obj(*j), jobs))
    built = {}
    for name in (None, *PLANTED):
        objs = [str((out / name / f"{s.stem}.o") if name and (out / name / f"{s.stem}.o").exists()
                    else out / f"{s.stem}.o") for s in srcs]
        lib = out / f"lib-{name or 'shipped'}.a"
        subprocess.run(["ar", "rcs", str(lib), *objs], check=True)
        built[name] = rtjobs.build(lib, out / f"rt-{name or 'shipped'}")
    return built


def big_points(res):
    return [p for p in res["points"] if p["lines"] >= 60]


def test_bigrec_exhaustive_through_dead_lines(libs, pool, tmp_path):
    """bigrec's two fences with 66-67 lines in play: recovery rolls the
    4160-byte range back before anything reads it, so its 65 data lines
    are dead and every crash point is exhaustive"""
    out = tmp_path / "r.json"
    r = rtjobs.crashcheck(libs[None], "bigrec", pool, ["--json", str(out)])
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    res = json.loads(out.read_text())
    big = big_points(res)
    assert len(big) == 2, res["points"]
    assert all(p["dead_lines"] >= 65 and p["exhaustive"] for p in big), big
    assert res["exhaustive_points"] == res["crash_points"] and res["skipped"] == 0, res


@pytest.mark.parametrize("name", PLANTED)
def test_planted_data_line_bug_caught_with_dead_lines(name, libs, pool, tmp_path):
    """with the reduction at every crash point (--prune always), a data
    line whose undo record or commit mark is misordered is not dead (the
    check reads it on some state) and the bug is caught"""
    out = tmp_path / "r.json"
    r = rtjobs.crashcheck(libs[name], "bigrec", pool, ["--prune", "always", "--max-states", "64", "--json", str(out)])
    res = json.loads(out.read_text())
    assert r.returncode == 1 and res["failed"] > 0, r.stdout + r.stderr[-3000:]
    assert res["pruned_points"] > 0, res


def test_tracker_classes_first_accesses(tmp_path):
    """readtrack_probe.c's accesses: a store of a new value is a write (its
    read-back does not end the prefix), a store of the value already there
    is not, a read-modify-write is a read and ends the prefix"""
    prog = tmp_path / "probe"
    subprocess.run(["cc", "-O1", str(Path(__file__).parent / "readtrack_probe.c"), "-o", str(prog)],
                   check=True)
    img, pages, diff, out = (tmp_path / n for n in ("img", "pages", "diff", "out"))
    img.write_bytes(b"\x55" * 8192)
    pages.write_bytes(struct.pack("<Q", 4096))
    diff.write_bytes(b"".join(struct.pack("<QQ", line, 0xff) for line in (64, 65, 66, 67)))
    env = dict(os.environ, LD_PRELOAD=str(rtjobs.BUILD / "runtime" / "libcairn-readtrack.so"),
               CAIRN_READTRACK_FILE=str(img), CAIRN_READTRACK_PAGES=str(pages),
               CAIRN_READTRACK_DIFF=str(diff), CAIRN_READTRACK_OUT=str(out))
    assert subprocess.run([str(prog), str(img)], env=env).returncode == 0
    words = struct.unpack(f"<{len(out.read_bytes()) // 8}Q", out.read_bytes())
    pmask, culprit, i = {}, None, 0
    while i < len(words):
        w = words[i]
        if w >> 63 == 0 and w & (1 << 61):
            pmask[w & ((1 << 61) - 1)] = words[i + 1]
            i += 1
        elif w >> 63 == 0 and w & (1 << 60):
            culprit = w & ((1 << 60) - 1)
        i += 1
    assert culprit == 66, (culprit, pmask)
    assert pmask == {64: 0xff, 65: 0, 66: 0, 67: 0}, pmask
