"""`cairn trace report` and `cairn sim` on a trace written here record by
record, every number worked out by hand (docs/trace.md has the rules), and
both commands on a real trace of the kvstore example."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
from cairn import trace, trace_epochs, trace_report, trace_sim  # noqa: E402
from cairn.cli import main  # noqa: E402
from test_trace_reader import Writer  # noqa: E402

LAYOUT = trace_epochs.layout()         # the pool layout cairn-trace-scan was built with

REL = (1 << 63) | (7 << 40)
LANE = REL | 0x1000                     # lane 0 of the pool: the undo log and its mark
DATA = REL | (LAYOUT["heap_off"] + LAYOUT["chunk"])   # heap objects (past the chunk table)
META = REL | LAYOUT["heap_off"] | 0x40   # zone 0's chunk table: allocator metadata
O, D = 0, 1                             # ofence, dfence


def site(w, sid, line, func):
    return [w.rec(17, loc=sid, arg=line)] + w.data(f"kv.c\0{func}\0".encode())


def hand_trace(path):
    """Two transactions and an allocation outside them, one thread.

    chunk A, written at 1101 ns (the trace starts at 1: records 100 ns apart)
      tx 1: log record (ntstore of lane line 0) | ofence      E0 at 401
            8-byte store, flushed                | ofence      E1 at 701
            commit mark (lane line 0 again)      | dfence      E2 at 901: rewrites E0's line 500 ns later
    chunk B, 13 records to 1 301 101 ns (100 us apart)
      tx 2: log record (2 lane lines)            | ofence      E3
            100-byte store_range + 4-byte store, 3 lines flushed | ofence  E4
            nothing                              | ofence      (an empty fence)
            commit mark                          | dfence      E5 (800 us after E3: no dependency)
    chunk C, 4 records
      alloc, its chunk table line flushed        | dfence      E6
      90 DRAM stores
    """
    w = Writer()
    w.chunk(0, site(w, 1, 10, "put") + site(w, 2, 20, "put"))
    a = [w.rec(1, arg=99),
         w.rec(5, aux=1, loc=7),
         w.rec(8, addr=DATA, arg=8),
         w.rec(13, addr=LANE, arg=64),
         w.rec(12, aux=O, loc=7),
         w.rec(14, size=8, loc=1, addr=DATA, arg=5),
         w.rec(11, addr=DATA, arg=1),
         w.rec(12, aux=O, loc=7),
         w.rec(13, addr=LANE, arg=64),
         w.rec(12, aux=D, loc=7),
         w.rec(6, aux=1, loc=7)]
    w.chunk(1, a, time_ns=1 + 100 * len(a))
    b = [w.rec(5, aux=1, loc=7),
         w.rec(8, addr=DATA + 0x40, arg=100),
         w.rec(13, addr=LANE, arg=128),
         w.rec(12, aux=O, loc=7),
         w.rec(15, loc=2, addr=DATA + 0x40, arg=100)] + w.data(bytes(100)) + [
         w.rec(14, size=4, loc=1, addr=DATA + 0x10000, arg=1),
         w.rec(11, addr=DATA + 0x40, arg=2),
         w.rec(11, addr=DATA + 0x10000, arg=1),
         w.rec(12, aux=O, loc=7),
         w.rec(12, aux=O, loc=7),
         w.rec(13, addr=LANE, arg=64),
         w.rec(12, aux=D, loc=7),
         w.rec(6, aux=1, loc=7)]
    t_b = 1101 + 13 * 100_000
    w.chunk(1, b, time_ns=t_b)
    c = [w.rec(9, addr=DATA + 0x40000, arg=64),
         w.rec(11, addr=META, arg=1),
         w.rec(12, aux=D, loc=7),
         w.rec(18, arg=90)]
    w.chunk(1, c, time_ns=t_b + 400)
    w.end()
    return w.save(path)


def test_report_numbers_of_a_hand_made_trace(tmp_path):
    r = trace_report.analyze(trace.read(hand_trace(tmp_path / "h.trace")))
    tx, ep, dep, wa = r["transactions"], r["epochs"], r["dependencies"], r["write_amplification"]
    assert (tx["committed"], tx["aborted"]) == (2, 0)
    assert (tx["epochs_min"], tx["epochs_max"], tx["epochs_median"]) == (3, 4, 3.5)
    assert ep["count"] == 7
    assert (ep["ended_by_ofence"], ep["ended_by_dfence"]) == (4, 3)
    assert ep["empty_fences"] == {"ofence": 1, "dfence": 0}
    assert {x["bucket"]: x["count"] for x in ep["size_distribution"] if x["count"]} == \
        {"1": 5, "2": 1, "3": 1}
    assert ep["singleton"] == 5
    assert ep["singleton_bytes"] == 64 + 8 + 64 + 64 + 64   # E0, E1 (its 8-byte store), E2, E5, E6
    assert ep["singleton_under_10_bytes"] == 1
    assert (dep["self"], dep["cross"]) == (1, 0)             # E2 rewrites E0's line 500 ns later
    assert dep["self_by_region"] == {"log": 1}
    assert wa["user_bytes"] == 8 + 100 + 4
    assert wa["user_bytes_from"].startswith("store events")
    assert wa["extra_bytes"] == {"commit": 128, "log": 192}
    assert wa["amplification"] == pytest.approx(320 / 112)
    assert wa["outside_transactions"] == {"user_bytes": 0, "allocator metadata": 64}
    assert r["non_temporal"] == {"lines": 5, "flushed_lines": 5, "share": 0.5}
    assert r["stores"] == {"pm": 3, "dram": 90, "pm_share": 3 / 93}
    top = {x["site"]: x["epochs"] for x in r["top_epoch_sites"]}
    assert top == {"(runtime: log)": 2, "(runtime: commit)": 2, "kv.c:10 (put)": 1,
                   "kv.c:20 (put)": 1, "(runtime: allocator metadata)": 1}
    assert {x["site"]: x["flushed_lines"] for x in r["top_flushed_sites"]} == \
        {"kv.c:10 (put)": 2, "kv.c:20 (put)": 2}
    assert r["top_flushed_lines"][0] == {"line": "7+0x1000", "region": "log", "flushes": 4,
                                         "last_store_at": None}


def test_window_decides_the_self_dependency(tmp_path):
    """E2 follows E0 by 500 ns: inside a 0.5 us window, outside a 0.4 us one."""
    t = trace.read(hand_trace(tmp_path / "h.trace"))
    assert trace_report.analyze(t, window_ns=500)["dependencies"]["self"] == 1
    assert trace_report.analyze(t, window_ns=400)["dependencies"]["self"] == 0


def test_sim_times_of_a_hand_made_trace(tmp_path):
    """Table 3's parameters, cycle by cycle (docs/trace.md works x86 out)."""
    r = trace_sim.simulate(trace.read(hand_trace(tmp_path / "h.trace")))
    cycles = {d: v["cycles"] for d, v in r["designs"].items()}
    assert cycles == {"x86": 1272, "x86-pwq": 432, "x86-eadr": 310, "hops": 1242,
                      "hops-pwq": 402, "ideal": 141}
    assert r["designs"]["x86"]["ns"] == 636
    assert r["designs"]["ideal"]["normalized"] == pytest.approx(141 / 1272)


