"""`cairn pool`: inspect and maintain pool files (runs the native cairn-pool).

Each action is its own subcommand with its own --help; the native tool does
the work and checks sizes, so `cairn-pool` run by hand says the same things."""
import argparse
import re
import subprocess

from cairn import paths

SIZE_HELP = ("SIZE is whole bytes or a whole number with K, M, G or T (powers of 1024: "
             "64M, 2G), 8M .. 1T; fractions (16.5M), exponents (1e7) and signs are refused; "
             "the size is rounded down to a multiple of 4 KiB and the real size is printed.")

ACTIONS = {
    # name: (help, description, positional arguments, examples)
    "info": ("header, root, space use, unfinished transactions",
             "Print a pool's header, root, space use and unfinished transactions. "
             "Reads the file only; the pool may be open in another process.",
             [("file", "FILE", "pool file")],
             ["cairn pool info /dev/shm/kv.pool",
              "cairn pool info --json /dev/shm/kv.pool"]),
    "check": ("full read-only consistency check (exit 1 if the pool has errors)",
              "Check a pool in full without changing it: the file is mapped privately and "
              "recovery simulated in the copy. Names what is wrong (bad header, torn state, "
              "corrupt chunk table, dangling pointers, leaks). Exit 0 consistent, 1 errors "
              "found, 2 the file cannot be read as a pool.",
              [("file", "FILE", "pool file")],
              ["cairn pool check /dev/shm/kv.pool",
               "cairn pool check --json /dev/shm/kv.pool"]),
    "create": ("make a new pool: FILE LAYOUT SIZE",
               "Create a new, empty pool (the file must not exist). LAYOUT names what the "
               "pool holds; programs open it by that name. " + SIZE_HELP,
               [("file", "FILE", "pool file to create"),
                ("layout", "LAYOUT", "layout name, at most 63 bytes"),
                ("size", "SIZE", "pool size, e.g. 64M")],
               ["cairn pool create /dev/shm/kv.pool kvstore 64M",
                "cairn pool create --json /dev/shm/big.pool kvstore 2G"]),
    "grow": ("grow a closed pool in place: FILE SIZE",
             "Grow a pool that no process has open to SIZE bytes, in place (no pointer "
             "changes). A pool that was not closed cleanly is recovered first, and the "
             "recovery is reported. " + SIZE_HELP,
             [("file", "FILE", "pool file"), ("size", "SIZE", "new size, larger than now, e.g. 2G")],
             ["cairn pool grow /dev/shm/kv.pool 128M"]),
    "gc": ("recover and free objects the root cannot reach",
           "Open the pool (recovering it if it crashed), mark from the root and free every "
           "object the root cannot reach; prints how many objects were kept and how much "
           "was freed.",
           [("file", "FILE", "pool file")],
           ["cairn pool gc /dev/shm/kv.pool"]),
}


def run(args) -> int:
    if args.extra:
        args.parser.error(f"unexpected argument {args.extra[0]!r}: {args.action} takes "
                          f"{args.parser.format_usage().split('[--json] ', 1)[-1].strip()}")
    tool = str(paths.tool("cairn-pool"))
    cmd = ["cairn pool"]                 # argv[0]: the tool's messages start "cairn pool:"
    if getattr(args, "json", False):
        cmd.append("--json")
    cmd += ["--", args.action, args.file]
    if args.action == "create":
        cmd.append(args.layout)
    if args.action in ("create", "grow"):
        cmd.append(args.size)
    rc = subprocess.call(cmd, executable=tool)
    if rc < 0:                           # killed by a signal: the shell's convention
        if rc == -2:
            raise KeyboardInterrupt
        return 128 - rc
    return rc


def register(sub):
    p = sub.add_parser("pool", help="inspect, check, create, grow or collect a pool file",
                       description="Inspect and maintain pool files. `cairn pool ACTION --help` "
                                   "for each action.",
                       epilog="--json works for every action, before or after it; errors are "
                              "then {\"file\": ..., \"error\": ...} (nonzero exit).")
    p.add_argument("--json", action="store_true", help="one JSON object instead of text")
    acts = p.add_subparsers(dest="action", metavar="ACTION")
    for name, (hlp, desc, positionals, examples) in ACTIONS.items():
        a = acts.add_parser(name, help=hlp, description=desc,
                            epilog="examples:\n" + "\n".join("  " + e for e in examples),
                            formatter_class=_Formatter)
        for dest, metavar, h in positionals:
            a.add_argument(dest, metavar=metavar, help=h)
        a.add_argument("extra", nargs="*", help=argparse.SUPPRESS)   # refused in run()
        a.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                       help="one JSON object instead of text; an error is {\"error\": ...}")
        if name in ("create", "grow"):
            # "-16M" is a (bad) size, not an option: let it reach the size check
            a._negative_number_matcher = re.compile(r"^-\d")
        a.set_defaults(func=run, parser=a)
    p.set_defaults(func=lambda args: p.print_help() or 2)


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Wraps the description, keeps the examples' lines."""

    def _fill_text(self, text, width, indent):
        if text.startswith("examples:"):
            return super()._fill_text(text, width, indent)
        return argparse.HelpFormatter._fill_text(self, text, width, indent)
