"""`cairn analyze`: which struct types of a legacy C program hold the state
it saves to files (NVMOVE, seed 001, with cairn's refinements).

The work is done by the native tool cairn-analyze (analyzer/); this command
finds it, makes a compilation database when asked to (`--make`, through
bear), checks the option values, and passes everything else through. Exit
status: the native tool's (0 done, 2 no usable compilation database, 3 no
load function), argparse's 2 for a usage error, and 4 when the --make build
fails. See docs/analyzer.md."""
import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

from cairn import paths
from cairn.argtypes import non_negative_int, positive_int

EXIT_NO_DATABASE = 2
EXIT_BUILD_FAILED = 4   # not the build's own status: make's 2 would read as "no database"




def register(subparsers) -> None:
    p = subparsers.add_parser(
        "analyze",
        help="find the struct types that hold a C program's persistent state",
        description="Walks from the program's load function(s) over a Clang "
                    "compilation database and ranks the struct types that hold "
                    "the state it loads from files, each with its evidence chain.")
    p.add_argument("--load", required=True, metavar="FN[,FN...]",
                   help="function(s) that read the saved state (e.g. rdbLoad)")
    p.add_argument("--skip", metavar="FN[,FN...]",
                   help="functions the walk must not enter (e.g. an event loop run while loading)")
    p.add_argument("-p", dest="build_dir", default=".", metavar="BUILD_DIR",
                   help="directory holding compile_commands.json (default: .)")
    p.add_argument("--make", metavar="CMD", nargs="?", const="make",
                   help="first build in BUILD_DIR under bear to write "
                        "compile_commands.json (default command: make)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--suggest", action="store_true",
                   help="list allocation sites and the change each needs for cairn_alloc")
    p.add_argument("--nvmove", action="store_true",
                   help="reproduce NVMOVE alone, for comparison")
    p.add_argument("--hide-dropped", action="store_true",
                   help="do not list candidates the refinements dropped")
    p.add_argument("--max-targets", type=non_negative_int, metavar="N",
                   help="do not follow indirect calls with more than N possible targets "
                        "(a command table; default 32, 0 = no limit)")
    p.add_argument("-j", dest="jobs", type=positive_int, help="parser threads (default: all cores)")
    p.add_argument("--root", help="print paths relative to this directory")
    p.add_argument("files", nargs="*", help="only these source files (default: all)")
    p.set_defaults(func=run)


def _entries(database: Path):
    """The compile commands in `database`, or None if it is missing or unreadable."""
    try:
        entries = json.loads(database.read_text())
    except (OSError, ValueError):
        return None
    return entries if isinstance(entries, list) else None


def _make_database(build_dir: Path, command: str) -> int:
    """Runs the build under bear. --append: a build that compiles nothing
    (up to date) or only what changed keeps the commands already recorded,
    where a plain run wrote "[]" or a partial list over them."""
    if not shutil.which("bear"):
        print("cairn analyze: --make needs bear (apt-get install bear)", file=sys.stderr)
        return EXIT_NO_DATABASE
    database = build_dir / "compile_commands.json"
    before = database.read_bytes() if database.exists() else None
    cmd = ["bear", "--append", "--output", str(database), "--"] + command.split()
    print("cairn analyze: " + " ".join(cmd), file=sys.stderr)
    # The build's chatter goes to stderr: stdout carries the report (--json).
    rc = subprocess.call(cmd, cwd=build_dir, stdout=sys.stderr)
    if rc != 0:
        print(f"cairn analyze: the build under bear failed ({command.split()[0]} exited with {rc}); "
              f"fix the build, then run again", file=sys.stderr)
        return EXIT_BUILD_FAILED
    entries = _entries(database)
    if not entries:
        print(f"cairn analyze: the build compiled nothing (it is up to date), so bear recorded no "
              f"compile commands in {database}; run `make clean` (or your build's clean step) "
              f"and then --make again", file=sys.stderr)
        return EXIT_NO_DATABASE
    if before is not None and database.read_bytes() == before:
        print(f"cairn analyze: the build compiled nothing new; kept the existing "
              f"compile_commands.json ({len(entries)} entries)", file=sys.stderr)
    return 0


def run(args) -> int:
    build_dir = Path(args.build_dir).resolve()
    if args.make:
        rc = _make_database(build_dir, args.make)
        if rc != 0:
            return rc
    if not (build_dir / "compile_commands.json").exists():
        print(f"cairn analyze: no compile_commands.json in {build_dir}; make one with "
              "cmake -DCMAKE_EXPORT_COMPILE_COMMANDS=ON, `bear -- make`, "
              "or pass --make", file=sys.stderr)
        return EXIT_NO_DATABASE
    cmd = [str(paths.tool("cairn-analyze")), "--load", args.load, "-p", str(build_dir)]
    for flag in ("json", "suggest", "nvmove", "hide_dropped"):
        if getattr(args, flag):
            cmd.append("--" + flag.replace("_", "-"))
    if args.skip:
        cmd += ["--skip", args.skip]
    if args.max_targets is not None:
        cmd += ["--max-targets", str(args.max_targets)]
    if args.jobs:
        cmd += ["-j", str(args.jobs)]
    if args.root:
        cmd += ["--root", args.root]
    cmd += args.files
    return subprocess.call(cmd)
