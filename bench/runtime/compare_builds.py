#!/usr/bin/env python3
"""Two builds of cairn side by side: `cairn bench runtime` run alternately on
each (base, new, base, new, ...), paired by round, into one JSON.

    python3 bench/runtime/compare_builds.py --base /path/to/main/build \\
        --new build --pairs 4 --json bench/runtime/results/FILE.json [--quick] [--keep DIR]

Per operation it gives cairn's throughput ratio new/base (median and
min-max of the pairs; above 1 is faster), the same ratio normalized by
pmemobj measured in the same run (which removes the machine's drift between
the two runs of a pair), and a verdict: "slower" or "faster" only when
every pair agrees, "within noise" otherwise. The flush and fence counts of
both builds (cairn-stepcount) must be equal: the restructuring of a
runtime that claims unchanged behaviour is checked on them too. The open
test gives time ratios new/base (below 1 is faster).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def run_one(build, out, quick, threads, parts):
    cmd = [sys.executable, "-m", "cairn", "bench", "runtime", "--threads", threads, "--json", out,
           "--parts", parts]
    if quick:
        cmd.append("--quick")
    # the programs' RUNPATH names the directory they were built in: a copied
    # build must still load its own libcairn
    env = dict(os.environ, CAIRN_BUILD=os.path.abspath(build),
               PYTHONPATH=os.path.join(ROOT, "python"),
               LD_LIBRARY_PATH=os.path.join(os.path.abspath(build), "runtime"))
    r = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"compare_builds: `{' '.join(cmd)}` with CAIRN_BUILD={build} failed "
                 f"({r.returncode}): {r.stderr.strip()[-400:]}")
    with open(out) as f:
        return json.load(f)


def spread(xs):
    return dict(median=round(statistics.median(xs), 3), min=round(min(xs), 3),
                max=round(max(xs), 3))


def verdict(s):
    return "slower" if s["max"] < 1 else ("faster" if s["min"] > 1 else "within noise")


def compare(pairs):
    """pairs: [(base run, new run)] -> the summary written to JSON."""
    micro = []

    def by_key(run):
        return {(m["op"], m["threads"]): m for m in run.get("micro_summary", [])
                if "cairn" in m and "ratio" in m}
    keyed = [(by_key(a), by_key(b)) for a, b in pairs]
    for ms in pairs[0][0].get("micro_summary", []):
        key = (ms["op"], ms["threads"])
        if not all(key in a and key in b for a, b in keyed):
            continue            # an operation one of the builds lacks
        base = [a[key] for a, _ in keyed]
        new = [b[key] for _, b in keyed]
        raw = spread([n["cairn"]["ops_per_s"] / b["cairn"]["ops_per_s"] for b, n in zip(base, new)])
        norm = spread([n["ratio"] / b["ratio"] for b, n in zip(base, new)])
        micro.append(dict(
            operation=ms["op"], threads=ms["threads"],
            base_ns=round(statistics.median(b["cairn"]["ns_per_op"] for b in base)),
            new_ns=round(statistics.median(n["cairn"]["ns_per_op"] for n in new)),
            ratio=raw["median"], ratio_min=raw["min"], ratio_max=raw["max"],
            vs_pmemobj=norm["median"], vs_pmemobj_min=norm["min"], vs_pmemobj_max=norm["max"],
            verdict=verdict(raw)))
    counts = []
    for op in pairs[0][0].get("counts", {}):
        def lines(m):
            return m["flushes"] + m["nt_lines"]
        b = pairs[0][0]["counts"][op]["cairn"]["measured"]
        n = pairs[0][1]["counts"][op]["cairn"]["measured"]
        same = all(a["counts"][op]["cairn"]["measured"][x] == c["counts"][op]["cairn"]["measured"][x]
                   for a, c in pairs for x in ("fences", "flushes", "nt_lines"))
        counts.append(dict(operation=op, base_fences=b["fences"], new_fences=n["fences"],
                           base_lines=lines(b), new_lines=lines(n), equal="yes" if same else "NO",
                           base_instructions=round(b["instructions"]),
                           new_instructions=round(n["instructions"])))
    opens = []
    for name, case, field in (("open, clean", "clean", "open_s"),
                              ("open, after a crash", "after_crash", "open_s"),
                              ("first alloc after a crash", "after_crash", "first_alloc_s"),
                              ("background mark after a crash", "after_crash", "background_s")):
        if "open" not in pairs[0][0]:
            break
        b = [a["open"]["cairn"][case][field] for a, _ in pairs]
        n = [c["open"]["cairn"][case][field] for _, c in pairs]
        r = spread([y / x for x, y in zip(b, n) if x > 0])
        opens.append(dict(measure=name, base_ms=round(1000 * statistics.median(b), 1),
                          new_ms=round(1000 * statistics.median(n), 1),
                          time_ratio=r["median"], time_ratio_min=r["min"], time_ratio_max=r["max"]))
    return dict(micro=micro, counts=counts, open=opens)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base", required=True, help="the build to compare against (its build dir)")
    p.add_argument("--new", required=True, help="the build under test (its build dir)")
    p.add_argument("--pairs", type=int, default=4, help="alternating pairs (default 4)")
    p.add_argument("--threads", default="1", help="thread counts for the runner (default 1)")
    p.add_argument("--quick", action="store_true", help="the runner's quick setting")
    p.add_argument("--parts", default="micro,counts,open",
                   help="the runner's parts (default micro,counts,open)")
    p.add_argument("--json", required=True, help="where the summary goes")
    p.add_argument("--keep", metavar="DIR", help="also keep every run's own JSON in DIR")
    p.add_argument("--base-commit", metavar="SHA",
                   help="the commit the base build was made from (a copied build dir reports "
                        "the source tree's, which may have moved on)")
    p.add_argument("--from-kept", metavar="DIR",
                   help="run nothing: summarize the runs an earlier --keep DIR kept")
    a = p.parse_args()
    if a.pairs < 1:
        sys.exit("compare_builds: --pairs must be at least 1")
    for b in (a.base, a.new):
        if not os.path.isdir(os.path.join(b, "bench")):
            sys.exit(f"compare_builds: {b} has no bench/ directory: give a build directory "
                     "made by scripts/build.sh")
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    if a.from_kept:
        with open(os.path.join(a.from_kept, "base0.json")) as f:
            started = json.load(f).get("started", started)
    pairs = []
    with tempfile.TemporaryDirectory(prefix="cairn-compare-") as tmp:
        for i in range(a.pairs):
            if a.from_kept:
                with open(os.path.join(a.from_kept, f"base{i}.json")) as fb, \
                        open(os.path.join(a.from_kept, f"new{i}.json")) as fn:
                    pairs.append((json.load(fb), json.load(fn)))
                continue
            base = run_one(a.base, os.path.join(tmp, f"base{i}.json"), a.quick, a.threads, a.parts)
            new = run_one(a.new, os.path.join(tmp, f"new{i}.json"), a.quick, a.threads, a.parts)
            pairs.append((base, new))
            if a.keep:
                os.makedirs(a.keep, exist_ok=True)
                for name, run in (("base", base), ("new", new)):
                    with open(os.path.join(a.keep, f"{name}{i}.json"), "w") as f:
                        json.dump(run, f)
            print(f"compare_builds: pair {i + 1}/{a.pairs} done", file=sys.stderr)
    out = dict(benchmark="cairn bench runtime, two builds side by side", pairs=a.pairs,
               quick=a.quick, threads=a.threads,
               command="python3 bench/runtime/compare_builds.py " + " ".join(sys.argv[1:]),
               started=started, source=pairs[0][1]["source"],
               base_commit=a.base_commit or pairs[0][0]["source"]["commit"], new_commit=pairs[0][1]["source"]["commit"],
               **compare(pairs))
    with open(a.json, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    for r in out["micro"]:
        print(f"{r['operation']:20} {r['base_ns']:>7} ns {r['new_ns']:>7} ns  "
              f"{r['ratio']:.3f} ({r['ratio_min']:.3f}-{r['ratio_max']:.3f})  {r['verdict']}")


if __name__ == "__main__":
    main()
