"""`cairn`: the command-line front end. Subcommands live in cairn.commands.*
and register themselves; native work is done by the C/C++ tools it calls."""
import argparse
import importlib
import pkgutil
import sys

import cairn.commands


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cairn",
        description="cairn: keep legacy C data structures in persistent memory, "
                    "crash-consistent. Subcommands below; `cairn CMD --help` for each.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for mod in sorted(pkgutil.iter_modules(cairn.commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"cairn.commands.{mod.name}")
        module.register(sub)
    return parser


def main(argv=None) -> int:
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return 2
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        # Ctrl-C in any command: one line and the shell's status for SIGINT,
        # not a traceback (children in the same process group got it too)
        lead = "\n" if sys.stderr.isatty() else ""     # past the terminal's ^C
        print(f"{lead}cairn: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
