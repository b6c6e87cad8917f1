"""`cairn demo`: the main job on the bundled default program."""
import argparse
import os
import sys
from pathlib import Path

from cairn import crashloop, paths
from cairn.argtypes import positive_int, whole_number


def run(args) -> int:
    from tqdm import tqdm

    pool = Path(args.pool)
    where = pool.parent
    if not where.is_dir():
        print(f"cairn demo: --pool {pool}: directory {where} does not exist; give a path in an "
              f"existing directory (e.g. /dev/shm/cairn-demo.pool)", file=sys.stderr)
        return 2
    if not os.access(where, os.W_OK | os.X_OK):
        print(f"cairn demo: --pool {pool}: cannot write in {where}; give a path in a directory "
              f"you can write (e.g. /dev/shm/cairn-demo.pool)", file=sys.stderr)
        return 2
    if pool.is_dir():
        print(f"cairn demo: --pool {pool} is a directory; give a file path in it "
              f"(e.g. {pool / 'cairn-demo.pool'})", file=sys.stderr)
        return 2
    if pool.exists() and not args.keep:
        pool.unlink()
    writer = paths.tool(args.program)
    what = ("plain legacy C compiled by cairn-cc: no explicit logging anywhere"
            if writer.name == "kvstore_cc" else "explicit cairn_tx_add, built by the plain C compiler")
    print(f"cairn demo: {writer.name}, a chained hash table in a pool ({what}), writes {pool};")
    print(f"it is killed with SIGKILL {args.kills} times at random instants, then reopened, "
          f"checked in full and compared with a replay of the operations it committed.\n")
    bar = tqdm(total=args.kills, unit="kill", disable=not sys.stderr.isatty() or args.verbose)

    def progress(r):
        bar.update(1)
        status = "ok" if (r.verify_ok and r.check_ok and r.recovered >= r.reported) else "FAILED"
        if args.verbose or status != "ok":
            tqdm.write(f"kill {r.round + 1:3d} after {r.delay_ms:5.1f} ms: writer had reported "
                       f"{r.reported} committed, pool recovered with {r.recovered}: {status}")
            if status != "ok":
                tqdm.write("    " + r.detail.replace("\n", "\n    "))

    rep = crashloop.kill_loop(pool, args.kills, writer=writer, seed=args.seed, progress=progress)
    bar.close()
    last = rep.results[-1] if rep.results else None
    if last:
        print(f"last reopen: {last.detail.splitlines()[-1] if last.detail else ''}")
    fails = rep.failures
    total_ops = last.recovered if last else 0
    torn = sum(1 for r in rep.results if r.torn)
    print(f"\n{len(rep.results)} kills ({torn} inside a transaction, rolled back), "
          f"{len(rep.results) - len(fails)} verified recoveries, {len(fails)} failures; "
          f"{total_ops} operations committed in all.")
    return 1 if fails else 0


PROGRAMS = ("kvstore_cc", "kvstore")


def _program(text):
    if text not in PROGRAMS:
        raise argparse.ArgumentTypeError(f"unknown program {text!r} (choose: {', '.join(PROGRAMS)})")
    return text


def register(sub):
    p = sub.add_parser("demo", help="kill a program at random instants and prove its pool recovers",
                       description="Runs the bundled demo: a legacy-style C program keeping a hash "
                                   "table in a cairn pool is killed with SIGKILL at random instants, "
                                   "and after each kill the pool is reopened (recovering it), checked "
                                   "in full, and compared with a replay of the committed operations.")
    p.add_argument("--kills", type=positive_int, default=40,
                   help="how many times to kill the writer, at least 1 (default 40)")
    p.add_argument("--pool", default="/dev/shm/cairn-demo.pool", help="pool file (default /dev/shm/cairn-demo.pool)")
    p.add_argument("--program", type=_program, default="kvstore_cc",
                   help="writer built in the tree: kvstore_cc (plain C through cairn-cc, default) "
                        "or kvstore (explicit cairn_tx_add, plain C compiler)")
    p.add_argument("--seed", type=whole_number, default=None, help="seed for the kill instants")
    p.add_argument("--keep", action="store_true", help="keep an existing pool instead of starting fresh")
    p.add_argument("-v", "--verbose", action="store_true", help="print every kill")
    p.set_defaults(func=run)
