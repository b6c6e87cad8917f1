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
    def __init__(self):
        self.header = {}
        self.threads = defaultdict(list)   # tid -> [Event] in the thread's order
        self.sites = {}                    # id -> (file, line, function)
        self.pools = {}                    # pool id -> path (last open)
        self.complete = False              # END record present: written by a normal exit
        self.truncated = 0                 # bytes after the last whole record
        self.total_seq = 0

    def events(self):
        """Every event of every thread (DATA folded in), in seq order."""
        return heapq.merge(*self.threads.values(), key=lambda e: e.seq)

    def site_text(self, sid):
        s = self.sites.get(sid)
        if not s:
            return f"site {sid}" if sid else ""
        f, line, fn = s
        if f:
            return f"{f}:{line}" + (f" ({fn})" if fn else "")
        return fn or f"site {sid}"

    def os_tid(self, tid):
        for e in self.threads.get(tid, ()):
            if e.type == 1:
                return e.arg
        return None


def _decode_site(ev):
    file, _, func = (ev.data or b"").rstrip(b"\0").partition(b"\0")
    return file.decode(errors="replace"), ev.arg, func.decode(errors="replace")


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
    pending = {}           # tid -> event still collecting DATA records
    n = len(blob)
    while pos + CHUNK_HDR.size <= n:
        cmagic, tid, nrec, _, _ = CHUNK_HDR.unpack_from(blob, pos)
        if cmagic != CHUNK_MAGIC:
            raise TraceError(f"bad chunk header at byte {pos}: the file is corrupt")
        pos += CHUNK_HDR.size
        whole = min(nrec, (n - pos) // REC.size)
        end = pos + whole * REC.size
        out = t.threads[tid]
        base = pos
        for i, rec in enumerate(REC.iter_unpack(mv[pos:end])):
            if rec[0] == 16:                      # DATA: bytes of the event before it
                ev = pending.get(tid)
                if ev is not None:
                    off = base + i * REC.size + 2
                    ev.data = (ev.data or b"") + bytes(mv[off:off + rec[1]])
                continue
            ev = Event(tid, rec)
            pending[tid] = ev if rec[0] in WITH_DATA else None
            out.append(ev)
        pos = end
        if whole < nrec:
            break
    t.truncated = n - pos
    # the file's own records (tid 0): site names and the END mark
    for ev in t.threads.pop(0, []):
        if ev.type == 17:
            t.sites[ev.loc] = _decode_site(ev)
        elif ev.type == 19:
            t.complete = True
            t.total_seq = ev.arg
    for evs in t.threads.values():
        for ev in evs:
            if ev.type == 2:
                t.pools[ev.loc] = (ev.data or b"").decode(errors="replace")
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


def dump(t, out, as_json=False, limit=None):
    import json
    for k, ev in enumerate(t.events()):
        if limit is not None and k >= limit:
            break
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


def stats(t):
    """Counts per event type and per thread, and what each outermost
    transaction cost in flushes and fences (from its tx_begin to its
    tx_commit or tx_abort, in its thread's order)."""
    per_type = Counter()
    threads = {}
    txs = []
    outside = Counter()
    for tid, evs in sorted(t.threads.items()):
        th = Counter()
        first_tx = len(txs)
        cur = None
        dram = 0
        for ev in evs:
            name = ev.name
            per_type[name] += 1
            th[name] += 1
            ty = ev.type
            if ty == 18:
                dram = max(dram, ev.arg)
                continue
            if ty == 5 and ev.aux == 1:
                cur = Counter(tid=tid)
                continue
            if ty in (6, 7) and ev.aux == 1 and cur is not None:
                cur["outcome"] = "commit" if ty == 6 else "abort"
                txs.append(cur)
                cur = None
                continue
            if ty == 6 and cur is not None and ev.aux > 1:
                continue
            bucket = cur if cur is not None else outside
            if ty == 11:
                bucket["flushes"] += 1
                bucket["flushed_lines"] += ev.arg
            elif ty == 12:
                bucket["dfences" if ev.aux else "ofences"] += 1
            elif ty == 8:
                bucket["log_appends"] += 1
                bucket["log_bytes"] += ev.arg
            elif ty in (14, 15):
                bucket["pm_stores"] += 1
            elif ty == 13:
                bucket["ntstores"] += 1
                bucket["nt_lines"] += (ev.arg + 63) // 64
        threads[tid] = dict(os_tid=t.os_tid(tid), events=sum(th.values()),
                            pm_stores=th["store"] + th["store_range"], dram_stores=dram,
                            transactions=sum(1 for x in txs[first_tx:]),
                            flushes=th["flush"], ofences=th["ofence"], dfences=th["dfence"])
    keys = ("flushes", "flushed_lines", "ofences", "dfences", "log_appends", "log_bytes",
            "pm_stores", "ntstores")
    committed = [x for x in txs if x["outcome"] == "commit"]
    shapes = Counter((x["flushed_lines"], x["ofences"], x["dfences"]) for x in txs)
    return {
        "complete": t.complete,
        "truncated_bytes": t.truncated,
        "events": sum(per_type.values()),
        "per_type": dict(sorted(per_type.items())),
        "threads": threads,
        "pools": t.pools,
        "sites": len(t.sites),
        "transactions": {
            "committed": len(committed),
            "aborted": len(txs) - len(committed),
            "per_transaction_mean": {k: (sum(x[k] for x in txs) / len(txs) if txs else 0.0)
                                     for k in keys},
            "per_transaction_max": {k: max((x[k] for x in txs), default=0) for k in keys},
            # (flushed lines, ofences, dfences) -> how many transactions
            "shapes": [{"flushed_lines": s[0], "ofences": s[1], "dfences": s[2], "count": c}
                       for s, c in shapes.most_common(10)],
        },
        "outside_transactions": {k: outside[k] for k in keys},
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
