"""`cairn bench ycsb` and the structures under it (bench/ycsb/).

Every structure's three builds run the same small deterministic workload
and must return the same reads and leave the same content; the persistent
ports must hand back that content after a reopen; the changed-line counts
are computed; the command runs a tiny subset end to end and writes JSON and
PNGs. Speed is the benchmark's output, not a test."""
import json

import pytest

from cairn import ycsb
from cairn.cli import main

BUILT = {(s, b) for s in ycsb.STRUCTURES for b in ycsb.BUILDS if ycsb.binary(s, b).exists()}
pytestmark = pytest.mark.skipif(not BUILT, reason="the ycsb programs are not built")

SMALL = dict(records=600, ops=600)


def _run(tmp_path, s, b, value_size, extra=(), workloads=None, pool=None):
    if (s, b) not in BUILT:
        pytest.skip(f"ycsb-{s}-{b} is not built")
    wl = workloads if workloads is not None else \
        [w for w in ycsb.WORKLOADS if w != "E" or s in ycsb.ORDERED]
    pool = pool or tmp_path / f"{s}-{b}.pool"
    return {r["phase"]: r for r in ycsb.run_driver(
        s, b, pool, SMALL["records"], SMALL["ops"], wl, value_size, 1, "default",
        extra=("--check", "--delete-every", "7", *extra))}


