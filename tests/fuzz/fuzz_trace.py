"""Fuzz the trace reader (python/cairn/trace.py) with atheris.

    python3 tests/fuzz/fuzz_trace.py [libFuzzer options] CORPUS_DIR    # fuzz
    python3 tests/fuzz/fuzz_trace.py --replay DIR_OR_FILE...          # regression run

The input is a trace file's bytes. The reader must either refuse it with
TraceError (one line naming the problem) or read it: index it, give every
event (in seq order, and per thread), describe and dump each, count its
statistics. Any other exception is a finding: atheris stops on it and
writes the input; it goes into tests/fuzz/regress/trace, which ctest
replays (fuzz.trace.replay). --replay needs no atheris.
"""
import io
import os
import sys

from cairn import trace


def test_one(data):
    try:
        t = trace.parse(data)
    except trace.TraceError as e:
        msg = str(e)
        if not msg or "\n" in msg:
            raise AssertionError(f"TraceError is not one line: {msg!r}")
        return
    seqs = [ev.seq for ev in t.events()]
    n = 0
    ordered = True                        # each thread's seqs ascend, as a writer makes them
    for tid in sorted(t.chunks):
        last = -1
        for ev in t.thread_events(tid):
            trace.describe(t, ev)
            ev.addr_text()
            ordered &= ev.seq >= last
            last = ev.seq
            n += 1
    if n != len(seqs):
        raise AssertionError(f"events() gave {len(seqs)} events, the threads {n}")
    if ordered and seqs != sorted(seqs):
        raise AssertionError("events() is not in seq order")
    trace.dump(t, io.StringIO(), limit=200)
    trace.dump(t, io.StringIO(), as_json=True, limit=200)
    trace.stats(t)
    t.pools
    t.threads


def replay(paths):
    files = []
    for p in paths:
        if os.path.isdir(p):
            files += [os.path.join(p, f) for f in sorted(os.listdir(p)) if not f.startswith(".")]
        elif os.path.exists(p):
            files.append(p)
        else:
            sys.exit(f"fuzz_trace: {p} does not exist")
    if not files:
        sys.exit("fuzz_trace: no input found in the arguments; give the corpus directories")
    for f in files:
        with open(f, "rb") as fh:
            test_one(fh.read())
    print(f"fuzz_trace: {len(files)} inputs, none failed")


def main():
    if sys.argv[1:2] == ["--replay"]:
        replay(sys.argv[2:])
        return
    import atheris
    atheris.instrument_all()
    atheris.Setup(sys.argv, test_one)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
