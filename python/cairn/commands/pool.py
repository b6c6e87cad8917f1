"""`cairn pool`: inspect and maintain pool files (runs the native cairn-pool)."""
import subprocess

from cairn import paths


def run(args) -> int:
    cmd = [str(paths.tool("cairn-pool"))]
    if getattr(args, "json", False):
        cmd.append("--json")
    cmd += [args.action, args.file] + list(args.rest)
    return subprocess.call(cmd)


def register(sub):
    p = sub.add_parser("pool", help="inspect, check, create, grow or collect a pool file",
                       description="info: header, root, space use, unfinished transactions. "
                                   "check: full read-only consistency check naming what is wrong "
                                   "(exit 1 if the pool has errors). create FILE LAYOUT SIZE. "
                                   "grow FILE SIZE: grow a closed pool in place. gc FILE: recover "
                                   "and free objects the root cannot reach.")
    p.add_argument("action", choices=["info", "check", "create", "grow", "gc"])
    p.add_argument("file", help="pool file")
    p.add_argument("rest", nargs="*", help="LAYOUT SIZE for create, SIZE for grow (e.g. 64M, 2G)")
    p.add_argument("--json", action="store_true", help="machine-readable output (info, check)")
    p.set_defaults(func=run)
