"""`cairn sim TRACE...`: normalized runtimes of a trace under x86 clwb +
sfence (with and without a persistent write queue, and with persistent
caches), HOPS persist buffers and an ideal machine, as WHISPER's Fig. 10
(the model: cairn.trace_sim, docs/trace.md)."""
import json
import os
import sys

from cairn import paths, trace_sim
from cairn.commands.trace import _read, _trace


def register(subparsers):
    p = subparsers.add_parser(
        "sim", help="simulate a trace on x86 (clwb+sfence, PWQ, eADR), HOPS and ideal hardware",
        description="Trace-driven timing model of persist ordering (WHISPER/HOPS Fig. 10): each "
                    "trace's runtime under x86 clwb+sfence with and without a persistent write "
                    "queue, with persistent caches (eADR), HOPS persist buffers with and without "
                    "the queue, and an ideal machine, normalized to x86. Parameters default to "
                    "WHISPER's Table 3 (docs/trace.md).")
    p.add_argument("traces", nargs="+", metavar="TRACE")
    p.add_argument("--preset", choices=("whisper", "host"), default="whisper",
                   help="whisper: Table 3 (default); host: this machine's clock and flush and "
                        "non-temporal round latencies, measured by cairn-flush-floor")
    for key, default in trace_sim.WHISPER.items():
        p.add_argument("--" + key.replace("_", "-"), type=float, metavar="N",
                       help=f"override the preset (whisper: {default:g})")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--plot", metavar="FILE.png", help="also write Fig. 10 as a PNG")
    p.set_defaults(func=run)


def run(args):
    trace = _trace()
    if args.preset == "host":
        try:
            params = trace_sim.host_preset(paths.tool("cairn-flush-floor"))
        except (OSError, RuntimeError, ValueError) as e:
            print(f"cairn sim: --preset host could not measure this machine ({e}); build the "
                  "benchmarks (scripts/build.sh) or use --preset whisper", file=sys.stderr)
            return 2
    else:
        params = dict(trace_sim.WHISPER)
    for key in trace_sim.WHISPER:
        v = getattr(args, key)
        if v is not None:
            if v <= 0 if key in ("cpu_ghz", "pb_entries") else v < 0:
                print(f"cairn sim: --{key.replace('_', '-')} {v:g} is out of range; give a "
                      f"{'positive' if key in ('cpu_ghz', 'pb_entries') else 'non-negative'} number",
                      file=sys.stderr)
                return 2
            params[key] = int(v) if key == "pb_entries" else v
    results = []
    for path in args.traces:
        t = _read(path)
        if t is None:
            return 2
        progress = trace.Progress(t.records, path)
        try:
            results.append((os.path.basename(path), trace_sim.simulate(t, params, progress)))
        except RuntimeError as e:     # cairn-trace-scan's one-line error
            print(f"cairn sim: {e}", file=sys.stderr)
            return 2
        finally:
            progress.finish()
    if args.plot:
        try:
            trace_sim.plot(results, args.plot)
        except ImportError:
            print("cairn sim: --plot needs matplotlib: apt-get install python3-matplotlib",
                  file=sys.stderr)
            return 2
    if args.json:
        json.dump({name: r for name, r in results}, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        trace_sim.print_table(results, sys.stdout)
        if args.plot:
            print(f"wrote {args.plot}")
    return 0