def test_hops_buffer_fills_and_stalls(tmp_path):
    """A 2-entry persist buffer: E4's 3 lines are two drains (2 x 160), and
    each epoch waits for the buffer to empty first."""
    p = dict(trace_sim.WHISPER, pb_entries=2)
    r = trace_sim.simulate(trace.read(hand_trace(tmp_path / "h.trace")), p)
    assert r["designs"]["hops"]["cycles"] == 1402
    assert r["hops_buffer_stall_cycles"] > 0


def test_cross_thread_dependency(tmp_path):
    """Thread 2 rewrites thread 1's line 1 us later: a cross dependency,
    and under HOPS thread 2's epoch drains after thread 1's."""
    w = Writer()
    w.chunk(1, [w.rec(1, arg=1), w.rec(13, addr=DATA, arg=64), w.rec(12, aux=O)], time_ns=301)
    w.chunk(2, [w.rec(1, arg=2), w.rec(13, addr=DATA, arg=64), w.rec(12, aux=D)], time_ns=1301)
    w.end()
    t = trace.read(w.save(tmp_path / "x.trace"))
    r = trace_report.analyze(t)
    assert (r["dependencies"]["self"], r["dependencies"]["cross"]) == (0, 1)
    # thread 2 writes the line after thread 1 did, so on every design it runs
    # after thread 1's epoch. hops: t1: work 8, drains 8..168, ofence -> 9;
    # t2 from 9: work 8 -> 17, its drain waits for t1's (168..328), dfence -> 328.
    # x86: t1: 8 + 1 issue, fence waits for the line: 169; t2 from 169: 178,
    # dfence waits 160 -> 338. ideal: 8, then 8 more.
    c = {d: v["cycles"] for d, v in trace_sim.simulate(t)["designs"].items()}
    assert (c["hops"], c["x86"], c["ideal"]) == (328, 338, 16)


