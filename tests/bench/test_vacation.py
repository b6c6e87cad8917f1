"""`cairn bench vacation` and STAMP's vacation under it (bench/vacation/).

The three builds of the manager run the same small seeded mix and must leave
the same tables (mgr_check's digest, after it checked every invariant); the
persistent ports hand the tables back after a reopen; the command runs end
to end with JSON and a PNG. A missing build is a failure: the suite runs
every build. Speed is the benchmark's output, not a test."""
import json

import pytest

from cairn import vacation
from cairn.cli import main

SMALL = dict(relations=400, transactions=3000)


def _run(tmp_path, build, mix, clients=1, extra=()):
    assert vacation.binary(build).exists(), f"{vacation.binary(build)} is not built"
    return vacation.run_client(build, tmp_path / f"{build}.pool", SMALL["relations"],
                               SMALL["transactions"], mix, seed=7, clients=clients,
                               extra=extra)


@pytest.mark.parametrize("mix", list(vacation.MIXES))
def test_three_builds_leave_the_same_tables(tmp_path, mix):
    runs = {b: _run(tmp_path, b, mix) for b in vacation.BUILDS}
    base = runs["volatile"]
    # the mix did all three kinds of transaction
    assert base["reserved"] > 0 and base["deleted"] > 0 and base["updated"] > 0
    assert base["reservations"] > 0 and base["customers"] > 0
    for b, r in runs.items():
        for k in ("digest", "reserved", "deleted", "updated", "bills", "items", "customers",
                  "reservations"):
            assert r[k] == base[k], (b, k)


@pytest.mark.parametrize("build", vacation.BUILDS)
def test_two_clients_keep_the_invariants(tmp_path, build):
    """the client exits 1 when mgr_check finds the tables inconsistent"""
    r = _run(tmp_path, build, "high", clients=2)
    assert r["clients"] == 2 and r["transactions"] == SMALL["transactions"]
    assert r["reserved"] > 0 and r["reservations"] > 0
    assert sum(r["items"]) > 0 and r["customers"] > 0


@pytest.mark.parametrize("build", ["cairn", "pmemobj"])
def test_persistent_ports_survive_reopen(tmp_path, build):
    first = _run(tmp_path, build, "high")
    again = _run(tmp_path, build, "high", extra=("--reopen",))
    assert again["transactions"] == 0
    for k in ("digest", "items", "customers", "reservations"):
        assert again[k] == first[k], k


def test_line_counts():
    lines = vacation.line_counts()
    assert lines["original_lines"] > 200
    assert 0 < lines["cairn"] < lines["pmemobj"]


def test_bench_command_end_to_end(tmp_path, capsys):
    out = tmp_path / "vacation.json"
    png = tmp_path / "vacation.png"
    assert main(["bench", "vacation", "--quick", "--transactions", "500", "--rounds", "2",
                 "--json", str(out), "--plot", str(png), "--dir", str(tmp_path)]) == 0
    doc = json.loads(out.read_text())
    assert {r["build"] for r in doc["runs"]} == set(vacation.BUILDS)
    assert len(doc["runs"]) == 2 * 2 * 2 * len(vacation.BUILDS)   # mixes, clients, rounds
    assert [(e["mix"], e["clients"]) for e in doc["summary"]] == \
        [("high", 1), ("high", 2), ("low", 1), ("low", 2)]
    for e in doc["summary"]:
        assert e["cairn_vs_pmemobj"] > 0 and e["volatile_vs_cairn"] > 0
        assert e["cairn_vs_pmemobj_shown"] in ("shown", "not shown")
    assert doc["lines"]["cairn"] > 0
    assert png.stat().st_size > 1000
    assert "cairn/pmemobj" in capsys.readouterr().out
    assert not list(tmp_path.glob("*.pool"))
