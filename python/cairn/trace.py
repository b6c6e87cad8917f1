"""Reader for CAIRN_TRACE files (the format: docs/runtime.md, "Traces";
the writer: runtime/trace.c).

    t = cairn.trace.read("run.trace")
    for ev in t.events():          # all threads, in global (seq) order
        print(ev.name, ev.addr_text(), ev.arg)
    t.threads[1]                   # one thread's records, in its program order (all loaded)

read() only indexes the chunks; events(), thread_events(), blocks() and
stats() read the file a chunk at a time with struct.iter_unpack (standard
library only), about 0.7 s per million events in a few MB, whatever the
size (threads and data load every record: for small traces). A file cut
short (SIGKILL, disk full) parses up to its last whole record; `complete`
says whether the END record that a normal exit writes is there, and
`writer_pid` which process is still writing a file that lacks it.
"""
import heapq
import io
import os
import stat
import struct
import sys
import time
from collections import Counter, defaultdict
from operator import itemgetter

MAGIC = b"CAIRNTRC"
CHUNK_MAGIC = b"CTCK"
VERSION = 1
FILE_HDR = struct.Struct("<8sIIIIQQQ16x")     # 64 bytes
CHUNK_HDR = struct.Struct("<4sIIIQ8x")        # 32 bytes
REC = struct.Struct("<BBHIQQQ")               # 32 bytes: type aux size loc seq addr arg
DATA_BYTES = 30



def _record_types():
    """number -> event name, from runtime/trace_types.h, the one list the
    writer's enum is made from (a copy installed beside this module wins)."""
    import re
    here = os.path.dirname(os.path.abspath(__file__))
    for path in (os.path.join(here, "trace_types.h"),
                 os.path.join(os.path.dirname(os.path.dirname(here)), "runtime", "trace_types.h")):
        try:
            with open(path) as f:
                text = f.read()
        except OSError:
            continue
        found = {int(n): name for n, name in
                 re.findall(r"^\s*X\(\s*(\d+)\s*,\s*\w+\s*,\s*(\w+)\s*\)", text, re.M)}
        if found:
            return found
    raise ImportError("cairn.trace: runtime/trace_types.h (the trace record types) was not "
                      f"found beside {here} or in the source tree; install it with the package")


TYPES = _record_types()
T = {name: num for num, name in TYPES.items()}
# the numbers this module tests records against, by name
R_THREAD = T["thread"]
R_POOL_OPEN = T["pool_open"]
R_POOL_CLOSE = T["pool_close"]
R_POOL_GROW = T["pool_grow"]
R_TX_BEGIN = T["tx_begin"]
R_TX_COMMIT = T["tx_commit"]
R_TX_ABORT = T["tx_abort"]
R_LOG_APPEND = T["log_append"]
R_ALLOC = T["alloc"]
R_FREE = T["free"]
R_FLUSH = T["flush"]
R_FENCE = T["fence"]
R_NTSTORE = T["ntstore"]
R_STORE = T["store"]
R_STORE_RANGE = T["store_range"]
R_DATA = T["data"]
R_SITE = T["site"]
R_DRAM_STORES = T["dram_stores"]
R_END = T["end"]
FLUSH_KINDS = ("clwb", "clflushopt", "clflush", "msync")
OPEN_KINDS = ("clean", "created", "recovered")
REL_BIT = 1 << 63
OFF_MASK = (1 << 40) - 1
ID_MASK = 0x7FFFFF
# the records whose bytes follow in DATA records
WITH_DATA = {T["pool_open"], T["store_range"], T["site"], T["line"], T["stack"],
             T["object"]}


class TraceError(Exception):
    """The file is not a cairn trace (or not a version this reader knows)."""


# fields of a record tuple, as Trace.threads holds them
TYPE, AUX, SIZE, LOC, SEQ, ADDR, ARG = range(7)


