"""The benchmarks' 2-thread runs, built here from their sources against the
runtime of $CAIRN_BUILD: the `cairn bench runtime` driver (cairn-bench-cairn,
micro mode, --threads 2), a YCSB driver over a cairn-cc port (btree,
--threads 2) and vacation's cairn port (--clients 2).

In scripts/test.sh's TSan step (CAIRN_TEST_SANITIZE=thread) every piece is
compiled with -fsanitize=thread (cairn-cc forwards it to clang) and links
the TSan-built libcairn, so the drivers' threads, the ports' transactions
and the runtime under them are checked for races; a report exits non-zero
(TSAN_OPTIONS=halt_on_error=1) and fails the test. The bench/ CMake builds
are not used: a sanitizer tree leaves out bench/ (its peers link an
uninstrumented libpmemobj). Sizes are tiny: one short run each."""
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cairn.commands.bench import OPS

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ["CAIRN_BUILD"]).resolve()
BENCH = ROOT / "bench"
CAIRN_CC = BUILD / "compiler" / "cairn-cc"
CLANG = Path("/usr/lib/llvm-19/bin/clang")
FLAGS = ["-O2", "-g", "-Wall", "-Wextra", "-Werror"]


def sanitize():
    san = os.environ.get("CAIRN_TEST_SANITIZE")
    return [f"-fsanitize={san}", "-fno-omit-frame-pointer"] if san else []


def sh(*cmd, **kw):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True,
                       env=dict(os.environ, CAIRN_PMEM_FORCE="1"), **kw)
    assert r.returncode == 0, f"{' '.join(map(str, cmd))} failed (exit {r.returncode}):\n{r.stderr}"
    return r


@pytest.fixture(scope="module")
def tools():
    for t, how in ((CAIRN_CC, f"ninja -C {BUILD} cairn-cc"), (CLANG, "apt-get install clang-19"),
                   (BUILD / "runtime" / "libcairn.so", f"ninja -C {BUILD} cairn")):
        assert t.exists(), f"{t} is missing: {how}"
    assert shutil.which("patch"), "patch is missing: apt-get install patch"


def port(tmp_path, src_dir, name):
    """NAME.c with NAME_cairn.patch applied, as bench/*/CMakeLists.txt makes it."""
    out = tmp_path / f"{name}_cairn.c"
    sh("patch", "-s", "-o", out, src_dir / f"{name}.c", src_dir / f"{name}_cairn.patch")
    return out


def test_bench_runtime_micro_with_two_threads(tools, tmp_path):
    """cairn-bench-cairn micro --threads 2, the run `cairn bench runtime
    --threads 2` makes: every operation of the command's list ran, with
    flushes forced, on two threads, each on its own objects in one pool."""
    exe = tmp_path / "cairn-bench-cairn"
    rt = BUILD / "runtime"
    sh(CLANG, *FLAGS, *sanitize(), f"-I{ROOT / 'include'}", BENCH / "runtime" / "bench.c",
       BENCH / "runtime" / "bench_cairn.c", f"-L{rt}", f"-Wl,-rpath,{rt}", "-lcairn",
       "-lpthread", "-o", exe)
    r = sh(exe, "micro", "--pool", tmp_path / "b.pool", "--pool-size", str(64 << 20),
           "--threads", "2", "--seconds", "0.05", "--warmup", "0.02", timeout=300)
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert rows[0]["mode"] == "info" and rows[0]["forced_flushes"] is True
    micro = rows[1:]
    assert [row["op"] for row in micro] == list(OPS)
    for row in micro:
        assert row["mode"] == "micro" and row["threads"] == 2 and row["ops"] > 0, row


def test_ycsb_cairn_port_with_two_threads(tools, tmp_path):
    """ycsb-btree-cairn --threads 2: every key loaded or inserted reads back."""
    src = BENCH / "ycsb"
    drv = tmp_path / "ycsb-cairn.o"
    sh(CLANG, *FLAGS, *sanitize(), '-DYCSB_BUILD="cairn"', "-c", src / "ycsb.c", "-o", drv)
    exe = tmp_path / "ycsb-btree-cairn"
    sh(CAIRN_CC, *FLAGS, *sanitize(), f"-I{src}", port(tmp_path, src, "btree"), drv, "-lm",
       "-o", exe)
    out = tmp_path / "rows.json"
    sh(exe, "--pool", tmp_path / "y.pool", "--records", "400", "--ops", "1000",
       "--workloads", "LOAD,A,D,E", "--value-size", "64", "--threads", "2", "--check",
       "--json", out, timeout=300)
    rows = {r["phase"]: r for r in json.loads(out.read_text())}
    assert list(rows) == ["LOAD", "A", "D", "E", "CHECK"]
    assert all(r["threads"] == 2 for r in rows.values())
    assert rows["CHECK"]["not_found"] == 0
    assert rows["CHECK"]["ops"] > 400          # D inserted keys after the load


def test_vacation_cairn_port_with_two_clients(tools, tmp_path):
    """vacation-cairn --clients 2: mgr_check finds the tables consistent
    (it exits 1 otherwise) after both clients' transactions."""
    src = BENCH / "vacation"
    cl = tmp_path / "client-cairn.o"
    sh(CLANG, *FLAGS, *sanitize(), '-DVACATION_BUILD="cairn"', "-c", src / "client.c", "-o", cl)
    exe = tmp_path / "vacation-cairn"
    sh(CAIRN_CC, *FLAGS, *sanitize(), f"-I{src}", port(tmp_path, src, "manager"), cl, "-o", exe)
    r = sh(exe, "--pool", tmp_path / "v.pool", "--relations", "200", "--transactions", "1000",
           "--queries", "4", "--range", "60", "--user", "90", "--seed", "7", "--clients", "2",
           timeout=300)
    got = json.loads(r.stdout)
    assert got["clients"] == 2 and got["transactions"] == 1000
    assert got["reserved"] > 0 and got["reservations"] > 0 and got["customers"] > 0
