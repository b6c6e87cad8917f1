"""`cairn bench vacation`: STAMP's vacation, three builds of its manager.

bench/vacation/manager.c is the travel agency in ordinary volatile C (cars,
flights, rooms and customers, each a tree); manager_cairn.patch makes it
persistent with the fewest changes (pool and root in one call, the file's
malloc/free in the pool, each client transaction's function one
transaction; compiled by cairn-cc) and
manager_pmemobj.c is the libpmemobj port a PMDK user writes. The same
client (client.c, clang -O2) populates the tables and runs STAMP's mix of
MAKE_RESERVATION, DELETE_CUSTOMER and UPDATE_TABLES transactions, one
process per build, with 1 and 2 client threads (one mutex around every
call into the manager, all builds alike), in the way `cairn bench ycsb`
runs its builds:

  - every round runs each build once per mix, the builds' order rotating
    from round to round, pools on --dir (default /dev/shm) with user-space
    flushes forced on both sides;
  - throughput per CPU-second of the client (the ratios use it; wall-clock
    throughput is printed beside it), p50/p99 latency of a transaction;
  - per round the ratio cairn/libpmemobj and volatile/cairn; the median and
    min-max over rounds; a ratio whose rounds do not all fall on the same
    side of 1.0 is "not shown";
  - every build must leave tables that pass mgr_check, and with one client
    the same tables (its digest);
  - the lines each port changes against manager.c (as `cairn bench ycsb`).

Mixes: STAMP's vacation-high (-n4 -q60 -u90) and vacation-low (-n2 -q90
-u98). Sizes: 16384 relations and 20,000 transactions a run by default;
--scale multiplies both; --full is STAMP's "++" size (1 M relations, 4 M
transactions).
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from cairn import paths
from cairn.argtypes import positive_int
from cairn.ycsb import (FORCE_ENV, _code_lines, _ints, _ratio, _source, _subset,
                        changed_lines, port_source)

BUILDS = ("volatile", "cairn", "pmemobj")
MIXES = {"high": {"queries": 4, "range": 60, "user": 90},   # STAMP vacation-high
         "low": {"queries": 2, "range": 90, "user": 98}}    # STAMP vacation-low
DEFAULT = dict(relations=16384, transactions=20000, rounds=3)
FULL = dict(relations=1 << 20, transactions=1 << 22, rounds=3)
QUICK = dict(relations=1024, transactions=2000, rounds=1)


def add_parser(sub):
    """`cairn bench vacation`, added to `cairn bench` by commands/bench.py."""
    p = sub.add_parser(
        "vacation", help="STAMP vacation: volatile vs cairn-cc vs libpmemobj",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mixes", type=_subset("mix", tuple(MIXES)), default=list(MIXES),
                   metavar="M[,M...]", help="from high,low (default both)")
    p.add_argument("--clients", type=_ints, default=[1, 2], metavar="C[,C...]",
                   help="client threads (default 1,2; one mutex around each call)")
    p.add_argument("--builds", type=_subset("build", BUILDS), default=list(BUILDS),
                   metavar="B[,B...]", help="from volatile,cairn,pmemobj (default all)")
    p.add_argument("--relations", type=positive_int, help="ids per table (default 16384)")
    p.add_argument("--transactions", type=positive_int, help="transactions a run (default 20000)")
    p.add_argument("--rounds", type=positive_int, help="rounds (default 3)")
    p.add_argument("--scale", type=float, default=1.0,
                   help="multiply relations and transactions (default 1)")
    p.add_argument("--quick", action="store_true", help="tiny sizes, one round")
    p.add_argument("--full", action="store_true", help="STAMP's ++ sizes")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", metavar="FILE", help="write every run and the summary")
    p.add_argument("--plot", metavar="FILE.png", help="draw throughput per build and mix")
    p.add_argument("--dir", default="/dev/shm", help="where the pools go (default /dev/shm)")
    p.set_defaults(func=run)
    return p


def binary(build):
    return paths.build_dir() / "bench" / "vacation" / f"vacation-{build}"


def line_counts():
    orig = (paths.SOURCE_ROOT / "bench" / "vacation" / "manager.c").read_text()
    row = {"original_lines": len(_code_lines(orig))}
    for port in ("cairn", "pmemobj"):
        row[port] = changed_lines(orig, port_source("manager", port, "vacation"))
    return row


def run_client(build, pool, relations, transactions, mix, seed, clients=1, extra=()):
    """One process of one build: populate, run the mix, check. Its JSON."""
    exe = binary(build)
    if not exe.exists():
        raise SystemExit(f"cairn: {exe.name} is not built in {exe.parent}; run scripts/build.sh "
                         f"(or set CAIRN_BUILD)")
    m = MIXES[mix]
    cmd = [str(exe), "--pool", str(pool), "--relations", str(relations), "--transactions",
           str(transactions), "--queries", str(m["queries"]), "--range", str(m["range"]),
           "--user", str(m["user"]), "--seed", str(seed), "--clients", str(clients), *extra]
    r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, **FORCE_ENV))
    if r.returncode:
        raise SystemExit(f"cairn: vacation-{build} failed (exit {r.returncode}):\n"
                         f"  {' '.join(cmd)}\n{r.stderr.strip()}")
    return json.loads(r.stdout)


def summarize(runs, builds, cells):
    out = []
    for mix, clients in cells:
        per = {b: {r["round"]: r for r in runs
                   if r["mix"] == mix and r["clients"] == clients and r["build"] == b}
               for b in builds}
        e = {"mix": mix, "clients": clients}
        for b in builds:
            rs = per[b].values()
            for k in ("tx_per_cpu_s", "tx_per_s", "p50_ns", "p99_ns", "load_s"):
                e[f"{b}_{k}"] = statistics.median(r[k] for r in rs) if rs else None
        for num, den in (("cairn", "pmemobj"), ("volatile", "cairn")):
            if num in builds and den in builds:
                for metric, suffix in (("tx_per_cpu_s", ""), ("tx_per_s", "_wall")):
                    rt = _ratio([per[num][k][metric] / per[den][k][metric]
                                 for k in per[num] if k in per[den]])
                    name = f"{num}_vs_{den}{suffix}"
                    e[name] = rt["median"] if rt else None
                    e[name + "_min"] = rt["min"] if rt else None
                    e[name + "_max"] = rt["max"] if rt else None
                    e[name + "_shown"] = ("shown" if rt and rt["shown"] else "not shown")
        out.append(e)
    return out


def render(summary, lines, builds):
    head = ["mix", "clients"] + [f"{b} Ktx/CPU-s" for b in builds] + [f"{b} p50 us" for b in builds]
    rows = []
    for e in summary:
        row = [e["mix"], str(e["clients"])] + \
              [f"{e[f'{b}_tx_per_cpu_s'] / 1e3:.1f}" for b in builds] + \
              [f"{e[f'{b}_p50_ns'] / 1e3:.1f}" for b in builds]
        rows.append(row)
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    for e in summary:
        for num, den in (("cairn", "pmemobj"), ("volatile", "cairn")):
            if e.get(f"{num}_vs_{den}") is not None:
                out.append(f"- {e['mix']}, {e['clients']} client(s): {num}/{den} {e[f'{num}_vs_{den}']:.2f}x "
                           f"({e[f'{num}_vs_{den}_min']:.2f}-{e[f'{num}_vs_{den}_max']:.2f}, "
                           f"{e[f'{num}_vs_{den}_shown']}); wall clock "
                           f"{e[f'{num}_vs_{den}_wall']:.2f}x")
    out.append(f"- changed lines against manager.c ({lines['original_lines']} code lines): "
               f"cairn {lines['cairn']}, libpmemobj {lines['pmemobj']}")
    return "\n".join(out)


def plot(summary, builds, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    width = 0.8 / len(builds)
    colors = {"volatile": "#7f7f7f", "cairn": "#1f77b4", "pmemobj": "#ff7f0e"}
    for k, b in enumerate(builds):
        ax.bar([i + (k - (len(builds) - 1) / 2) * width for i in range(len(summary))],
               [e[f"{b}_tx_per_cpu_s"] / 1e3 for e in summary], width, label=b,
               color=colors[b])
    ax.set_xticks(range(len(summary)), [f"{e['mix']}, {e['clients']} cl." for e in summary])
    ax.set_ylabel("K transactions / CPU-second")
    ax.set_title("STAMP vacation")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run(args):
    sizes = dict(QUICK if args.quick else FULL if args.full else DEFAULT)
    for k in ("relations", "transactions", "rounds"):
        if getattr(args, k):
            sizes[k] = getattr(args, k)
    if args.scale <= 0:
        raise SystemExit("cairn: --scale must be above 0")
    relations = max(int(sizes["relations"] * args.scale), 1)
    transactions = max(int(sizes["transactions"] * args.scale), 1)
    rounds = sizes["rounds"]
    where = Path(args.dir)
    if not where.is_dir() or not os.access(where, os.W_OK | os.X_OK):
        raise SystemExit(f"cairn: --dir {where} is not a writable directory; pick another")
    builds = args.builds
    pool = where / f"cairn-vacation-{os.getpid()}.pool"
    runs = []
    cells = [(mix, c) for mix in args.mixes for c in args.clients]
    for mix, clients in cells:
        digests = set()
        for rnd in range(rounds):
            order = builds[rnd % len(builds):] + builds[:rnd % len(builds)]
            for b in order:
                if pool.exists():
                    pool.unlink()
                try:
                    r = run_client(b, pool, relations, transactions, mix, args.seed, clients)
                finally:
                    if pool.exists():
                        pool.unlink()
                r.update(mix=mix, round=rnd)   # the client reports "clients"
                runs.append(r)
                digests.add(r["digest"])
                print(f"vacation-{mix} {clients} client(s) round {rnd + 1}/{rounds} {b}: "
                      f"{r['tx_per_cpu_s'] / 1e3:.1f} K tx/CPU-s", flush=True)
        # one client: every build draws the same transactions in the same
        # order; more: the interleaving differs (mgr_check still ran)
        if clients == 1 and len(digests) != 1:
            raise SystemExit(f"cairn: the builds leave different tables for vacation-{mix} "
                             f"(digests {sorted(digests)}); a port is wrong")
    summary = summarize(runs, builds, cells)
    lines = line_counts()
    print(render(summary, lines, builds))
    if args.json:
        doc = {"command": _command(),
               "started": datetime.datetime.now(datetime.timezone.utc).isoformat(
                   timespec="seconds"),
               "source": _source(), "relations": relations, "transactions": transactions,
               "rounds": rounds, "mixes": {m: MIXES[m] for m in args.mixes},
               "clients": args.clients,
               "summary": summary, "lines": lines, "runs": runs}
        Path(args.json).write_text(json.dumps(doc, indent=1) + "\n")
    if args.plot:
        plot(summary, builds, args.plot)
    return 0


def _command():
    """The command line as typed after `cairn bench vacation`."""
    argv = sys.argv[sys.argv.index("vacation") + 1:] if "vacation" in sys.argv else []
    return " ".join(["cairn bench vacation", *argv])
