"""`cairn trace`: read a CAIRN_TRACE file.

  cairn trace dump FILE [--json] [--limit N] [--type T,..] [--thread TID]
                                               one line per event, global order
  cairn trace stats FILE [--json]              counts per type and thread, and
                                               flushes/fences per transaction
  cairn trace report FILE [--json] [--plot DIR] [--window-us N]
                                               WHISPER's analysis: epochs, sizes,
                                               dependencies, write amplification
The format and the parser are in cairn.trace (docs/runtime.md, "Traces")."""
import argparse
import json
import os
import re
import sys

from cairn.argtypes import whole_number

try:
    from cairn import trace
except ImportError as _missing:     # no runtime/trace_types.h: only the trace commands stop
    trace, _WHY = None, str(_missing)


def _trace():
    """cairn.trace, or a one-line exit naming what is missing (it reads the
    record types from runtime/trace_types.h at import)."""
    if trace is None:
        raise SystemExit(f"cairn: {_WHY}")
    return trace


def register(subparsers):
    p = subparsers.add_parser(
        "trace", help="read a CAIRN_TRACE file: dump events, count them",
        description="Read a trace written by a program run with CAIRN_TRACE=FILE "
                    "(cairn-cc --trace adds every store to PM).")
    sub = p.add_subparsers(dest="trace_command", metavar="WHAT")
    d = sub.add_parser("dump", help="one line per event, in global order",
                       description="Every event of every thread in global (seq) order.")
    d.add_argument("file")
    d.add_argument("--json", action="store_true", help="one JSON object per line")
    d.add_argument("--limit", type=_count, metavar="N", help="only the first N events (N >= 0)")
    d.add_argument("--type", metavar="T[,T...]",
                   help="only these events (store, flush, fence, ofence, tx_begin, ...)")
    d.add_argument("--thread", type=_thread, metavar="TID",
                   help="only this thread, as dump shows it: t1, t2, ... (or 1, 2, ...)")
    d.set_defaults(func=run_dump)
    s = sub.add_parser("stats", help="events per type and thread; flushes and fences per transaction",
                       description="Counts per event type and per thread, and the flushes, "
                                   "fences and log appends of each outermost transaction.")
    s.add_argument("file")
    s.add_argument("--json", action="store_true", help="print JSON")
    s.set_defaults(func=run_stats)
    r = sub.add_parser("report", help="epochs per transaction, epoch sizes, dependencies, "
                                      "write amplification (WHISPER section 5)",
                       description="WHISPER's persistence analysis of a trace: epochs per "
                                   "transaction, epoch sizes in 64 B lines, singleton epochs, "
                                   "self- and cross-thread dependencies, write amplification by "
                                   "source, non-temporal share, PM vs DRAM stores, and the source "
                                   "lines behind the most epochs and flushes (docs/trace.md).")
    r.add_argument("file")
    r.add_argument("--json", action="store_true", help="print JSON")
    r.add_argument("--plot", metavar="DIR", help="also write PNG plots (Figs. 3-6) into DIR")
    r.add_argument("--window-us", type=float, default=50.0, metavar="N",
                   help="dependencies count within N microseconds (default 50, as WHISPER)")
    r.set_defaults(func=run_report)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _count(text):
    """argparse type: a whole number >= 0."""
    v = whole_number(text)
    if v < 0:
        raise argparse.ArgumentTypeError(f"{v} is negative; give 0 or more")
    return v


def _thread(text):
    """argparse type: a thread as dump prints it (t9) or its number (9)."""
    m = re.fullmatch(r"[tT]?(\d+)", text.strip())
    if not m:
        raise argparse.ArgumentTypeError(f"{text!r} is not a thread: give t1, t2, ... "
                                         "(or 1, 2, ...) as `cairn trace dump` shows them")
    return int(m.group(1))


def _read(path):
    _trace()
    try:
        return trace.read(path)
    except OSError as e:
        print(f"cairn trace: {path}: {e.strerror}", file=sys.stderr)
    except trace.TraceError as e:
        print(f"cairn trace: {path}: {e}", file=sys.stderr)
    return None


def run_dump(args):
    _trace()
    t = _read(args.file)
    if t is None:
        return 2
    try:
        types = {x.strip() for x in args.type.split(",") if x.strip()} if args.type else None
        if args.type is not None and not types:
            print("cairn trace: --type needs event names (store, flush, fence, ...)",
                  file=sys.stderr)
            return 2
        unknown = (types or set()) - set(trace.TYPES.values()) - {"ofence", "dfence"}
        if unknown:
            print(f"cairn trace: unknown event type {', '.join(sorted(unknown))}; known: "
                  f"{', '.join(sorted(trace.TYPES.values()))}, ofence, dfence", file=sys.stderr)
            return 2
        if args.thread is not None and args.thread not in t.chunks:
            print(f"cairn trace: {args.file} has no thread t{args.thread} "
                  f"(threads: {', '.join(f't{n}' for n in sorted(t.chunks)) or 'none'})",
                  file=sys.stderr)
            return 2
        trace.dump(t, sys.stdout, as_json=args.json, limit=args.limit, types=types,
                   tid=args.thread)
    except BrokenPipeError:           # `| head`
        sys.stderr.close()
        return 0
    if not t.complete:
        print(f"cairn trace: {args.file}: no END record: {trace.incomplete_text(t.writer_pid)}; "
              "shown up to the last whole record", file=sys.stderr)
    return 0


def run_stats(args):
    _trace()
    t = _read(args.file)
    if t is None:
        return 2
    progress = trace.Progress(t.records, args.file)
    try:
        s = trace.stats(t, progress)
    finally:
        progress.finish()
    return _print(args, s, trace.print_stats)


def _print(args, result, printer, notes=()):
    """result as JSON (--json) or as printer's text, then the notes."""
    try:
        if args.json:
            json.dump(result, sys.stdout, indent=1, default=str)
            sys.stdout.write("\n")
        else:
            printer(result, sys.stdout, args.file)
            for line in notes:
                print(line)
    except BrokenPipeError:           # `| head`
        sys.stderr.close()
    return 0


def run_report(args):
    _trace()
    from cairn import trace_report
    t = _read(args.file)
    if t is None:
        return 2
    if args.window_us < 0:
        print(f"cairn trace report: --window-us {args.window_us:g} is negative; give 0 or more",
              file=sys.stderr)
        return 2
    progress = trace.Progress(t.records, args.file)
    try:
        r = trace_report.analyze(t, window_ns=args.window_us * 1000, progress=progress)
    except RuntimeError as e:         # cairn-trace-scan's one-line error
        print(f"cairn trace report: {e}", file=sys.stderr)
        return 2
    finally:
        progress.finish()
    if args.plot:
        try:
            r["plots"] = trace_report.plot(r, args.plot, os.path.basename(args.file))
        except ImportError:
            print("cairn trace report: --plot needs matplotlib: apt-get install python3-matplotlib",
                  file=sys.stderr)
            return 2
    return _print(args, r, trace_report.print_report, [f"wrote {p}" for p in r.get("plots", ())])
