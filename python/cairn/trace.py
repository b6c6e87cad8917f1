"""Reader for CAIRN_TRACE files (the format: docs/runtime.md, "Traces";
the writer: runtime/trace.c).

    t = cairn.trace.read("run.trace")
    for ev in t.events():          # all threads, in global (seq) order
        print(ev.name, ev.addr_text(), ev.arg)
    t.threads[1]                   # one thread's events, in its program order

Parsing is chunk by chunk with struct.iter_unpack (standard library only):
about a second per million events. A file cut short (SIGKILL, disk full)
parses up to its last whole record; `complete` says whether the END record
that a normal exit writes is there.
"""
import heapq
import struct
from collections import Counter, defaultdict
from operator import itemgetter

MAGIC = b"CAIRNTRC"
CHUNK_MAGIC = b"CTCK"
VERSION = 1
FILE_HDR = struct.Struct("<8sIIIIQQQ16x")     # 64 bytes
CHUNK_HDR = struct.Struct("<4sIIIQ8x")        # 32 bytes
REC = struct.Struct("<BBHIQQQ")               # 32 bytes: type aux size loc seq addr arg
DATA_BYTES = 30

# record types (runtime/internal.h, enum trace_type)
TYPES = {
    1: "thread", 2: "pool_open", 3: "pool_close", 4: "pool_grow",
    5: "tx_begin", 6: "tx_commit", 7: "tx_abort", 8: "log_append",
    9: "alloc", 10: "free", 11: "flush", 12: "fence", 13: "ntstore",
    14: "store", 15: "store_range", 16: "data", 17: "site", 18: "dram_stores", 19: "end",
}
T = {name: num for num, name in TYPES.items()}
FLUSH_KINDS = ("clwb", "clflushopt", "clflush", "msync")
OPEN_KINDS = ("clean", "created", "recovered")
REL_BIT = 1 << 63
OFF_MASK = (1 << 40) - 1
ID_MASK = 0x7FFFFF
# the records whose bytes follow in DATA records
WITH_DATA = {T["pool_open"], T["store_range"], T["site"]}


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
        if t == 12:
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
    """threads: tid -> list of record tuples (TYPE, AUX, SIZE, LOC, SEQ, ADDR,
    ARG) in the thread's order, DATA records left out; data: (tid, index in
    that list) -> the bytes that followed the record. events() and
    thread_events() give Event objects."""

    def __init__(self):
        self.header = {}
        self.threads = defaultdict(list)
        self.data = {}
        self.sites = {}                    # id -> (file, line, function)
        self.pools = {}                    # pool id -> path (last open)
        self.complete = False              # END record present: written by a normal exit
        self.truncated = 0                 # bytes after the last whole record
        self.total_seq = 0

    def thread_events(self, tid):
        data = self.data
        for i, rec in enumerate(self.threads[tid]):
            yield Event(tid, rec, data.get((tid, i)) if rec[TYPE] in WITH_DATA else None)

    def events(self):
        """Every event of every thread, in seq order."""
        return heapq.merge(*(self.thread_events(tid) for tid in list(self.threads)),
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
        for rec in self.threads.get(tid, ()):
            if rec[TYPE] == 1:
                return rec[ARG]
        return None


def _decode_site(rec, data):
    file, _, func = (data or b"").rstrip(b"\0").partition(b"\0")
    return file.decode(errors="replace"), rec[ARG], func.decode(errors="replace")


def read(path):
    with open(path, "rb") as f:
        blob = f.read()
    return parse(blob)


def parse(blob):
    t = Trace()
    if len(blob) < FILE_HDR.size:
        raise TraceError(f"{len(blob)} bytes: too short for a cairn trace header")
    magic, ver, hsz, rsz, csz, pid, start_ns, start_unix = FILE_HDR.unpack_from(blob, 0)
    if magic != MAGIC:
        raise TraceError("not a cairn trace (bad magic); make one with CAIRN_TRACE=FILE")
    if ver != VERSION or rsz != REC.size or csz != CHUNK_HDR.size:
        raise TraceError(f"trace version {ver} (record {rsz} B) is not one this reader "
                         f"knows ({VERSION}); use the cairn that wrote it")
    t.header = dict(version=ver, pid=pid, start_ns=start_ns, start_unix=start_unix)
    pos = hsz
    mv = memoryview(blob)
    pending = {}           # tid -> key in t.data of the record collecting DATA
    chunks = defaultdict(list)
    n = len(blob)
    while pos + CHUNK_HDR.size <= n:
        cmagic, tid, nrec, _, _ = CHUNK_HDR.unpack_from(blob, pos)
        if cmagic != CHUNK_MAGIC:
            raise TraceError(f"bad chunk header at byte {pos}: the file is corrupt")
        pos += CHUNK_HDR.size
        whole = min(nrec, (n - pos) // REC.size)
        end = pos + whole * REC.size
        body = mv[pos:end]
        out = t.threads[tid]
        if not any(ty in WITH_DATA or ty == 16 for ty in set(blob[pos:end:REC.size])):
            out.extend(REC.iter_unpack(body))     # the common case: no bytes attached
            pending[tid] = None
        else:
            for i, rec in enumerate(REC.iter_unpack(body)):
                if rec[0] == 16:                  # DATA: bytes of the record before it
                    key = pending.get(tid)
                    if key is not None:
                        off = pos + i * REC.size + 2
                        t.data[key] = t.data.get(key, b"") + bytes(mv[off:off + rec[1]])
                    continue
                pending[tid] = (tid, len(out)) if rec[0] in WITH_DATA else None
                out.append(rec)
        pos = end
        if whole < nrec:
            break
    t.truncated = n - pos
    # the file's own records (tid 0): site names and the END mark
    for i, rec in enumerate(t.threads.pop(0, [])):
        if rec[TYPE] == 17:
            t.sites[rec[LOC]] = _decode_site(rec, t.data.get((0, i)))
        elif rec[TYPE] == 19:
            t.complete = True
            t.total_seq = rec[ARG]
    for tid, recs in t.threads.items():
        for i, rec in enumerate(recs):
            if rec[TYPE] == 2:
                t.pools[rec[LOC]] = t.data.get((tid, i), b"").decode(errors="replace")
    return t


# ---- presentation ----------------------------------------------------------

def describe(t, ev):
    """The fields of an event as (key, value) pairs, for text and JSON."""
    ty, aux = ev.type, ev.aux
    if ty == 1:
        return [("os_tid", ev.arg)]
    if ty in (2, 3):
        f = [("pool", ev.loc), ("base", f"{ev.addr:#x}"), ("size", ev.arg)]
        if ty == 2:
            f += [("how", OPEN_KINDS[aux] if aux < len(OPEN_KINDS) else aux),
                  ("path", (ev.data or b"").decode(errors="replace"))]
        return f
    if ty == 4:
        return [("pool", ev.loc), ("size", ev.arg)]
    if ty in (5, 6, 7):
        return [("pool", ev.loc), ("depth", aux), ("lane", ev.arg)]
    if ty == 8:
        return [("addr", ev.addr_text()), ("len", ev.arg)]
    if ty in (9, 10):
        f = [("addr", ev.addr_text()), ("size", ev.arg), ("in_tx", bool(aux & 1))]
        if aux & 2:
            f.append(("root", True))
        return f
    if ty == 11:
        return [("addr", ev.addr_text()), ("lines", ev.arg),
                ("kind", FLUSH_KINDS[aux] if aux < len(FLUSH_KINDS) else aux)]
    if ty == 12:
        return [("pool", ev.loc)]
    if ty == 13:
        return [("addr", ev.addr_text()), ("len", ev.arg)]
    if ty == 14:
        return [("addr", ev.addr_text()), ("size", ev.size), ("value", f"{ev.arg:#x}"),
                ("at", t.site_text(ev.loc))]
    if ty == 15:
        return [("addr", ev.addr_text()), ("len", ev.arg),
                ("bytes", (ev.data or b"").hex()), ("at", t.site_text(ev.loc))]
    if ty == 18:
        return [("count", ev.arg)]
    return [("aux", aux), ("size", ev.size), ("loc", ev.loc), ("addr", ev.addr_text()),
            ("arg", ev.arg)]


def dump(t, out, as_json=False, limit=None, types=None, tid=None):
    """Events in seq order, one line (or JSON object) each. types: names to
    keep ("fence" keeps both kinds); tid: one thread only."""
    import json
    evs = t.thread_events(tid) if tid is not None else t.events()
    k = 0
    for ev in evs:
        if types and ev.name not in types and TYPES.get(ev.type) not in types:
            continue
        if limit is not None and k >= limit:
            break
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


# what stats() adds up per transaction, in this order
TX_KEYS = ("flushes", "flushed_lines", "ofences", "dfences", "log_appends", "log_bytes",
           "pm_stores", "ntstores")


def stats(t):
    """Counts per event type and per thread, and what each outermost
    transaction cost in flushes and fences (from its tx_begin to its
    tx_commit or tx_abort, in its thread's order)."""
    per_type = Counter()
    threads = {}
    txs = []                # [outcome, tid, *TX_KEYS]
    outside = [0] * len(TX_KEYS)
    for tid, recs in sorted(t.threads.items()):
        th = Counter(map(itemgetter(TYPE), recs))
        ntx = len(txs)
        b = outside
        dram = dfences = 0
        for ty, aux, _, _, _, _, arg in recs:
            if ty == 11:
                b[0] += 1
                b[1] += arg
            elif ty == 12:
                if aux:
                    b[3] += 1
                    dfences += 1
                else:
                    b[2] += 1
            elif ty == 8:
                b[4] += 1
                b[5] += arg
            elif ty == 14 or ty == 15:
                b[6] += 1
            elif ty == 13:                  # whole lines written non-temporally: written back too
                b[7] += 1
                b[1] += (arg + 63) // 64
            elif ty == 5 and aux == 1:
                b = [0] * len(TX_KEYS)
            elif (ty == 6 or ty == 7) and aux == 1 and b is not outside:
                txs.append(["commit" if ty == 6 else "abort", tid] + b)
                b = outside
            elif ty == 18:
                dram = max(dram, arg)
        named = Counter({TYPES.get(k, f"type{k}"): v for k, v in th.items() if k != 12})
        named["dfence"], named["ofence"] = dfences, th[12] - dfences
        named += Counter()                          # drop zero counts
        per_type.update(named)
        threads[tid] = dict(os_tid=t.os_tid(tid), events=len(recs),
                            pm_stores=named["store"] + named["store_range"], dram_stores=dram,
                            transactions=len(txs) - ntx, flushes=named["flush"],
                            ofences=named["ofence"], dfences=named["dfence"])
    committed = sum(1 for x in txs if x[0] == "commit")
    cols = list(zip(*(x[2:] for x in txs))) if txs else [()] * len(TX_KEYS)
    shapes = Counter((x[3], x[4], x[5]) for x in txs)   # flushed lines, ofences, dfences
    return {
        "complete": t.complete,
        "truncated_bytes": t.truncated,
        "events": sum(per_type.values()),
        "per_type": dict(sorted(per_type.items())),
        "threads": threads,
        "pools": t.pools,
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


def print_stats(s, out, path):
    w = out.write
    state = "complete" if s["complete"] else \
        "INCOMPLETE: no END record (the process was killed or is still running)"
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
