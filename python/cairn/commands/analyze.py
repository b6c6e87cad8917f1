"""`cairn analyze`: which struct types of a legacy C program hold the state
it saves to files (NVMOVE, seed 001, with cairn's refinements).

The work is done by the native tool cairn-analyze (analyzer/); this command
finds it, makes a compilation database when asked to (`--make`, through
bear), and passes everything else through. See docs/analyzer.md."""
import shutil
import subprocess
import sys
from pathlib import Path

from cairn import paths


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
    p.add_argument("--max-targets", type=int, metavar="N",
                   help="do not follow indirect calls with more than N possible targets "
                        "(a command table; default 32, 0 = no limit)")
    p.add_argument("-j", dest="jobs", type=int, help="parser threads")
    p.add_argument("--root", help="print paths relative to this directory")
    p.add_argument("files", nargs="*", help="only these source files (default: all)")
    p.set_defaults(func=run)


def _make_database(build_dir: Path, command: str) -> int:
    if not shutil.which("bear"):
        print("cairn analyze: --make needs bear (apt-get install bear)", file=sys.stderr)
        return 2
    cmd = ["bear", "--output", str(build_dir / "compile_commands.json"), "--"] + command.split()
    print("cairn analyze: " + " ".join(cmd), file=sys.stderr)
    # The build's chatter goes to stderr: stdout carries the report (--json).
    return subprocess.call(cmd, cwd=build_dir, stdout=sys.stderr)


def run(args) -> int:
    build_dir = Path(args.build_dir).resolve()
    if args.make:
        rc = _make_database(build_dir, args.make)
        if rc != 0:
            print(f"cairn analyze: the build under bear failed (exit {rc})", file=sys.stderr)
            return rc
    if not (build_dir / "compile_commands.json").exists():
        print(f"cairn analyze: no compile_commands.json in {build_dir}; make one with "
              "cmake -DCMAKE_EXPORT_COMPILE_COMMANDS=ON, `bear -- make`, "
              "or pass --make", file=sys.stderr)
        return 2
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
