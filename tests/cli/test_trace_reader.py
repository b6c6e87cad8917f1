"""cairn.trace and `cairn trace` on traces written here byte by byte (the
format of docs/runtime.md, "Traces"): transactions that end in a nested
abort, bytes of a record split by an out-of-band dram_stores record, cut
files, a file still being written, and a trace too big to hold in memory."""
import fcntl
import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
from cairn import trace  # noqa: E402
from cairn.cli import main  # noqa: E402

POOL = 7
REL = (1 << 63) | (POOL << 40)


class Writer:
    """A trace as runtime/trace.c lays it out: header, then chunks."""

    def __init__(self, pid=4242):
        self.parts = [struct.pack("<8sIIIIQQQ16x", b"CAIRNTRC", 1, 64, 32, 32, pid, 1, 2)]
        self.seq = 0

    def rec(self, ty, aux=0, size=0, loc=0, addr=0, arg=0):
        self.seq += 1
        return struct.pack("<BBHIQQQ", ty, aux, size, loc, self.seq, addr, arg)

    @staticmethod
    def data(b):
        return [struct.pack("<BB30s", 16, len(b[i:i + 30]), b[i:i + 30])
                for i in range(0, len(b), 30)]

    def chunk(self, tid, recs, time_ns=0):
        self.parts.append(struct.pack("<4sIIIQ8x", b"CTCK", tid, len(recs), 0, time_ns)
                          + b"".join(recs))

    def end(self):
        self.chunk(0, [self.rec(19, arg=self.seq + 1)])

    def save(self, path):
        Path(path).write_bytes(b"".join(self.parts))
        return path


def tx(w, depth_events):
    """Records of tx_begin/commit/abort at the given (type, depth) plus one
    flush and one ofence inside each level."""
    out = []
    for ty, depth in depth_events:
        out.append(w.rec(ty, aux=depth, loc=POOL))
        if ty == 5:
            out += [w.rec(11, addr=REL | 0x1000, arg=1), w.rec(12, loc=POOL)]
    return out


