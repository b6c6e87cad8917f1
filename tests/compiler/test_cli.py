"""`cairn cc` (python/cairn/commands/cc.py): config and a quick benchmark."""
import json
import os
import subprocess
import sys

from conftest import BUILD, ROOT


def cairn(*args, timeout=600):
    env = dict(os.environ, CAIRN_BUILD=str(BUILD),
               PYTHONPATH=str(ROOT / "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "cairn.cli", "cc", *args],
                          capture_output=True, text=True, env=env, timeout=timeout)


def test_cc_config(cairn_cc):
    r = cairn("config")
    assert r.returncode == 0, r.stderr
    assert "CairnPass.so" in r.stdout


def test_cc_bench_refuses_counts_that_measure_nothing():
    for arg, msg in (("--rounds=0", "--rounds: 0 must be at least 1"),
                     ("--slices=-2", "--slices: -2 must be at least 1"),
                     ("--ops=many", "--ops: 'many' is not a whole number"),
                     ("--only=nosuch", "--only nosuch: no such structure")):
        r = cairn("bench", arg, timeout=60)
        assert r.returncode != 0 and msg in r.stderr, (arg, r.stderr)


def test_cc_bench_quick_runs_and_writes_json(runtime, tmp_path):
    out = tmp_path / "bench.json"
    r = cairn("bench", "--quick", "--json", str(out))
    assert r.returncode == 0, r.stderr
    assert "| uthash | read |" in r.stdout and "relative_loads" in r.stdout
    data = json.loads(out.read_text())
    variants = {row["variant"] for row in data["ns_per_op"]}
    assert variants == {"clang", "clang-same", "cc-dram", "cc-pm"}
    # cairn-cc's DRAM build is also paired with clang's build of the same source
    dram = [row for row in data["ns_per_op"] if row["variant"] == "cc-dram"]
    assert dram and all(row["paired_ratio_vs_same_median"] > 0 for row in dram)
    assert "vs same source" in r.stdout
    pm_list = next(c for c in data["per_op_counts"]
                   if c["data"] == "pm" and c["structure"] == "list" and c["workload"] == "read")
    assert pm_list["relative_loads"] > 10     # every node visited converts a pointer
    assert data["static_stats"]["pointer loads converted back"] > 0
    # each optimization turned off in its own count build: none adds work,
    # block merging removes splay's logs, the volatile proofs region tests
    rows = data["removed_per_op_pm"]
    assert {r["optimization"] for r in rows} >= {"merge-logs", "elim-dominated-logs",
                                                   "hoist-loop-logs", "skip-volatile"}
    assert all(r["without"] >= r["with"] - 1e-9 for r in rows)
    removed = {(r["optimization"], r["structure"], r["workload"]): r["without"] - r["with"]
               for r in rows}
    assert removed[("merge-logs", "splay", "read")] > 0.5
    assert removed[("skip-volatile", "list", "read")] > 0
