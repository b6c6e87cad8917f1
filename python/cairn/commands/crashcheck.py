"""`cairn crashcheck`: run a program once with tracing on, then build and
check every crash state that x86 allows of the pool it opened (the native
cairn-crashcheck does the replay and the checking; docs/crashcheck.md)."""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

from cairn import argtypes, paths

EXAMPLES = """examples:
  cairn crashcheck -- ./kvstore /dev/shm/kv.pool put a 1
  cairn crashcheck --check './prog check {pool}' --every store -- ./prog run /dev/shm/p.pool
  cairn crashcheck --jobs 2 --json out.json --keep /tmp/failed -- ./prog run /dev/shm/p.pool

exit status: 0 no crash state failed, 1 one did, 2 usage or set-up error (PROG missing,
no pool opened, the check failing before any crash)."""


def run(args) -> int:
    prog = args.prog
    if prog and prog[0] == "--":
        prog = prog[1:]
    if not prog:
        args.parser.error("no program given: cairn crashcheck [options] -- PROG ARGS...")
    exe = prog[0] if os.sep in prog[0] else shutil.which(prog[0])
    if not exe or not os.access(exe, os.X_OK):
        print(f"cairn crashcheck: {prog[0]}: no such program (give a path or a name on PATH)",
              file=sys.stderr)
        return 2
    tool = str(paths.tool("cairn-crashcheck"))
    base = "/dev/shm" if os.path.isdir("/dev/shm") else None
    with tempfile.TemporaryDirectory(prefix="cairn-crashcheck-", dir=base) as work:
        trace = os.path.join(work, "run.trace")
        images = os.path.join(work, "images")
        os.mkdir(images)
        env = dict(os.environ, CAIRN_TRACE=trace, CAIRN_TRACE_IMAGES=images)
        if not args.quiet:
            print(f"cairn crashcheck: running {' '.join(prog)} with tracing on", file=sys.stderr)
        r = subprocess.run(prog, env=env)
        if r.returncode != 0:
            print(f"cairn crashcheck: note: {prog[0]} exited with status {r.returncode}; "
                  f"checking what it did up to then", file=sys.stderr)
        if not os.path.exists(trace):
            print(f"cairn crashcheck: {prog[0]} wrote no trace: is it linked with libcairn?",
                  file=sys.stderr)
            return 2
        cmd = [tool, "--max-states", str(args.max_states), "--seed", str(args.seed),
               "--jobs", str(args.jobs), "--every", args.every, "--workdir", work,
               "--nested-every", str(args.nested_every), "--prune", args.prune]
        if args.check:
            cmd += ["--check", args.check]
        if args.json:
            cmd += ["--json", args.json]
        if args.keep:
            cmd += ["--keep", args.keep]
        if args.quiet:
            cmd.append("--quiet")
        cmd += [trace, images]
        return subprocess.run(cmd).returncode


def register(sub):
    p = sub.add_parser(
        "crashcheck", help="check every crash state a program's run allows (power failure)",
        description="Run PROG once with tracing on, find the pool it opens, and check every "
                    "state a power failure may leave under the x86 persistency model: at "
                    "each crash point (every fence, or every store), each line holds a "
                    "prefix of its stores not yet durable. Each state is checked with "
                    "recovery plus the pool check, or with CMD. Progress on stderr; the "
                    "last line of stdout is the summary.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--check", metavar="CMD",
                   help="shell command run on each crash image, {pool} replaced by its path; "
                        "exit 0 means the state is fine (default: recovery + cairn pool check, "
                        "in a forked child, no exec)")
    p.add_argument("--every", choices=("fence", "store"), default="fence",
                   help="crash points: at every fence (default) or also after every traced store")
    p.add_argument("--max-states", type=argtypes.positive_int, default=4096, metavar="N",
                   help="states tried per crash point; more are covered systematically and "
                        "by seeded samples, and counted as skipped (default 4096)")
    p.add_argument("--jobs", type=argtypes.positive_int, default=1, metavar="N",
                   help="worker processes, each taking every Nth crash point (default 1)")
    p.add_argument("--seed", type=argtypes.non_negative_int, default=1, metavar="S",
                   help="seed of the sampled states (same seed, same states; default 1)")
    p.add_argument("--nested-every", type=argtypes.non_negative_int, default=64, metavar="N",
                   help="every Nth state also crashes recovery midway and recovers again "
                        "(built-in check only; 0: never; default 64)")
    p.add_argument("--prune", choices=("auto", "always", "never"), default="auto",
                   help="enumerate only the lines in play that the check reads (tracked on "
                        "the crash point's everything-written and durable images): at crash "
                        "points with more than --max-states states (auto, the default), at "
                        "every crash point (always), or never")
    p.add_argument("--json", metavar="FILE",
                   help="write the summary, failures and per crash point whether it was "
                        "explored exhaustively as JSON")
    p.add_argument("--keep", metavar="DIR", help="keep the images of failed states in DIR")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("prog", nargs=argparse.REMAINDER, metavar="-- PROG ARGS",
                   help="the program to run, and its arguments")
    p.set_defaults(func=run, parser=p)