class Event:
    """One event. addr is a pool address in relative form (see pool/offset)
    or a plain virtual address; the meaning of aux, size, loc and arg
    depends on the type (docs/runtime.md has the table)."""
    __slots__ = ("seq", "tid", "type", "aux", "size", "loc", "addr", "arg", "data")

    def __init__(self, tid, rec, data=None):
        self.type, self.aux, self.size, self.loc, self.seq, self.addr, self.arg = rec
        self.tid = tid
        self.data = data

    @property
    def name(self):
        t = self.type
        if t == R_FENCE:
            return "dfence" if self.aux else "ofence"
        return TYPES.get(t, f"type{t}")

    @property
    def in_pool(self):
        return bool(self.addr & REL_BIT)

    @property
    def pool(self):
        return (self.addr >> 40) & ID_MASK if self.addr & REL_BIT else None

    @property
    def offset(self):
        return self.addr & OFF_MASK if self.addr & REL_BIT else None

    def addr_text(self):
        a = self.addr
        if a & REL_BIT:
            return f"{(a >> 40) & ID_MASK}+{a & OFF_MASK:#x}"
        return f"{a:#x}"


class Trace:
    """A trace file, indexed chunk by chunk: records are read from the file
    as they are asked for, a chunk (2048 records) at a time, so a trace
    bigger than memory streams through blocks(), thread_events(), events()
    and stats(). threads and data hold every record at once (for small
    traces): tid -> list of record tuples (TYPE, AUX, SIZE, LOC, SEQ, ADDR,
    ARG) in the thread's order, DATA records left out; (tid, index in that
    list) -> the bytes that followed the record."""

    def __init__(self, opener):
        self._open = opener                # () -> a binary file positioned anywhere
        self.path = None                   # the file, when read from a regular file
        self.header = {}
        self.chunks = {}                   # tid -> [(file offset, whole records)], in file order
        self.chunk_times = {}              # tid -> [CLOCK_MONOTONIC ns each chunk was written]
        self.records = 0                   # records in the threads' chunks (DATA included)
        self.sites = {}                    # id -> (file, line, function)
        self.complete = False              # END record present: written by a normal exit
        self.truncated = 0                 # bytes after the last whole record
        self.total_seq = 0
        self.writer_pid = None             # no END, and this process still holds the file's lock
        self._threads = self._data = self._pools = None

    def blocks(self, tid, progress=None):
        """One thread's records in its order, a chunk at a time: (records,
        data) with records a list of record tuples (DATA left out) and data
        {index in records: bytes} for the records that carry bytes. A
        record's bytes may run on into the thread's next chunks, with the
        thread's dram_stores record (written out of band when a buffer is
        written out) between them: the block is given when they are whole.
        progress(n) is called with the records read (DATA included)."""
        recs, data, pend = [], {}, None
        with self._open() as f:
            for pos, nrec in self.chunks.get(tid, ()):
                f.seek(pos)
                body = f.read(nrec * REC.size)
                nrec = len(body) // REC.size          # the file shrank since it was indexed
                body = body[:nrec * REC.size]
                if pend is None and _CARRY.isdisjoint(body[::REC.size]):
                    recs.extend(REC.iter_unpack(body))      # the common case: no bytes attached
                else:
                    for i, rec in enumerate(REC.iter_unpack(body)):
                        ty = rec[0]
                        if ty == R_DATA:                    # DATA: bytes of the record before it
                            if pend is not None:
                                off = i * REC.size + 2
                                pend.append(body[off:off + rec[1]])
                            continue
                        if ty != R_DRAM_STORES:
                            pend = None
                        if ty in WITH_DATA:
                            pend = data[len(recs)] = []
                        recs.append(rec)
                if progress:
                    progress(nrec)
                if pend is None and recs:
                    yield recs, {k: b"".join(v) for k, v in data.items()}
                    recs, data = [], {}
        if recs:
            yield recs, {k: b"".join(v) for k, v in data.items()}

    def thread_events(self, tid, keep=None):
        """Event objects of one thread, in its order; keep(record tuple)
        picks some before they are made."""
        for recs, data in self.blocks(tid):
            if not data:
                for rec in recs if keep is None else filter(keep, recs):
                    yield Event(tid, rec)
            else:
                for i, rec in enumerate(recs):
                    if keep is None or keep(rec):
                        yield Event(tid, rec, data.get(i))

    def events(self, keep=None):
        """Every event of every thread, in seq order."""
        return heapq.merge(*(self.thread_events(tid, keep) for tid in sorted(self.chunks)),
                           key=lambda e: e.seq)

    def site_text(self, sid):
        s = self.sites.get(sid)
        if not s:
            return f"site {sid}" if sid else ""
        f, line, fn = s
        if f:
            return f"{f}:{line}" + (f" ({fn})" if fn else "")
        return fn or f"site {sid}"

    def os_tid(self, tid):
        for recs, _ in self.blocks(tid):
            for rec in recs:
                if rec[TYPE] == R_THREAD:
                    return rec[ARG]
            return None
        return None

    def _load(self):
        self._threads, self._data = {}, {}
        for tid in sorted(self.chunks):
            out = self._threads[tid] = []
            for recs, data in self.blocks(tid):
                for i, b in data.items():
                    self._data[(tid, len(out) + i)] = b
                out.extend(recs)

    @property
    def threads(self):
        if self._threads is None:
            self._load()
        return self._threads

    @property
    def data(self):
        if self._data is None:
            self._load()
        return self._data

    @property
    def pools(self):
        """pool id -> path (last open)."""
        if self._pools is None:
            self._pools = {}
            for tid in sorted(self.chunks):
                for recs, data in self.blocks(tid):
                    for i, b in data.items():
                        if recs[i][TYPE] == R_POOL_OPEN:
                            self._pools[recs[i][LOC]] = b.decode(errors="replace")
        return self._pools


