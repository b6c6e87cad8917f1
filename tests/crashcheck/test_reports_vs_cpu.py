"""What the runtime reports against what the CPU did: cairn-stepcount
single-steps cairn-trace-cost's loop (transactions, allocations, frees) and
records the address of every clwb/clflushopt/clflush and non-temporal store
it executes; the trace of the same run must report exactly those lines.
A runtime whose inline clwb misses its line while its report names the
right one (CAIRN_PLANT_CLWB_UNREPORTED_LINE) must be caught."""
import collections
import os
import subprocess
import sys
from pathlib import Path

import pytest
from planted import planted_runtime

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
BUILD = Path(os.environ.get("CAIRN_BUILD", ROOT / "build")).resolve()
STEPCOUNT = BUILD / "bench" / "cairn-stepcount"
TRACE_COST = BUILD / "bench" / "cairn-trace-cost"
sys.path.insert(0, str(ROOT / "python"))
from cairn import trace as ctrace  # noqa: E402

FLUSH, NT, POOL_OPEN, TX_BEGIN, FREE = 11, 13, 2, 5, 10


def cpu_and_trace(prog, tmp_path):
    """(lines the CPU flushed, lines it streamed, the same two as the trace
    reports them), as pool offsets, over the stepped loop"""
    pool = Path("/dev/shm") / f"cairn-xcheck-{os.getpid()}-{tmp_path.name}.pool"
    tr, addrs = tmp_path / "run.trace", tmp_path / "addrs.txt"
    env = dict(os.environ, CAIRN_PMEM_FORCE="1", CAIRN_TRACE=str(tr))
    r = subprocess.run([str(STEPCOUNT), "-o", str(tmp_path / "o.jsonl"), "-a", str(addrs), "--",
                        str(prog), str(pool), "20"], capture_output=True, text=True, env=env,
                       timeout=600)
    if "did not start under ptrace" in r.stderr:
        pytest.skip("ptrace is not allowed here")
    assert r.returncode == 0, r.stderr
    t = ctrace.read(str(tr))
    events = list(t.events())
    opened = next(e for e in events if e.type == POOL_OPEN)
    base, size = opened.addr, opened.arg
    first = next(i for i, e in enumerate(events) if e.type == TX_BEGIN)
    last = max(i for i, e in enumerate(events) if e.type == FREE)
    rep_flush, rep_nt = collections.Counter(), set()
    for e in events[first:last + 1]:
        if e.type == FLUSH and e.in_pool:
            for k in range(e.arg):
                rep_flush[e.offset + 64 * k] += 1
        elif e.type == NT and e.in_pool:
            rep_nt.update(range(e.offset & ~63, e.offset + e.arg, 64))
    cpu_flush, cpu_nt = collections.Counter(), set()
    for line in addrs.read_text().split("\n"):
        if not line:
            continue
        _, kind, a = line.split()
        a = int(a, 16)
        if not base <= a < base + size:
            continue
        off = (a - base) & ~63
        if kind == "nt_stores":
            cpu_nt.add(off)
        else:
            cpu_flush[off] += 1
    return cpu_flush, cpu_nt, rep_flush, rep_nt


def need_clwb():
    if " clwb" not in Path("/proc/cpuinfo").read_text():
        pytest.skip("this CPU has no clwb: the inline clwb path does not run")


def test_reported_lines_are_the_flushed_lines(tmp_path):
    for p in (STEPCOUNT, TRACE_COST):
        if not p.exists():
            pytest.skip(f"{p} is not built")
    need_clwb()
    cpu_flush, cpu_nt, rep_flush, rep_nt = cpu_and_trace(TRACE_COST, tmp_path)
    assert sum(cpu_flush.values()) >= 20 and cpu_nt
    assert cpu_flush == rep_flush
    assert cpu_nt == rep_nt


def test_a_flush_that_misses_its_reported_line_is_caught(tmp_path):
    if not STEPCOUNT.exists():
        pytest.skip(f"{STEPCOUNT} is not built")
    need_clwb()
    lib = planted_runtime(tmp_path, "CAIRN_PLANT_CLWB_UNREPORTED_LINE")
    prog = tmp_path / "trace-cost-planted"
    r = subprocess.run(["cc", "-O2", f"-I{ROOT / 'include'}", str(ROOT / "bench" / "runtime" / "trace_cost.c"),
                        "-o", str(prog), str(lib), "-lpthread", "-ldl"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    cpu_flush, _, rep_flush, _ = cpu_and_trace(prog, tmp_path)
    assert sum(cpu_flush.values()) >= 20
    assert cpu_flush != rep_flush