def test_cli_report_and_sim(tmp_path, capsys):
    path = str(hand_trace(tmp_path / "h.trace"))
    assert main(["trace", "report", path]) == 0
    out = capsys.readouterr().out
    assert "median 3.5" in out and "singletons 5 (71.4%)" in out and "285.7%" in out
    assert main(["trace", "report", path, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["epochs"]["singleton"] == 5
    assert main(["sim", path, path]) == 0
    out = capsys.readouterr().out
    assert "h.trace" in out and "0.111" in out and "geometric mean" in out
    assert main(["sim", path, "--pm-cycles", "-1"]) == 2
    assert "--pm-cycles -1 is out of range" in capsys.readouterr().err


def test_cli_plots(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    path = str(hand_trace(tmp_path / "h.trace"))
    assert main(["trace", "report", path, "--plot", str(tmp_path / "plots")]) == 0
    assert sorted(os.listdir(tmp_path / "plots")) == [
        "fig3-epochs-per-tx.png", "fig4-epoch-size.png", "fig5-dependencies.png",
        "fig6-pm-stores.png"]
    assert main(["sim", path, "--plot", str(tmp_path / "fig10.png")]) == 0
    assert (tmp_path / "fig10.png").read_bytes()[:4] == b"\x89PNG"


def test_record_types_come_from_the_c_header():
    """The reader's names are the enum's: the header the runtime compiles."""
    text = (ROOT / "runtime" / "trace_types.h").read_text()
    assert "X(14, STORE,        store)" in text
    assert trace.TYPES[14] == "store" and trace.R_STORE == 14 and trace.T["end"] == 19


@pytest.fixture(scope="module")
def kv_trace(tmp_path_factory):
    build = Path(os.environ.get("CAIRN_BUILD", ROOT / "build"))
    prog = build / "examples" / "kvstore"
    if not prog.exists():
        pytest.skip(f"{prog} is not built")
    d = tmp_path_factory.mktemp("kv")
    env = dict(os.environ, CAIRN_TRACE=str(d / "kv.trace"), CAIRN_PMEM_FORCE="1",
               KV_PROGRESS=str(d / "progress"))
    subprocess.run([str(prog), "run", str(d / "kv.pool"), "2000"], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    return str(d / "kv.trace")


def test_real_trace_report(kv_trace, capsys):
    """The kvstore example: 2000 puts and deletes, one transaction each,
    3 or 4 fences each (log record, data, mark; a second log record when
    an operation logs two ranges)."""
    assert main(["trace", "report", kv_trace, "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["transactions"]["committed"] >= 2000
    assert 3 <= r["transactions"]["epochs_median"] <= 4
    assert r["write_amplification"]["extra_bytes"]["commit"] == 64 * r["transactions"]["committed"]
    assert r["write_amplification"]["user_bytes_from"].startswith("log_append")
    assert main(["sim", kv_trace, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)["kv.trace"]["designs"]
    assert d["ideal"]["cycles"] < d["hops-pwq"]["cycles"] < d["x86-pwq"]["cycles"] < d["x86"]["cycles"]
    assert d["hops"]["cycles"] <= d["x86"]["cycles"]


def test_host_preset_takes_this_machines_rounds(tmp_path):
    """--preset host: the clock and cairn-flush-floor's two round times,
    converted to cycles, and x86 with the write queue equal to x86."""
    build = Path(os.environ.get("CAIRN_BUILD", ROOT / "build"))
    tool = build / "bench" / "cairn-flush-floor"
    if not tool.exists():
        pytest.skip(f"{tool} is not built")
    p = trace_sim.host_preset(tool, pool_dir=str(tmp_path))
    m = p["measured"]
    assert p["pm_cycles"] == p["pwq_cycles"] == round(m["flush_round_ns"] * m["cpu_ghz"])
    assert p["nt_cycles"] == round(m["nt_round_ns"] * m["cpu_ghz"])
    r = trace_sim.simulate(trace.read(hand_trace(tmp_path / "h.trace")), p)
    assert r["designs"]["x86-pwq"]["cycles"] == r["designs"]["x86"]["cycles"]
    assert r["designs"]["hops-pwq"]["cycles"] == r["designs"]["hops"]["cycles"]
