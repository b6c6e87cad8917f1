"""bench/heap/programs.py: the Debian programs (zlib, bzip2, pcre2, expat,
jansson, jq) built with clang -O2 and with cairn-cc --persistent-heap run
every task on a small corpus and print the same output (the script stops
otherwise). The first run fetches (tests/debian/run.sh --fetch) and builds
the twelve programs into BUILD/heap-programs, which takes minutes; later
runs reuse them and take seconds. A package that cannot be fetched or built
is a failure. Speed is the benchmark's output, not a test.

The suite runs two packages (zlib and bzip2, the quickest to configure and
build): the benchmark's own machinery is the same for every package, and
every package's build under --persistent-heap is proven by its own test
suite in tests/debian. Set CAIRN_HEAP_PROGRAMS=all to run all six."""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("CAIRN_BUILD", ROOT / "build")).resolve()
ALL = os.environ.get("CAIRN_HEAP_PROGRAMS") == "all"
PACKAGES = "zlib,bzip2,pcre2,expat,jansson,jq" if ALL else "zlib,bzip2"
TASKS = ["zlib compress", "zlib decompress", "bzip2 compress", "bzip2 decompress"]
if ALL:
    TASKS += ["pcre2grep match", "expat xmlwf", "jansson parse+dump", "jq filter"]


def test_every_program_runs_in_both_builds(tmp_path):
    out = tmp_path / "programs.json"
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "heap" / "programs.py"),
                        "--build", str(BUILD), "--rounds", "1", "--scale", "0.02", "--packages", PACKAGES,
                        "--json", str(out)], capture_output=True, text=True, timeout=3600)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(out.read_text())
    assert [t["task"] for t in doc["tasks"]] == TASKS
    for t in doc["tasks"]:
        assert t["clang_s"] > 0 and t["cairn_s"] > 0
        assert t["goal"] in ("met", "not shown", "NOT met")
    # the cairn builds really run with their heap in a pool
    for exe in (BUILD / "heap-programs" / "cairn").glob("*.built"):
        prog = exe.read_text().strip()
        syms = subprocess.run(["nm", prog], capture_output=True, text=True).stdout
        assert "cairn" in syms, f"{prog} is not built by cairn-cc"


def test_base_build_runs_in_the_same_rounds(tmp_path):
    """--base DIR: DIR's cairn build runs as a third build in each round
    (here the same build directory, so the two cairn builds are one)."""
    out = tmp_path / "programs.json"
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "heap" / "programs.py"),
                        "--build", str(BUILD), "--base", str(BUILD), "--rounds", "3",
                        "--scale", "0.02", "--packages", "zlib", "--json", str(out)],
                       capture_output=True, text=True, timeout=3600)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(out.read_text())
    assert [t["task"] for t in doc["tasks"]] == TASKS[:2]
    for t in doc["tasks"]:
        assert t["base_s"] > 0 and t["speedup_min"] <= t["speedup"] <= t["speedup_max"]
        assert t["base_ratio_min"] <= t["base_ratio"] <= t["base_ratio_max"]
    assert 0 <= doc["loadavg_start"] and 0 <= doc["loadavg_end"]
