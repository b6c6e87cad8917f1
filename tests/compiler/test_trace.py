"""cairn-cc --trace and `cairn trace`: a traced program's stores to PM come
back from the trace with their bytes and source lines, DRAM stores are
counted, threads keep their order, and the CLI reads the file."""
import json
import os
import re
import subprocess
import sys

import pytest

from conftest import BUILD, HERE, ROOT, build, run

sys.path.insert(0, str(ROOT / "python"))
from cairn import trace  # noqa: E402

SRC = HERE / "programs" / "trace_stores.c"


def marked_lines():
    lines = {}
    for no, text in enumerate(SRC.read_text().splitlines(), 1):
        m = re.search(r"TRACE:(\w+)", text)
        if m:
            lines[m.group(1)] = no
    return lines


def cli(*args):
    env = dict(os.environ, CAIRN_BUILD=str(BUILD),
               PYTHONPATH=str(ROOT / "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "cairn.cli", "trace", *args],
                          capture_output=True, text=True, env=env, timeout=300)


@pytest.fixture(scope="module")
def traced(tmp_path_factory, cairn_cc, runtime):
    out = tmp_path_factory.mktemp("trace")
    cache = {}

    def make(opt, *flags):
        key = (opt, flags)
        if key not in cache:
            tag = "".join(f.strip("-") for f in flags)
            cache[key] = build(cairn_cc, SRC, out / f"trace{opt}{tag}", opt, "--trace",
                               "-Wall", "-Werror", *flags)
        return cache[key]
    return make


def run_traced(prog, pool_path, tmp_path, mode):
    tf = tmp_path / f"{mode}.trace"
    r = run([prog, pool_path, mode], env={"CAIRN_TRACE": str(tf)})
    assert r.returncode == 0, r.stderr
    return tf, trace.read(tf)


def pm_image(t):
    """Every traced PM byte, last write wins: (pool, offset) -> byte."""
    img = {}
    for ev in t.events():
        if ev.type == trace.T["store"]:
            data = ev.arg.to_bytes(8, "little")[:ev.size]
        elif ev.type == trace.T["store_range"]:
            data = ev.data or b""
            assert len(data) == ev.arg
        else:
            continue
        for k, b in enumerate(data):
            img[(ev.pool, ev.offset + k)] = b
    return img


def read_img(img, pool, off, n):
    return bytes(img[(pool, off + k)] for k in range(n))


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_pm_stores_have_values_and_lines(traced, pool_path, tmp_path, opt):
    t = run_traced(traced(opt, "-g"), pool_path, tmp_path, "single")[1]
    assert t.complete
    evs = list(t.events())
    node = next(e for e in evs if e.name == "alloc" and e.aux & 1)      # in the tx
    root = next(e for e in evs if e.name == "alloc" and e.aux & 2)
    pool, noff, roff = node.pool, node.offset, root.offset
    img = pm_image(t)
    # struct node { key@0; next@8; name@16[24]; small@40; byte@44 }
    assert read_img(img, pool, noff, 8) == (0x1122334455667788).to_bytes(8, "little")
    assert read_img(img, pool, noff + 8, 8) == bytes(8)                 # next = NULL
    assert read_img(img, pool, noff + 16, 16) == b"persistent name\0"
    assert read_img(img, pool, noff + 40, 4) == (0xdeadbeef).to_bytes(4, "little")
    assert img[(pool, noff + 44)] == 0x5a
    # precompiled libc writing into PM (write-set files): strcpy, snprintf
    assert read_img(img, pool, noff + 45, 7) == b"single\0"
    assert read_img(img, pool, noff + 61, 10) == b"42-single\0"
    assert int.from_bytes(read_img(img, pool, roff + 8, 8), "little") == 7
    # the root's head holds the node in relative form: bit 63, pool id, offset
    head = int.from_bytes(read_img(img, pool, roff, 8), "little")
    assert head == (1 << 63) | (pool << 40) | noff
    # each marked line is the site of a store (file:line from -g), in its function
    lines = marked_lines()
    stores = [e for e in evs if e.name in ("store", "store_range")]
    sites = {t.sites[e.loc][1]: t.sites[e.loc] for e in stores}
    for name in ("key", "small", "byte", "name", "next", "head", "count", "strcpy", "snprintf"):
        assert lines[name] in sites, f"no PM store at line {lines[name]} ({name}): {sorted(sites)}"
        f, _, fn = sites[lines[name]]
        assert f.endswith("trace_stores.c")
        assert fn == ("set_key" if name == "key" else "main")
    # all of them inside the transaction, after the undo record of the root
    begin = next(e.seq for e in evs if e.name == "tx_begin")
    commit = next(e.seq for e in evs if e.name == "tx_commit")
    assert all(begin < e.seq < commit for e in stores)
    log = next(e for e in evs if e.name == "log_append" and e.offset == roff)
    head_store = next(e for e in stores if e.offset == roff and e.size == 8 and e.arg == head)
    assert log.seq < head_store.seq
    # DRAM stores are counted (64 to a global array, at least)
    dram = max(e.arg for e in evs if e.name == "dram_stores")
    assert dram >= 64 if opt == "-O0" else dram > 0


def test_without_debug_info_sites_name_the_function(traced, pool_path, tmp_path):
    t = run_traced(traced("-O1"), pool_path, tmp_path, "single")[1]
    funcs = {t.sites[e.loc] for e in t.events() if e.name == "store"}
    assert ("", 0, "set_key") in funcs and ("", 0, "main") in funcs


def test_threads_keep_their_order(traced, pool_path, tmp_path):
    tf, t = run_traced(traced("-O2", "-g"), pool_path, tmp_path, "threads")
    assert t.complete
    workers = 0
    for tid in t.threads:
        evs = list(t.thread_events(tid))
        seqs = [e.seq for e in evs if e.name != "dram_stores"]
        assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
        vals = [e.arg for e in evs if e.name == "store" and t.sites[e.loc][1] == marked_lines()["slot"]]
        if vals:
            workers += 1
            assert vals == list(range(200))                 # this thread's writes, in order
            begins = [e for e in evs if e.name == "tx_begin"]
            assert len(begins) == 200
    assert workers == 4
    s = trace.stats(t)
    assert s["transactions"]["committed"] == 800
    assert s["transactions"]["per_transaction_mean"]["dfences"] == 1
    # one 8-byte slot per transaction: record and mark written whole and
    # non-temporally, the data line flushed: 3 lines, as cairn_stats counts
    assert s["transactions"]["per_transaction_mean"]["flushed_lines"] == 3
    assert s["transactions"]["per_transaction_mean"]["ntstores"] == 2
    # the CLI agrees
    r = cli("stats", "--json", str(tf))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["transactions"]["committed"] == 800
    r = cli("stats", str(tf))
    assert r.returncode == 0 and "800 committed" in r.stdout


def test_long_copy_keeps_all_its_bytes(traced, pool_path, tmp_path):
    """A 200000-byte copy into PM is one store_range whose DATA records
    fill many buffers; each buffer written out adds the thread's
    dram_stores record after it, between the store_range and the rest of
    its bytes: the reader keeps collecting them (it kept 60 KB of 1 MB)."""
    tf, t = run_traced(traced("-O1", "-g"), pool_path, tmp_path, "bigcopy")
    want = bytes((i * 7 + (i >> 8)) & 0xFF for i in range(200000))
    ranges = [e for e in t.events() if e.name == "store_range" and e.arg == len(want)]
    assert len(ranges) == 1 and ranges[0].data == want
    assert t.site_text(ranges[0].loc).endswith(f"trace_stores.c:{marked_lines()['bigcopy']} (main)")
    r = cli("dump", "--json", "--type", "store_range", str(tf))
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    assert [bytes.fromhex(x["bytes"]) for x in rows if x["len"] == len(want)] == [want]


def test_dump_text_and_json(traced, pool_path, tmp_path):
    tf, t = run_traced(traced("-O0", "-g"), pool_path, tmp_path, "single")
    r = cli("dump", str(tf))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == sum(len(v) for v in t.threads.values())
    assert any(re.search(rf"store .*value=0x1122334455667788 .*at .*trace_stores.c:"
                         rf"{marked_lines()['key']} \(set_key\)", ln) for ln in lines)
    r = cli("dump", "--json", "--limit", "5", str(tf))
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    assert len(rows) == 5 and rows[0]["event"] == "thread"
    seqs = [x["seq"] for x in rows]
    assert seqs == sorted(seqs)
    r = cli("dump", "--json", "--type", "fence,tx_commit", "--thread", "1", str(tf))
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    names = {x["event"] for x in rows}
    assert names == {"ofence", "dfence", "tx_commit"}
    assert len(rows) == sum(1 for e in t.events() if e.type in (6, 12))
    r = cli("dump", "--type", "nonsense", str(tf))
    assert r.returncode == 2 and "unknown event type nonsense" in r.stderr


def test_trace_off_writes_nothing(traced, pool_path, tmp_path):
    prog = traced("-O2", "-g")
    env = {k: v for k, v in os.environ.items() if k != "CAIRN_TRACE"}
    env["CAIRN_PMEM_FORCE"] = "1"
    r = subprocess.run([str(prog), str(pool_path), "single"], capture_output=True, text=True,
                       env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert list(tmp_path.iterdir()) == []


def test_bad_path_and_bad_file(traced, pool_path, tmp_path):
    prog = traced("-O2", "-g")
    r = run([prog, pool_path, "single"], env={"CAIRN_TRACE": str(tmp_path / "no" / "x.trace")})
    assert r.returncode == 0
    msg = [ln for ln in r.stderr.splitlines() if "CAIRN_TRACE" in ln]
    assert len(msg) == 1 and "no/x.trace" in msg[0] and "writable" in msg[0]
    junk = tmp_path / "junk"
    junk.write_bytes(b"not a trace at all" * 10)
    r = cli("stats", str(junk))
    assert r.returncode == 2 and "not a cairn trace" in r.stderr


def test_killed_run_parses(traced, pool_path, tmp_path):
    tf, t = run_traced(traced("-O2", "-g"), pool_path, tmp_path, "threads")
    blob = tf.read_bytes()
    cut = tf.with_suffix(".cut")
    cut.write_bytes(blob[: len(blob) // 2 + 7])      # torn chunk, torn record
    r = cli("stats", str(cut))
    assert r.returncode == 0, r.stderr
    assert "INCOMPLETE" in r.stdout and "bytes of a torn record ignored" in r.stdout


def test_driver_help_mentions_trace(cairn_cc):
    r = subprocess.run([str(cairn_cc), "--help"], capture_output=True, text=True)
    assert "--trace" in r.stdout and "not yet" not in r.stdout


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_trace_build_logs_what_the_normal_build_logs(cairn_cc, tmp_path, opt):
    """The log optimizations see through the trace hooks: every counter of
    the pass except the trace's own is the same with and without --trace."""
    def counters(*flags):
        r = subprocess.run([str(cairn_cc), opt, "-g", "-c", "--cairn-stats", *flags,
                            str(HERE / "programs" / name), "-o", str(tmp_path / "x.o")],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        return [ln for ln in r.stderr.splitlines() if " cairn - " in ln and "trace:" not in ln]
    for name in ("trace_stores.c", "loops.c", "list.c", "legacy_stress.c"):
        assert counters("--trace") == counters(), name
