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

The per-record pass (cutting records into epochs, taking all threads'
epochs in global order, the report's counts and the timing model) is
cairn-trace-scan (runtime/tools/cairn-trace-scan.c); scan() runs it and
returns what it counted. The helpers here work on its counts.
"""
import bisect
import json
import os
import subprocess
import tempfile

from cairn import paths

LINE = 64

# region names, as cairn-trace-scan prints them
HEADER, LOG, COMMIT, ALLOC_META, HEAP, DRAM = "pool header", "log", "commit", \
    "allocator metadata", "heap data", "DRAM"


def _tool():
    return str(paths.tool("cairn-trace-scan"))


def layout():
    """The pool geometry the regions come from (runtime/format.h, as
    cairn-trace-scan was built with it): lanes_off, lanes_end, heap_off,
    chunk and zone, in bytes."""
    out = subprocess.run([_tool(), "--layout"], capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def scan(t, args, progress=None):
    """Run cairn-trace-scan with args over trace t; its JSON as a dict.
    progress(n) is called as it reads n more records. A trace read from
    a stream (no file to point the tool at) is written to a temporary
    file first."""
    tmp = None
    path = t.path
    if path is None:
        fd, tmp = tempfile.mkstemp(suffix=".trace")
        with os.fdopen(fd, "wb") as out, t._open() as f:
            out.write(f.read())
        path = tmp
    try:
        proc = subprocess.Popen([_tool(), *args, path], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        result = None
        for line in proc.stdout:
            if line.startswith("progress "):
                if progress:
                    progress(int(line[9:]))
            else:
                result = line
        err = proc.stderr.read()
        if proc.wait() != 0 or result is None:
            raise RuntimeError(err.strip() or f"cairn-trace-scan exited with {proc.returncode}")
        return json.loads(result)
    finally:
        if tmp:
            os.unlink(tmp)


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
