"""Epochs of a CAIRN_TRACE file: the unit `cairn trace report` and `cairn
sim` both work in (docs/trace.md, "Epochs").

An epoch is what one thread wrote to PM between two of its fences
(WHISPER section 5.1: stores, cacheable or non-temporal, between two
sfences; cairn's ofence and dfence are both sfences on x86). What it wrote
is the set of 64-byte lines of its `store` and `store_range` events (the
program's stores, from cairn-cc --trace), its `ntstore` events and its
`flush` events: the runtime's own writes to PM (log records, the commit
mark, allocator metadata) are not `store` events and show only as the
lines it writes non-temporally or flushes, so a flushed line counts as
written in the epoch that flushes it.

epochs(trace) streams Epoch tuples of all threads in global order (by the
seq of the fence that ends them), reading the file a chunk at a time.
"""
import bisect
import glob
import heapq
import os
import re
from collections import namedtuple

from cairn import trace as tr

LINE = 64

# region of a pool offset, from the pool layout in the runtime's headers
HEADER, LOG, COMMIT, ALLOC_META, HEAP, DRAM = "pool header", "log", "commit", \
    "allocator metadata", "heap data", "DRAM"


def _layout():
    """The pool geometry the regions need, read from the runtime's headers
    (the one place it is written): lanes, chunk and zone sizes."""
    want = ("LANES_OFF", "NLANES", "LANE_SIZE", "CHUNK_SHIFT", "ZONE_CHUNKS")
    here = os.path.dirname(os.path.abspath(__file__))
    dirs = [here, os.path.join(os.path.dirname(os.path.dirname(here)), "runtime")]
    found = {}
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(d, "*.h"))):
            with open(path, errors="replace") as f:
                text = f.read()
            for name, expr in re.findall(r"^#define\s+CAIRN_(\w+)\s+(.+?)\s*(?:/\*.*)?$", text, re.M):
                if name in want and name not in found:
                    expr = re.sub(r"\(\s*uint64_t\s*\)", "", expr).replace("u", "")
                    if re.fullmatch(r"[\d\s()<x*+-]+", expr):
                        found[name] = eval(expr, {"__builtins__": {}})     # digits and operators only
        if len(found) == len(want):
            break
    if len(found) != len(want):
        raise ImportError("cairn.trace_epochs: the pool layout (CAIRN_LANES_OFF, ...) was not found "
                          f"in runtime/*.h beside {here} or in the source tree")
    chunk = 1 << found["CHUNK_SHIFT"]
    lanes_end = found["LANES_OFF"] + found["NLANES"] * found["LANE_SIZE"]
    return found["LANES_OFF"], lanes_end, (lanes_end + chunk - 1) & ~(chunk - 1), \
        chunk, chunk * found["ZONE_CHUNKS"]


LANES_OFF, LANES_END, HEAP_OFF, CHUNK, ZONE = _layout()


def region(line_addr):
    """Where a line (its address as the trace records it) lies: a pool's
    header, log lanes, a zone's chunk table (allocator metadata), the heap,
    or DRAM. Lane writes are LOG here; epochs closed by a dfence make them
    COMMIT (the mark)."""
    if not line_addr & tr.REL_BIT:
        return DRAM
    off = line_addr & tr.OFF_MASK
    if off < LANES_OFF:
        return HEADER
    if off < LANES_END:
        return LOG
    if off >= HEAP_OFF and (off - HEAP_OFF) % ZONE < CHUNK:
        return ALLOC_META
    return HEAP


# One epoch. lines: frozenset of line addresses written; stored: lines the
# program's own stores wrote (a dict: line -> the site of the
# last store to it); flushed: lines flushed or written
# non-temporally; store_bytes / nt_bytes: bytes of store and
# ntstore events; flush_lines / nt_lines: lines flushed and written
# non-temporally (with repeats); stores: store events; dram: DRAM stores
# since the last epoch; fence: 0 ofence, 1 dfence, None (the trace ended
# with the epoch open); tx: the fence is inside a transaction; time_ns: the
# fence's time, estimated (see Timer); site: the source site of its first
# store, or None (only the runtime wrote in it); eid: the epoch's number in its
# thread.
Epoch = namedtuple("Epoch", "seq tid eid fence tx time_ns lines stored flushed store_bytes nt_bytes "
                            "flush_lines nt_lines stores dram site")

# An outermost transaction: its thread, its fences (its epochs: WHISPER's
# ordering points per transaction), committed or aborted, and the bytes
# its log_append events declared (what it said it would write).
Tx = namedtuple("Tx", "tid fences committed log_bytes")


class Timer:
    """Each record's time, estimated: a chunk header carries the time it
    was written, so a thread's records between two of its chunks are spread
    evenly over that interval (from the trace's start for its first chunk).
    A traced program runs slower than an untraced one (docs/trace.md), so
    these are the traced run's times."""

    def __init__(self, t, tid):
        self.times = t.chunk_times.get(tid, [])
        self.start = t.header.get("start_ns", 0)
        self.done = 0                          # chunks read so far

    def progress(self, n):
        self.done += 1

    def spread(self, k0, k1, count):
        """Times for count records read from chunks k0..k1-1."""
        lo = self.times[k0 - 1] if k0 > 0 else self.start
        hi = self.times[k1 - 1] if k1 > 0 else lo
        hi = max(hi, lo)
        step = (hi - lo) / count if count else 0
        return lo, step