def run_cli(*argv, capsys):
    rc = main(["trace", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_abort_at_depth_two_ends_the_transaction(tmp_path, capsys):
    """cairn_tx_abort in a nested level ends the whole flat transaction and
    is recorded with that level's depth: it is one aborted transaction,
    and what follows it is outside any transaction again."""
    w = Writer()
    recs = [w.rec(1, arg=99)]
    recs += tx(w, [(5, 1), (5, 2), (7, 2)])                   # aborted from depth 2
    recs += [w.rec(11, addr=REL, arg=3), w.rec(12, aux=1, loc=POOL)]   # outside: 3 lines, dfence
    recs += tx(w, [(5, 1), (6, 1)])                           # committed
    w.chunk(1, recs)
    w.end()
    s = trace.stats(trace.read(w.save(tmp_path / "a.trace")))
    assert s["transactions"]["aborted"] == 1 and s["transactions"]["committed"] == 1
    assert s["threads"][1]["transactions"] == 2
    assert s["transactions"]["per_transaction_max"]["flushes"] == 2      # two levels' flushes
    assert s["outside_transactions"]["flushed_lines"] == 3
    assert s["outside_transactions"]["dfences"] == 1
    rc, out, _ = run_cli("stats", str(tmp_path / "a.trace"), capsys=capsys)
    assert rc == 0 and "1 committed, 1 aborted" in out


def test_data_split_by_dram_stores_record(tmp_path):
    """A buffer written out in the middle of a store_range's bytes gets the
    thread's dram_stores record after it (runtime/trace.c, tbuf_write): the
    bytes after it still belong to the store_range."""
    w = Writer()
    payload = bytes(range(256)) * 4                            # 1024 bytes: 35 DATA records
    data = w.data(payload)
    w.chunk(1, [w.rec(1, arg=99), w.rec(15, loc=0, addr=REL | 0x40, arg=len(payload))] + data[:10])
    w.chunk(1, [w.rec(18, arg=5)])                             # out of band: DRAM store count
    w.chunk(1, data[10:] + [w.rec(14, size=8, addr=REL | 0x40, arg=1)])
    w.end()
    t = trace.read(w.save(tmp_path / "d.trace"))
    ev = [e for e in t.events() if e.name == "store_range"]
    assert len(ev) == 1 and ev[0].data == payload
    names = [e.name for e in t.thread_events(1)]
    assert names == ["thread", "store_range", "dram_stores", "store"]


def test_large_store_range_reads_in_linear_time(tmp_path):
    """A 4 MB copy into PM is 140 000 DATA records: joined once, not
    concatenated record by record (quadratic: minutes)."""
    import time
    w = Writer()
    payload = os.urandom(4 << 20)
    w.chunk(1, [w.rec(1, arg=99), w.rec(15, addr=REL, arg=len(payload))] + w.data(payload))
    w.end()
    path = w.save(tmp_path / "big.trace")
    t0 = time.monotonic()
    t = trace.read(path)
    assert next(e for e in t.events() if e.name == "store_range").data == payload
    assert time.monotonic() - t0 < 20


def test_cut_in_first_record_lists_no_empty_thread(tmp_path, capsys):
    w = Writer()
    w.chunk(1, [w.rec(1, arg=99), w.rec(12, loc=POOL)])
    blob = b"".join(w.parts)
    path = tmp_path / "cut.trace"
    path.write_bytes(blob[:64 + 32 + 20])                     # chunk header and a torn record
    s = trace.stats(trace.read(path))
    assert s["threads"] == {} and s["events"] == 0 and s["truncated_bytes"] == 20
    path.write_bytes(blob[:64 + 20])                          # a torn chunk header
    s = trace.stats(trace.read(path))
    assert s["truncated_bytes"] == 20
    rc, out, _ = run_cli("stats", str(path), capsys=capsys)
    assert rc == 0 and "20 bytes of a torn record ignored" in out


def test_file_still_being_written_is_told_from_a_killed_run(tmp_path, capsys):
    """The writer holds a flock on its file while it runs (trace.c,
    open_trace_file): a file without END whose lock is held is being
    written, not cut short."""
    w = Writer(pid=os.getpid())
    w.chunk(1, [w.rec(1, arg=99), w.rec(12, loc=POOL)])
    path = w.save(tmp_path / "live.trace")
    rc, out, err = run_cli("stats", str(path), capsys=capsys)
    assert "killed" in out and "still being written" not in out
    # a child holds the lock, as a traced program does
    child = subprocess.Popen([sys.executable, "-c",
                              "import fcntl,sys,time\n"
                              f"f=open({str(path)!r},'rb+'); fcntl.flock(f, fcntl.LOCK_EX)\n"
                              "print('locked', flush=True); time.sleep(60)"],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "locked"
        rc, out, err = run_cli("stats", str(path), capsys=capsys)
        assert rc == 0 and f"still being written by process {child.pid}" in out, out
        rc, out, err = run_cli("stats", "--json", str(path), capsys=capsys)
        assert json.loads(out)["writer_pid"] == child.pid
        rc, out, err = run_cli("dump", str(path), capsys=capsys)
        assert f"still being written by process {child.pid}" in err, err
        # and reading it took no lock a new writer would trip over
        with open(path, "rb") as f:
            with pytest.raises(BlockingIOError):
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        child.kill()
        child.wait()


def big_trace(path, events):
    """events/2 flush + ofence pairs in full 2048-record chunks."""
    w = Writer()
    pair = [w.rec(11, addr=REL | 0x40, arg=1), w.rec(12, loc=POOL)]
    first = [w.rec(1, arg=99)] + pair * 1023 + [pair[0]]
    body = struct.pack("<4sIIIQ8x", b"CTCK", 1, 2048, 0, 0) + b"".join(pair * 1024)
    with open(path, "wb") as f:
        f.write(w.parts[0])
        f.write(struct.pack("<4sIIIQ8x", b"CTCK", 1, 2048, 0, 0) + b"".join(first))
        for _ in range(events // 2048 - 1):
            f.write(body)
        f.write(struct.pack("<4sIIIQ8x", b"CTCK", 0, 1, 0, 0) + w.rec(19))
    return path


def max_rss_kb(*argv):
    # VmHWM, not getrusage's ru_maxrss: that one starts from the parent's
    # peak at fork (a pytest process that imported matplotlib is ~100 MB)
    code = ("import sys; sys.argv=['cairn',*sys.argv[1:]]\n"
            "from cairn.cli import main\n"
            "rc=main(sys.argv[1:])\n"
            "sys.stdout.flush()\n"
            "hwm=[l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0]\n"
            "print(hwm.split()[1], file=sys.stderr)\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    r = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True,
                       env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout, int(r.stderr.strip().splitlines()[-1])


def test_big_trace_is_streamed_not_held(tmp_path):
    """1M events (32 MB): stats and a --limit dump stay well under the
    ~190 MB a list of every record took (~770 MB for 4M events), and
    dump --limit stops reading at its limit."""
    path = big_trace(tmp_path / "big.trace", 1 << 20)
    out, rss = max_rss_kb("trace", "stats", "--json", str(path))
    s = json.loads(out)
    assert s["events"] == 1 << 20 and s["per_type"]["flush"] == 1 << 19
    assert rss < 100_000, f"stats of 1M events peaked at {rss} KB"
    out, rss = max_rss_kb("trace", "dump", "--limit", "3", str(path))
    assert len(out.splitlines()) == 3
    assert rss < 100_000, f"dump --limit 3 peaked at {rss} KB"


def test_progress_on_a_terminal(tmp_path, monkeypatch, capsys):
    path = big_trace(tmp_path / "p.trace", 1 << 16)
    monkeypatch.setattr(trace, "PROGRESS_AFTER", 0.0)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    rc, out, err = run_cli("stats", str(path), capsys=capsys)
    assert rc == 0 and "65536 events" in out
    assert "reading" in err and "%" in err


def test_type_list_takes_spaces_and_a_trailing_comma(tmp_path, capsys):
    w = Writer()
    w.chunk(1, [w.rec(1, arg=99), w.rec(11, addr=REL, arg=1), w.rec(12, aux=1, loc=POOL),
                w.rec(12, loc=POOL)])
    w.end()
    path = str(w.save(tmp_path / "t.trace"))
    rc, out, err = run_cli("dump", "--type", "flush, dfence,", path, capsys=capsys)
    assert rc == 0 and [ln.split()[2] for ln in out.splitlines()] == ["flush", "dfence"], err
    rc, out, err = run_cli("dump", "--type", ",", path, capsys=capsys)
    assert rc == 2 and "--type needs event names" in err and "unknown event type ;" not in err
