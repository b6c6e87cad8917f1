#!/usr/bin/env python3
"""Where the time of the persistent-heap programs goes: perf profiles of
bench/heap/programs.py's tasks, on the same builds and inputs.

    bench/heap/profile.py [--build DIR] [--base DIR] [--tasks T,...]
                          [--min-percent P] [--json FILE]

For each task (default: jq filter, pcre2grep match) and build (clang, cairn
and, with --base, the cairn build of a build directory from before a
change), `perf record -e cpu-clock -g` runs the program once; `perf report
--no-children` gives each symbol's share of the samples (user space only
where perf_event_paranoid keeps the kernel out). The JSON holds, per
program and build (id: e.g. jq-cairn), every symbol at or above
--min-percent (default 1), with its object file.
"""
import argparse
import datetime
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import programs  # noqa: E402

DEFAULT_TASKS = ("jq filter", "pcre2grep match")


def profile(argv, stdin, env, min_percent):
    """[(percent, object, symbol)] of one run under perf record"""
    with tempfile.TemporaryDirectory(prefix="cairn-heap-profile-") as tmp:
        data = os.path.join(tmp, "perf.data")
        with open(stdin or os.devnull, "rb") as i:
            r = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-g", "-o", data,
                                "--", *argv], stdin=i, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, env=env)
        if r.returncode != 0:
            programs.die(f"perf record of {' '.join(argv)} failed: "
                         f"{r.stderr.decode(errors='replace').strip()[-300:]}; install "
                         "linux-perf or lower kernel.perf_event_paranoid")
        rep = subprocess.run(["perf", "report", "-i", data, "--no-children", "--stdio",
                              "-g", "none", "--percent-limit", str(min_percent),
                              "--sort", "dso,symbol"], capture_output=True, text=True)
    rows = []
    for line in rep.stdout.splitlines():
        f = line.split()
        if len(f) >= 4 and f[0].endswith("%") and not line.lstrip().startswith("#"):
            while f[-1] == "-":         # -g none's empty columns
                f.pop()
            rows.append((float(f[0][:-1]), f[1], " ".join(f[3:])))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.environ.get("CAIRN_BUILD", os.path.join(
        programs.ROOT, "build")))
    ap.add_argument("--base", help="a build directory from before a change (its cairn build "
                    "is profiled too, as 'base')")
    ap.add_argument("--tasks", default=",".join(DEFAULT_TASKS))
    ap.add_argument("--min-percent", type=float, default=1.0)
    ap.add_argument("--json", help="write the results here")
    a = ap.parse_args()
    build_dir = os.path.abspath(a.build)
    cache = os.environ.get("CAIRN_DEBIAN_CACHE", os.path.join(build_dir, "debian"))
    outdir = os.path.join(build_dir, "heap-programs")
    names = [t for t in a.tasks.split(",") if t]
    pkgs = sorted({p for p in programs.PACKAGES for t in names
                   if t.split()[0].startswith(p)})
    exes, builds = programs.exes_and_builds(pkgs, build_dir, cache, a.base)
    text, js = programs.corpus(cache, build_dir, outdir, 1.0)
    todo, _, _ = programs.tasks(exes, cache, outdir, text, js, 1.0, builds)
    todo = [t for t in todo if t[0] in names]
    missing = set(names) - {t[0] for t in todo}
    if missing:
        programs.die(f"no task {', '.join(sorted(missing))}; choose from programs.py's tasks "
                     "that need no earlier task's output (jq filter, pcre2grep match, "
                     "expat xmlwf, jansson parse+dump, zlib compress, bzip2 compress)")
    env = {**os.environ, "CAIRN_PMEM_FORCE": "1"}
    result = {"command": "bench/heap/profile.py " + " ".join(sys.argv[1:]),
              "started": datetime.datetime.now(datetime.timezone.utc).isoformat(
                  timespec="seconds"),
              "source": programs._source(), "loadavg_start": os.getloadavg()[0],
              "profiles": []}
    for name, _, cmds in todo:
        for b in builds:
            argv, stdin = cmds[b]
            syms = [{"percent": pct, "object": obj, "symbol": sym}
                    for pct, obj, sym in profile(argv, stdin, env, a.min_percent)]
            # id: the program's name and the build, e.g. jq-cairn
            result["profiles"].append({"id": f"{os.path.basename(argv[0])}-{b}", "task": name,
                                       "build": b, "symbols": syms})
            for r in syms:
                print(f"{name:16s} {b:6s} {r['percent']:6.2f}% {r['object']:24s} {r['symbol']}",
                      flush=True)
    if a.json:
        programs.write_json(a.json, result)


if __name__ == "__main__":
    main()