def thread_epochs(t, tid, txs, runtime_events, progress=None):
    """One thread's epochs, in its order. Appends its transactions to txs
    and counts its runtime events (name -> number) in runtime_events."""
    timer = Timer(t, tid)

    def prog(n):
        timer.progress(n)
        if progress:
            progress(n)

    lines, stored, flushed = set(), {}, set()
    store_bytes = nt_bytes = flush_lines = nt_lines = stores = 0
    dram_seen = dram_last = 0
    site = None
    eid = 0
    in_tx = False
    tx_fences = tx_log = 0
    R_STORE, R_RANGE, R_NT, R_FLUSH, R_FENCE = tr.R_STORE, tr.R_STORE_RANGE, tr.R_NTSTORE, \
        tr.R_FLUSH, tr.R_FENCE
    R_BEGIN, R_COMMIT, R_ABORT, R_LOG, R_DRAM = tr.R_TX_BEGIN, tr.R_TX_COMMIT, tr.R_TX_ABORT, \
        tr.R_LOG_APPEND, tr.R_DRAM_STORES
    named = {tr.R_LOG_APPEND: "log_append", tr.R_ALLOC: "alloc", tr.R_FREE: "free",
             tr.R_TX_BEGIN: "tx_begin", tr.R_TX_COMMIT: "tx_commit", tr.R_TX_ABORT: "tx_abort"}
    k0 = 0
    last_seq = 0
    for recs, _ in t.blocks(tid, prog):
        k1 = timer.done
        t0, step = timer.spread(k0, k1, len(recs))
        k0 = k1
        for i, (ty, aux, size, loc, seq, addr, arg) in enumerate(recs):
            last_seq = seq
            if ty == R_STORE or ty == R_RANGE:      # a store's size is in size, a range's in arg
                n = size if ty == R_STORE else arg
                for ln in range(addr & ~63, addr + n, LINE):
                    lines.add(ln)
                    stored[ln] = loc
                store_bytes += n
                stores += 1
                if site is None:
                    site = loc
            elif ty == R_FLUSH:
                first = addr & ~63
                span = range(first, first + arg * LINE, LINE)
                lines.update(span)
                flushed.update(span)
                flush_lines += arg
            elif ty == R_NT:
                first = addr & ~63
                n = (addr + arg - first + 63) // LINE
                span = range(first, first + n * LINE, LINE)
                lines.update(span)
                flushed.update(span)
                nt_lines += n
                nt_bytes += arg
            elif ty == R_FENCE:
                if in_tx:
                    tx_fences += 1
                dram = dram_seen - dram_last
                dram_last = dram_seen
                yield Epoch(seq, tid, eid, 1 if aux else 0, in_tx, int(t0 + step * i),
                            frozenset(lines), stored, frozenset(flushed), store_bytes,
                            nt_bytes, flush_lines, nt_lines, stores, dram, site)
                eid += 1
                lines, stored, flushed = set(), {}, set()
                store_bytes = nt_bytes = flush_lines = nt_lines = stores = 0
                site = None
            elif ty == R_DRAM:
                dram_seen = max(dram_seen, arg)
            else:
                name = named.get(ty)
                if name:
                    runtime_events[name] = runtime_events.get(name, 0) + 1
                if ty == R_BEGIN and aux == 1:
                    in_tx, tx_fences, tx_log = True, 0, 0
                elif in_tx and ((ty == R_COMMIT and aux == 1) or ty == R_ABORT):
                    txs.append(Tx(tid, tx_fences, ty == R_COMMIT, tx_log))
                    in_tx = False
                elif ty == R_LOG and in_tx:
                    tx_log += arg
    dram = dram_seen - dram_last
    if lines or dram or stores:
        yield Epoch(last_seq + 0.5, tid, eid, None, in_tx,
                    int(timer.times[-1] if timer.times else timer.start),
                    frozenset(lines), stored, frozenset(flushed), store_bytes,
                    nt_bytes, flush_lines, nt_lines, stores, dram, site)


def epochs(t, txs, runtime_events, progress=None):
    """Every thread's epochs in global order (by the seq of their fence)."""
    streams = [thread_epochs(t, tid, txs, runtime_events, progress) for tid in sorted(t.chunks)]
    if len(streams) == 1:
        return streams[0]
    return heapq.merge(*streams, key=lambda e: e.seq)


def percentile(sorted_values, q):
    """The q-th percentile (0..100) of sorted values, nearest rank; 0 if none."""
    if not sorted_values:
        return 0
    k = max(0, min(len(sorted_values) - 1, int(-(-q * len(sorted_values) // 100)) - 1))
    return sorted_values[k]


def median(sorted_values):
    """The median (the mean of the middle two of an even count)."""
    n = len(sorted_values)
    if not n:
        return 0
    m = n // 2
    return sorted_values[m] if n % 2 else (sorted_values[m - 1] + sorted_values[m]) / 2


def bucket(value, edges):
    """The label of the bucket of value: edges are the buckets' lower
    bounds, ascending; the last bucket is open."""
    i = bisect.bisect_right(edges, value) - 1
    lo = edges[max(i, 0)]
    if i + 1 < len(edges):
        hi = edges[i + 1] - 1
        return str(lo) if lo == hi else f"{lo}-{hi}"
    return f"{lo}+"
