#!/usr/bin/env python3
"""Generate the fuzz targets' seed corpora from real pools, traces and
write-set files (tests/fuzz/corpus/{pool,trace,wset}).

    tests/fuzz/make_corpus.py BUILD_DIR

pool: fuzz_pool_replay (BUILD_DIR/tests/fuzz) dumps the four pools that
fuzz_pool.c builds with the runtime's API (killed in a transaction, closed
cleanly with many objects, grown with an undo log in extension blocks,
killed outside a transaction); each seed is a fuzz_pool input, aimed at
what those real pools hold: their state records, each lane's undo records,
their chunk-table words, run bitmaps and the pointers of the root's list.
trace: traces of BUILD_DIR/examples/kvstore and kvstore_cc (CAIRN_TRACE),
whole and cut where a crash could cut them. wset: compiler/wset/libc.wset,
whole and one declaration per seed.

The corpus is regenerated whole (old seeds removed). The pool seeds are
the same on every run (fuzz_pool.c fixes its pools' ids and times); the
traces carry the traced run's process id and clock.
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# runtime/internal.h
STATE_A, STATE_B, CLEAN = 1024, 1152, 1280
LANES_OFF, LANE_SIZE, NLANES = 4096, 16 << 10, 64
CHUNK = 1 << 18
HDR = struct.Struct("<8sII64sQ2QQQQQQQQQ")      # through checksum
REL = 1 << 63
# fuzz_pool.c's flag bits
DIRTY, TRUNC, FIXUP, SYNC = 1, 2, 4, 32


def rec(off, data):
    """One fuzz_pool patch record: [offset:3][len:1][bytes]."""
    out = b""
    while data:
        piece, data = data[:255], data[255:]
        out += struct.pack("<I", off)[:3] + bytes([len(piece)]) + piece
        off += len(piece)
    return out


def u64(v):
    return struct.pack("<Q", v & (2**64 - 1))


class Pool:
    def __init__(self, blob):
        self.b = blob
        f = HDR.unpack_from(blob, 0)
        self.pool_id, self.heap_off = f[4], f[11]
        self.size = self.word(STATE_A + 8)
        self.root = self.word(STATE_A + 16) if self.word(STATE_A) >= self.word(STATE_B) \
            else self.word(STATE_B + 16)

    def word(self, off):
        return struct.unpack_from("<Q", self.b, off)[0]

    def lanes(self):
        """(lane, [(record offset, kind_off, len)]) for lanes holding records."""
        for ln in range(NLANES):
            area = LANES_OFF + ln * LANE_SIZE
            pos, recs = area + 8, []
            while pos + 24 <= area + LANE_SIZE:
                ko, ln_ = self.word(pos), self.word(pos + 8)
                if ko & 0xff not in (1, 2) or ln_ == 0 and ko & 0xff == 1:
                    break
                recs.append((pos, ko, ln_))
                if ko & 0xff == 2:
                    break
                pos += 24 + ((ln_ + 7) & ~7)
            if recs:
                yield ln, recs

    def chunk_words(self):
        n = (self.size - self.heap_off) // CHUNK
        for g in range(n):
            w = self.word(self.heap_off + 8 * g)
            if w:
                yield g, w


def pool_seeds(p, t):
    """(name, input) for template t."""
    base = t << 3
    out = [("plain-dirty", bytes([base | DIRTY])), ("plain-clean", bytes([base])),
           ("plain-dirty-fix", bytes([base | DIRTY | FIXUP])),
           ("plain-dirty-sync", bytes([base | DIRTY | FIXUP | SYNC])),
           ("plain-dirty-trunc", bytes([base | DIRTY | TRUNC]))]
    fx = base | DIRTY | FIXUP | SYNC

    def both(field, v):
        return rec(STATE_A + field, u64(v)) + rec(STATE_B + field, u64(v))
    heap_end = p.heap_off + (p.size - p.heap_off) // CHUNK * CHUNK
    for name, field, v in [("root-plus8", 16, p.root + 8), ("root-chunk5", 16, p.heap_off + 5 * CHUNK + 64),
                           ("root-table", 16, p.heap_off), ("root-size-huge", 24, 1 << 40),
                           ("size-plus-page", 8, p.size + 4096), ("size-minus-chunk", 8, p.size - CHUNK),
                           ("root-last", 16, heap_end - 8)]:
        out.append((f"state-{name}", bytes([fx]) + both(field, v)))
    out.append(("state-a-only", bytes([fx]) + rec(STATE_A + 16, u64(p.root + 16))))
    out.append(("state-seq-b", bytes([base | DIRTY]) + rec(STATE_B, u64(1 << 40))))
    out.append(("hdr-heap-off", bytes([fx]) + rec(136, u64(p.heap_off + CHUNK))))
    out.append(("hdr-lanes", bytes([fx]) + rec(112, u64(65))))

    for ln, recs in p.lanes():
        pos, ko, n = recs[0]
        off, kind = ko >> 8, ko & 0xff
        tag = f"lane{ln}"
        if kind == 1:
            for name, patch in [
                    ("len-plus8", rec(pos + 8, u64(n + 8))), ("len-1", rec(pos + 8, u64(1))),
                    ("len-huge", rec(pos + 8, u64(LANE_SIZE * 4))),
                    ("off-table", rec(pos, u64(1 | p.heap_off << 8))),
                    ("off-header", rec(pos, u64(1 | 0 << 8))),
                    ("off-state", rec(pos, u64(1 | STATE_A << 8))),
                    ("off-lane", rec(pos, u64(1 | (LANES_OFF + 8) << 8))),
                    ("off-end", rec(pos, u64(1 | (p.size - 8) << 8))),
                    ("data-ff", rec(pos + 24, b"\xff" * min(n, 64))),
                    ("data-ptr", rec(pos + 24, u64(REL | p.pool_id << 40 | (p.heap_off + 2 * CHUNK)))),
                    ("gen-plus1", rec(LANES_OFF + ln * LANE_SIZE, u64(p.word(LANES_OFF + ln * LANE_SIZE) + 1))),
                    ("kind-jump", rec(pos, u64(2 | (p.heap_off + 2 * CHUNK) << 8)) + rec(pos + 8, u64(4096)))]:
                out.append((f"{tag}-{name}", bytes([fx]) + patch))
                out.append((f"{tag}-{name}-nofix", bytes([base | DIRTY]) + patch))
        for rpos, rko, rn in recs[1:3]:
            out.append((f"{tag}-rec{rpos - pos}-len", bytes([fx]) + rec(rpos + 8, u64(rn + 16))))
        jumps = [r for r in recs if r[1] & 0xff == 2]
        for jpos, jko, jn in jumps[:1]:
            for name, patch in [("jump-out", rec(jpos, u64(2 | (p.size + CHUNK) << 8))),
                                ("jump-lane", rec(jpos, u64(2 | LANES_OFF << 8))),
                                ("jump-small", rec(jpos + 8, u64(16))),
                                ("jump-self", rec(jpos, u64(2 | jpos << 8)) + rec(jpos + 8, u64(LANE_SIZE)))]:
                out.append((f"{tag}-{name}", bytes([fx]) + patch))

    words = list(p.chunk_words())
    for g, w in words[:8]:
        kind, arg = w & 0xff, (w >> 8) & 0xffffffff
        at = p.heap_off + 8 * g
        for name, low in [("large1", 2 | 1 << 8), ("run-next", 1 | (arg + 1) << 8),
                          ("run-43", 1 | 43 << 8), ("arg-huge", kind | 0xffffffff << 8),
                          ("cont-far", 3 | 5000 << 8), ("kind7", 7 | arg << 8)]:
            out.append((f"chunk{g}-{name}", bytes([fx]) + rec(at, u64(low))))
        out.append((f"chunk{g}-free", bytes([fx]) + rec(at, u64(0))))
        if kind == 1:   # a run: its bitmap leads the chunk
            c = p.heap_off + g * CHUNK
            out.append((f"chunk{g}-bitmap-ff", bytes([base]) + rec(c, b"\xff" * 64)))
            out.append((f"chunk{g}-bitmap-00", bytes([base]) + rec(c, b"\x00" * 64)))
    for g in (len(words) + 1, 20):           # a word for a chunk nothing uses
        out.append((f"chunk{g}-stray-run", bytes([fx]) + rec(p.heap_off + 8 * g, u64(1 | 3 << 8))))

    # the root's list: its head pointer aimed elsewhere
    if p.root:
        for name, target in [("table", p.heap_off), ("mid-object", p.root + 8),
                             ("past-end", p.size + 64), ("lane", LANES_OFF + 64)]:
            out.append((f"ptr-{name}", bytes([fx]) + rec(p.root, u64(REL | p.pool_id << 40 | target))))
        out.append(("ptr-other-pool", bytes([fx]) + rec(p.root, u64(REL | (p.pool_id ^ 1) << 40 | p.root))))
        out.append(("ptr-self", bytes([fx]) + rec(p.root, u64(REL | p.pool_id << 40 | p.root))))
    return out


def write_dir(d, items):
    if os.path.isdir(d):
        shutil.rmtree(d)
    os.makedirs(d)
    for name, data in items:
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)
    print(f"make_corpus: {len(items)} seeds in {os.path.relpath(d, ROOT)}")


def traces(build, tmp):
    env = dict(os.environ, CAIRN_PMEM_FORCE="1")
    out = []
    for prog, ops in [("kvstore", 12), ("kvstore_cc", 6)]:
        exe = os.path.join(build, "examples", prog)
        pool = os.path.join(tmp, prog + ".pool")
        for step, args in [("run", ["run", pool, str(ops)]), ("verify", ["verify", pool])]:
            tr = os.path.join(tmp, f"{prog}-{step}.trace")
            subprocess.run([exe] + args, env=dict(env, CAIRN_TRACE=tr), check=True,
                           stdout=subprocess.DEVNULL)
            with open(tr, "rb") as f:
                out.append((f"{prog}-{step}", f.read()))
    cuts = []
    name, blob = out[0]
    for at in (0, 32, 64, 64 + 32, 64 + 32 + 16, len(blob) // 2, len(blob) - 32, len(blob) - 1):
        cuts.append((f"{name}-cut{at}", blob[:at]))
    # a chunk header whose count claims more records than follow
    bad = bytearray(blob)
    bad[64 + 8:64 + 12] = struct.pack("<I", 100000)
    cuts.append((f"{name}-count-huge", bytes(bad)))
    return out + cuts


def wsets():
    with open(os.path.join(ROOT, "compiler", "wset", "libc.wset")) as f:
        text = f.read()
    out = [("libc.wset", text.encode())]
    decls = [l for l in text.splitlines() if l.strip() and not l.lstrip().startswith("#")]
    for i, l in enumerate(decls):
        out.append((f"decl{i:03d}", (l + "\n").encode()))
    for i, l in enumerate(["sprintf(dst, fmt, ...) writes dst[formatted(fmt) + 1]",
                           "wcscpy(d, s) writes d[4 * wcslen(s) + 4]",
                           "strtol(s, end, base) writes end[8] pointer",
                           "f(a, b, c) writes a[b * c + 2 * b + 1], c[8]",
                           "g() writes",
                           "h(p) writes p[8] pointer # a comment"]):
        out.append((f"extra{i}", (l + "\n").encode()))
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: tests/fuzz/make_corpus.py BUILD_DIR (a cairn build with tests/fuzz and examples)")
    build = os.path.abspath(sys.argv[1])
    replay = os.path.join(build, "tests", "fuzz", "fuzz_pool_replay")
    if not os.access(replay, os.X_OK):
        sys.exit(f"make_corpus: {replay} is missing; build first (scripts/build.sh)")
    with tempfile.TemporaryDirectory() as tmp:
        seed = os.path.join(tmp, "seed")
        with open(seed, "wb") as f:
            f.write(b"\x01")
        subprocess.run([replay, seed], env=dict(os.environ, CAIRN_PMEM_FORCE="1",
                                                 FUZZ_DUMP_TEMPLATES=tmp),
                       check=True, stdout=subprocess.DEVNULL)
        items = []
        for t in range(4):
            with open(os.path.join(tmp, f"templ-{t}.pool"), "rb") as f:
                p = Pool(f.read())
            items += [(f"t{t}-{n}", d) for n, d in pool_seeds(p, t)]
        write_dir(os.path.join(HERE, "corpus", "pool"), items)
        write_dir(os.path.join(HERE, "corpus", "trace"), traces(build, tmp))
    write_dir(os.path.join(HERE, "corpus", "wset"), wsets())


if __name__ == "__main__":
    main()
