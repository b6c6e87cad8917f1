"""Paired measurement: builds of one benchmark alive at once on one CPU,
taking turns running slices, so every build sees the same machine noise.

`cairn cc bench` (commands/cc.py) and compiler/bench/paired_slices.py
compare builds of compiler/bench/ds_bench.c this way; `cairn bench runtime`
(commands/bench.py) shares the pool-directory check."""
import json
import os
import subprocess


def dir_problem(where):
    """Why a benchmark cannot put its pool in directory `where` (a Path),
    or None."""
    if not where.exists():
        return "no such directory"
    if not where.is_dir():
        return "not a directory"
    if not os.access(where, os.W_OK | os.X_OK):
        return "cannot write there"
    return None


def serve(exe, mode, pool, args, s, w):
    """One build of ds_bench.c, alive: it has built structure s and runs a
    slice of workload w per 'go'. args: n, ops, slices, cpu ("none": no
    pinning)."""
    per = max(args.ops // args.slices, 1)
    cmd = [str(exe), mode, str(pool), str(args.n), str(per), s, w, "serve", str(per // 4)]
    if args.cpu != "none":
        cmd = ["taskset", "-c", args.cpu] + cmd
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                         env=dict(os.environ, CAIRN_PMEM_FORCE="1"))
    if p.stdout.readline().strip() != "ready":
        p.kill()
        raise SystemExit(f"cairn: {exe} {mode} {s} {w} did not start")
    return p


def run_slice(p):
    """One slice of a served build: its ns per operation."""
    p.stdin.write("go\n")
    p.stdin.flush()
    line = p.stdout.readline()
    if not line.startswith("{"):
        raise SystemExit(f"cairn: a benchmark process stopped: {line!r}")
    return json.loads(line)["ns_per_op"]


def quantile(xs, q):
    """The q-quantile of xs, interpolated between neighbours."""
    xs = sorted(xs)
    k = (len(xs) - 1) * q
    i = int(k)
    return xs[i] if i + 1 >= len(xs) else xs[i] + (xs[i + 1] - xs[i]) * (k - i)