# a chunk holding one of these record types takes the slow path in blocks()
_CARRY = frozenset(WITH_DATA | {R_DATA})


def _decode_site(rec, data):
    file, _, func = (data or b"").rstrip(b"\0").partition(b"\0")
    return file.decode(errors="replace"), rec[ARG], func.decode(errors="replace")


def read(path):
    """Index the trace at path (a regular file is read as it is asked for;
    a pipe or other stream is read whole first)."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            return parse(f.read())
        t = _index(Trace(lambda: open(path, "rb")), f, st.st_size)
    t.path = path
    if not t.complete:
        t.writer_pid = _lock_holder(st)
    return t


def parse(blob):
    """A trace from its bytes."""
    blob = bytes(blob)
    with io.BytesIO(blob) as f:
        return _index(Trace(lambda: io.BytesIO(blob)), f, len(blob))


def _index(t, f, n):
    head = f.read(FILE_HDR.size)
    if len(head) < FILE_HDR.size:
        raise TraceError(f"{len(head)} bytes: too short for a cairn trace header")
    magic, ver, hsz, rsz, csz, pid, start_ns, start_unix = FILE_HDR.unpack(head)
    if magic != MAGIC:
        raise TraceError("not a cairn trace (bad magic); make one with CAIRN_TRACE=FILE")
    if ver != VERSION or rsz != REC.size or csz != CHUNK_HDR.size:
        raise TraceError(f"trace version {ver} (record {rsz} B) is not one this reader "
                         f"knows ({VERSION}); use the cairn that wrote it")
    t.header = dict(version=ver, pid=pid, start_ns=start_ns, start_unix=start_unix)
    pos = hsz
    own = []                                  # the file's own chunks (tid 0): sites, END
    while pos + CHUNK_HDR.size <= n:
        f.seek(pos)
        ch = f.read(CHUNK_HDR.size)
        if len(ch) < CHUNK_HDR.size:
            break
        cmagic, tid, nrec, _, when = CHUNK_HDR.unpack(ch)
        if cmagic != CHUNK_MAGIC:
            raise TraceError(f"bad chunk header at byte {pos}: the file is corrupt")
        pos += CHUNK_HDR.size
        whole = min(nrec, (n - pos) // REC.size)
        if whole:
            (own if tid == 0 else t.chunks.setdefault(tid, [])).append((pos, whole))
            if tid:
                t.records += whole
                t.chunk_times.setdefault(tid, []).append(when)
        pos += whole * REC.size
        if whole < nrec:
            break
    t.truncated = n - pos
    t.chunks[0] = own
    for recs, data in t.blocks(0):
        for i, rec in enumerate(recs):
            if rec[TYPE] == R_SITE:
                t.sites[rec[LOC]] = _decode_site(rec, data.get(i))
            elif rec[TYPE] == R_END:
                t.complete = True
                t.total_seq = rec[ARG]
    del t.chunks[0]
    return t


def _lock_holder(st):
    """The process holding a flock on the file st describes (a traced
    program holds one on its trace while it runs: runtime/trace.c), from
    /proc/locks, which takes no lock of its own; None if none or unknown."""
    want = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    try:
        with open("/proc/locks") as f:
            for line in f:
                p = line.split()
                if len(p) >= 6 and p[1] == "FLOCK" and p[5] == want:
                    return int(p[4])
    except (OSError, ValueError):
        pass
    return None


class Progress:
    """`reading FILE: NN%` on stderr while a long pass runs: in place on a
    terminal (after PROGRESS_AFTER seconds), else a line every
    PROGRESS_EVERY seconds; nothing for a pass shorter than that."""

    def __init__(self, total, label, stream=None):
        self.total, self.label, self.done = max(total, 1), label, 0
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.t0 = time.monotonic()
        self.next = self.t0 + (PROGRESS_AFTER if self.tty else PROGRESS_EVERY)
        self.shown = False

    def __call__(self, n):
        self.done += n
        now = time.monotonic()
        if now < self.next:
            return
        self.next = now + (0.2 if self.tty else PROGRESS_EVERY)
        pct = 100 * self.done // self.total
        text = f"cairn trace: reading {self.label}: {pct}% ({self.done} of {self.total} records)"
        self.stream.write(f"\r{text}\033[K" if self.tty else text + "\n")
        self.stream.flush()
        self.shown = True

    def finish(self):
        if self.shown and self.tty:
            self.stream.write("\r\033[K")
            self.stream.flush()


PROGRESS_AFTER = 1.0
PROGRESS_EVERY = 10.0


# ---- presentation ----------------------------------------------------------

def describe(t, ev):
    """The fields of an event as (key, value) pairs, for text and JSON."""
    ty, aux = ev.type, ev.aux
    if ty == R_THREAD:
        return [("os_tid", ev.arg)]
    if ty in (R_POOL_OPEN, R_POOL_CLOSE):
        f = [("pool", ev.loc), ("base", f"{ev.addr:#x}"), ("size", ev.arg)]
        if ty == R_POOL_OPEN:
            f += [("how", OPEN_KINDS[aux] if aux < len(OPEN_KINDS) else aux),
                  ("path", (ev.data or b"").decode(errors="replace"))]
        return f
    if ty == R_POOL_GROW:
        return [("pool", ev.loc), ("size", ev.arg)]
    if ty in (R_TX_BEGIN, R_TX_COMMIT, R_TX_ABORT):
        return [("pool", ev.loc), ("depth", aux), ("lane", ev.arg)]
    if ty == R_LOG_APPEND:
        return [("addr", ev.addr_text()), ("len", ev.arg)]
    if ty in (R_ALLOC, R_FREE):
        f = [("addr", ev.addr_text()), ("size", ev.arg), ("in_tx", bool(aux & 1))]
        if aux & 2:
            f.append(("root", True))
        return f
    if ty == R_FLUSH:
        return [("addr", ev.addr_text()), ("lines", ev.arg),
                ("kind", FLUSH_KINDS[aux] if aux < len(FLUSH_KINDS) else aux)]
    if ty == R_FENCE:
        return [("pool", ev.loc)]
    if ty == R_NTSTORE:
        return [("addr", ev.addr_text()), ("len", ev.arg)]
    if ty == R_STORE:
        return [("addr", ev.addr_text()), ("size", ev.size), ("value", f"{ev.arg:#x}"),
                ("at", t.site_text(ev.loc))]
    if ty == R_STORE_RANGE:
        return [("addr", ev.addr_text()), ("len", ev.arg),
                ("bytes", (ev.data or b"").hex()), ("at", t.site_text(ev.loc))]
    if ty == R_DRAM_STORES:
        return [("count", ev.arg)]
    return [("aux", aux), ("size", ev.size), ("loc", ev.loc), ("addr", ev.addr_text()),
            ("arg", ev.arg)]


def _keeper(types):
    """A test on record tuples for dump --type: names as Event.name gives
    them ("fence" keeps both kinds), or None for all."""
    if not types:
        return None
    nums = {num for num, name in TYPES.items() if name in types}
    if "fence" not in types and ("ofence" in types) != ("dfence" in types):
        nums.discard(R_FENCE)
        aux = 1 if "dfence" in types else 0
        return lambda r: r[0] in nums or (r[0] == R_FENCE and (r[1] != 0) == aux)
    if "ofence" in types or "dfence" in types:
        nums.add(R_FENCE)
    return lambda r: r[0] in nums


def dump(t, out, as_json=False, limit=None, types=None, tid=None):
    """Events in seq order, one line (or JSON object) each. types: names to
    keep ("fence" keeps both kinds); tid: one thread only."""
    import json
    if limit == 0:
        return
    keep = _keeper(types)
    evs = t.thread_events(tid, keep) if tid is not None else t.events(keep)
    k = 0
    for ev in evs:
        k += 1
        fields = describe(t, ev)
        if as_json:
            d = {"seq": ev.seq, "tid": ev.tid, "event": ev.name}
            d.update(fields)
            out.write(json.dumps(d) + "\n")
        else:
            text = " ".join(f"{k}={v}" for k, v in fields if k not in ("at", "bytes"))
            at = dict(fields).get("at")
            out.write(f"{ev.seq:>10} t{ev.tid:<3} {ev.name:<12} {text}"
                      + (f"  at {at}" if at else "") + "\n")
        if limit is not None and k >= limit:
            break


# what stats() adds up per transaction, in this order
TX_KEYS = ("flushes", "flushed_lines", "ofences", "dfences", "log_appends", "log_bytes",
           "pm_stores", "ntstores")


def stats(t, progress=None):
    """Counts per event type and per thread, and what each outermost
    transaction cost in flushes and fences (from its tx_begin at depth 1
    to the tx_commit at depth 1 or a tx_abort at any depth, which ends the
    whole flat transaction; in its thread's order). One pass over the
    file, a chunk at a time; progress(n) as in Trace.blocks."""
    per_type = Counter()
    threads = {}
    pools = {}
    txs = []                # [outcome, tid, *TX_KEYS]
    outside = [0] * len(TX_KEYS)
    for tid in sorted(t.chunks):
        th = Counter()
        ntx = len(txs)
        b = outside
        dram = dfences = nrecs = 0
        os_tid = None
        for recs, data in t.blocks(tid, progress):
            nrecs += len(recs)
            th.update(map(itemgetter(TYPE), recs))
            for i, d in data.items():
                if recs[i][TYPE] == R_POOL_OPEN:
                    pools[recs[i][LOC]] = d.decode(errors="replace")
            for ty, aux, _, _, _, _, arg in recs:
                if ty == R_FLUSH:
                    b[0] += 1
                    b[1] += arg
                elif ty == R_FENCE:
                    if aux:
                        b[3] += 1
                        dfences += 1
                    else:
                        b[2] += 1
                elif ty == R_LOG_APPEND:
                    b[4] += 1
                    b[5] += arg
                elif ty == R_STORE or ty == R_STORE_RANGE:
                    b[6] += 1
                elif ty == R_NTSTORE:       # whole lines written non-temporally: written back too
                    b[7] += 1
                    b[1] += (arg + 63) // 64
                elif ty == R_TX_BEGIN and aux == 1:
                    b = [0] * len(TX_KEYS)
                elif ((ty == R_TX_COMMIT and aux == 1) or ty == R_TX_ABORT) and b is not outside:
                    txs.append(["commit" if ty == R_TX_COMMIT else "abort", tid] + b)
                    b = outside
                elif ty == R_DRAM_STORES:
                    dram = max(dram, arg)
                elif ty == R_THREAD and os_tid is None:
                    os_tid = arg
        named = Counter({TYPES.get(k, f"type{k}"): v for k, v in th.items() if k != R_FENCE})
        named["dfence"], named["ofence"] = dfences, th[R_FENCE] - dfences
        named += Counter()                          # drop zero counts
        per_type.update(named)
        threads[tid] = dict(os_tid=os_tid, events=nrecs,
                            pm_stores=named["store"] + named["store_range"], dram_stores=dram,
                            transactions=len(txs) - ntx, flushes=named["flush"],
                            ofences=named["ofence"], dfences=named["dfence"])
    committed = sum(1 for x in txs if x[0] == "commit")
    cols = list(zip(*(x[2:] for x in txs))) if txs else [()] * len(TX_KEYS)
    shapes = Counter((x[3], x[4], x[5]) for x in txs)   # flushed lines, ofences, dfences
    return {
        "complete": t.complete,
        "writer_pid": t.writer_pid,
        "truncated_bytes": t.truncated,
        "events": sum(per_type.values()),
        "per_type": dict(sorted(per_type.items())),
        "threads": threads,
        "pools": pools,
        "sites": len(t.sites),
        "transactions": {
            "committed": committed,
            "aborted": len(txs) - committed,
            "per_transaction_mean": {k: (sum(c) / len(c) if c else 0.0)
                                     for k, c in zip(TX_KEYS, cols)},
            "per_transaction_max": {k: max(c, default=0) for k, c in zip(TX_KEYS, cols)},
            "shapes": [{"flushed_lines": s[0], "ofences": s[1], "dfences": s[2], "count": c}
                       for s, c in shapes.most_common(10)],
        },
        "outside_transactions": dict(zip(TX_KEYS, outside)),
    }


def incomplete_text(writer_pid):
    """Why a trace has no END record, in words."""
    if writer_pid:
        return f"still being written by process {writer_pid} (what it has written so far)"
    return "the process was killed or ended without exit()"


def print_stats(s, out, path):
    w = out.write
    state = "complete" if s["complete"] else \
        f"INCOMPLETE: no END record: {incomplete_text(s.get('writer_pid'))}"
    w(f"{path}: {s['events']} events, {len(s['threads'])} threads, {state}")
    w(f", {s['truncated_bytes']} bytes of a torn record ignored\n" if s["truncated_bytes"] else "\n")
    for pid, path_ in sorted(s["pools"].items()):
        w(f"pool {pid}: {path_}\n")
    w("\nevents per type\n")
    for name, c in sorted(s["per_type"].items(), key=lambda kv: -kv[1]):
        w(f"  {name:<12} {c:>12}\n")
    w("\nper thread\n")
    w(f"  {'tid':>4} {'os tid':>8} {'events':>10} {'tx':>8} {'flushes':>9} {'ofences':>8} "
      f"{'dfences':>8} {'PM stores':>10} {'DRAM stores':>12}\n")
    for tid, th in sorted(s["threads"].items()):
        w(f"  {tid:>4} {th['os_tid'] or '?':>8} {th['events']:>10} {th['transactions']:>8} "
          f"{th['flushes']:>9} {th['ofences']:>8} {th['dfences']:>8} {th['pm_stores']:>10} "
          f"{th['dram_stores']:>12}\n")
    tx = s["transactions"]
    w(f"\ntransactions: {tx['committed']} committed, {tx['aborted']} aborted\n")
    if tx["committed"] + tx["aborted"]:
        w(f"  {'per transaction':<16} {'mean':>10} {'max':>8}\n")
        for k, v in tx["per_transaction_mean"].items():
            w(f"  {k:<16} {v:>10.2f} {tx['per_transaction_max'][k]:>8}\n")
        w("  most common (flushed lines, ofences, dfences):\n")
        for sh in tx["shapes"]:
            w(f"    ({sh['flushed_lines']}, {sh['ofences']}, {sh['dfences']}) x {sh['count']}\n")
    o = s["outside_transactions"]
    w(f"outside transactions: {o['flushes']} flushes ({o['flushed_lines']} lines), "
      f"{o['ofences']} ofences, {o['dfences']} dfences, {o['pm_stores']} PM stores\n")