@pytest.mark.parametrize("value_size", [8, 1024])
@pytest.mark.parametrize("structure", ycsb.STRUCTURES)
def test_three_builds_read_back_the_same(tmp_path, structure, value_size):
    runs = {b: _run(tmp_path, structure, b, value_size) for b in ycsb.BUILDS}
    base = runs["volatile"]
    phases = ["LOAD", *[w for w in ycsb.WORKLOADS if w != "E" or structure in ycsb.ORDERED],
              "CHECK"]
    assert list(base) == phases
    # the content check read every key back: a seventh deleted, the rest there
    check = base["CHECK"]
    assert check["not_found"] == -(-check["keys"] // 7)
    assert check["ops"] == check["keys"] - check["not_found"]
    assert all(base[p]["not_found"] == 0 for p in phases if p != "CHECK")
    for b, run in runs.items():
        for p in phases:
            assert run[p]["digest"] == base[p]["digest"], (b, p)
            assert run[p]["ops"] == base[p]["ops"], (b, p)


@pytest.mark.parametrize("dist", ["uniform", "latest"])
def test_key_choosers_agree_across_builds(tmp_path, dist):
    digests = set()
    for b in ycsb.BUILDS:
        if ("btree", b) not in BUILT:
            pytest.skip(f"ycsb-btree-{b} is not built")
        rows = ycsb.run_driver("btree", b, tmp_path / "d.pool", 500, 500, ["A", "D", "E"], 8, 1,
                               dist, extra=("--check",))
        assert [r["dist"] for r in rows[1:4]] == [dist] * 3
        digests.add(tuple(r["digest"] for r in rows))
    assert len(digests) == 1


@pytest.mark.parametrize("build", ycsb.BUILDS)
@pytest.mark.parametrize("structure", ["btree", "chash", "rbtree", "splay"])
def test_two_threads_lose_nothing(tmp_path, structure, build):
    """Two threads, one lock around the structure: every key loaded or
    inserted (D and E insert) reads back afterwards."""
    if (structure, build) not in BUILT:
        pytest.skip(f"ycsb-{structure}-{build} is not built")
    wl = [w for w in ycsb.WORKLOADS if w != "E" or structure in ycsb.ORDERED]
    rows = {r["phase"]: r for r in ycsb.run_driver(
        structure, build, tmp_path / "t.pool", 800, 2000, wl, 64, 2, "default",
        extra=("--check",))}
    assert rows["CHECK"]["not_found"] == 0
    assert rows["CHECK"]["ops"] == rows["CHECK"]["keys"] > 800


@pytest.mark.parametrize("build", ["cairn", "pmemobj"])
@pytest.mark.parametrize("structure", ycsb.STRUCTURES)
def test_persistent_ports_survive_reopen(tmp_path, structure, build):
    pool = tmp_path / "reopen.pool"
    first = _run(tmp_path, structure, build, 1024, pool=pool)["CHECK"]
    again = ycsb.run_driver(structure, build, pool, SMALL["records"], 0, [], 1024, 1,
                            "default", extra=("--reopen", "--keys", str(first["keys"])))
    (check,) = again
    assert check["phase"] == "CHECK"
    assert (check["digest"], check["ops"]) == (first["digest"], first["ops"])
    volatile = _run(tmp_path, structure, "volatile", 1024)["CHECK"]
    assert check["digest"] == volatile["digest"]


def test_changed_lines_counts_a_replaced_block_by_its_longer_side():
    orig = "int a;\n/* note */\nint b;\nint c;\n\n  int d;\n"
    port = "int a;\nint b2;\nint b3;\nint c;\n// new comment\nint d;   /* re-indented */\nint e;\n"
    # b -> b2,b3 counts 2; e added counts 1; comments and indentation ignored
    assert ycsb.changed_lines(orig, port) == 3
    assert ycsb.changed_lines(orig, orig) == 0


def test_line_counts_for_every_structure():
    rows = {r["structure"]: r for r in ycsb.line_counts()}
    assert set(rows) == set(ycsb.STRUCTURES)
    for r in rows.values():
        assert 0 < r["cairn"] < r["pmemobj"] < r["original_lines"]
        assert r["cairn"] <= ycsb.GOAL_LINES, r   # issue 19's porting-effort goal


def test_bench_command_runs_a_tiny_subset(tmp_path):
    if not all(("btree", b) in BUILT for b in ycsb.BUILDS):
        pytest.skip("the three btree builds are needed")
    out, plots = tmp_path / "ycsb.json", tmp_path / "plots"
    rc = main(["bench", "ycsb", "--structures", "btree", "--workloads", "A,C,E",
               "--value-sizes", "8", "--threads", "1,2", "--records", "300", "--ops", "300",
               "--rounds", "2", "--dir", str(tmp_path), "--json", str(out),
               "--plots", str(plots)])
    assert rc == 0
    data = json.loads(out.read_text())
    assert data["rounds"] == 2 and data["records"] == 300 and data["source"]["commit"]
    got = {(e["threads"], e["phase"]) for e in data["summary"]}
    assert got == {(t, p) for t in (1, 2) for p in ("LOAD", "A", "C", "E")}
    for e in data["summary"]:
        for b in ycsb.BUILDS:
            assert e[b]["ops_per_s"] > 0 and e[b]["ops_per_cpu_s"] > 0 and e[b]["rounds"] == 2
            assert 0 < e[b]["p50_ns"] <= e[b]["p99_ns"]
        for key in ("cairn_vs_pmemobj", "cairn_vs_pmemobj_wall", "volatile_vs_cairn"):
            r = e[key]
            assert r["rounds"] == 2 and r["min"] <= r["median"] <= r["max"]
    assert len(data["runs"]) == 2 * 2 * 3 * 4   # threads x rounds x builds x phases
    pngs = sorted(plots.glob("*.png"))
    assert [p.name for p in pngs] == ["ycsb-btree-8B-1t-default.png",
                                      "ycsb-btree-8B-2t-default.png"]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
    assert not list(tmp_path.glob("*.pool"))     # pools are removed


def test_not_shown_when_rounds_straddle_one():
    assert not ycsb._ratio([0.9, 1.2, 1.1])["shown"]
    assert ycsb._ratio([1.1, 1.2])["shown"] and ycsb._ratio([0.8, 0.9])["shown"]
    assert not ycsb._ratio([3.0])["shown"]       # one round shows nothing
    assert ycsb._fmt_ratio(ycsb._ratio([0.9, 1.2]), 2.0).endswith("not shown; goal not met")
    assert ycsb._fmt_ratio(ycsb._ratio([2.1, 2.5]), 2.0).endswith("goal met")
    assert ycsb._fmt_ratio(ycsb._ratio([1.5, 2.5]), 2.0).endswith("goal not shown")
    assert ycsb._fmt_ratio(ycsb._ratio([1.5, 1.9]), 2.0).endswith("goal not met")
    # the read goal is an upper bound: volatile / cairn <= 1.1x
    assert ycsb._goal_verdict(ycsb._ratio([0.9, 1.05]), 1.1, False) == "met"
    assert ycsb._goal_verdict(ycsb._ratio([1.2, 1.3]), 1.1, False) == "not met"
    assert ycsb._goal_verdict(ycsb._ratio([1.0, 1.3]), 1.1, False) == "not shown"
