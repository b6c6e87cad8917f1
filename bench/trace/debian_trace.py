#!/usr/bin/env python3
"""`cairn trace report` and `cairn sim` on Debian programs built with
`cairn-cc --persistent-heap --trace`: zlib's minigzip compressing and
bzip2 compressing a file (every malloc of theirs in a pool, every store
they make traced).

    CAIRN_BUILD=build CAIRN_DEBIAN_CACHE=/tmp/deb tests/debian/run.sh zlib bzip2   # fetches the sources
    CAIRN_BUILD=build bench/trace/debian_trace.py --cache /tmp/deb \\
        -o bench/trace/results/debian_trace.json

The input is the first 256 KiB of the zlib source's ChangeLog repeated to
INPUT bytes. The JSON has each program's WHISPER row (as collect.py makes
it) and its Fig. 10 row (Table 3's parameters).
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
import collect  # noqa: E402


def run(argv, **kw):
    return subprocess.run(argv, check=True, capture_output=True, **kw)


def dsc(cache, pkg):
    found = sorted(glob.glob(os.path.join(cache, "src", pkg + "_*.dsc")))
    if not found:
        raise SystemExit(f"debian_trace: no {pkg} source in {cache}/src; fetch it with "
                         f"CAIRN_DEBIAN_CACHE={cache} tests/debian/run.sh {pkg}")
    return found[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", required=True)
    ap.add_argument("--input", type=int, default=1 << 20, help="bytes to compress")
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args()
    build = os.path.abspath(os.environ.get("CAIRN_BUILD", os.path.join(ROOT, "build")))
    cc = os.path.join(build, "compiler", "cairn-cc") + " --persistent-heap --trace"
    env = dict(os.environ, CAIRN_PMEM_FORCE="1", CAIRN_BUILD=build)
    rows, sims = [], []
    with tempfile.TemporaryDirectory() as d, tempfile.TemporaryDirectory(dir="/dev/shm") as shm:
        z, b = os.path.join(d, "zlib"), os.path.join(d, "bzip2")
        run(["dpkg-source", "-x", dsc(a.cache, "zlib"), z])
        run(["dpkg-source", "-x", dsc(a.cache, "bzip2"), b])
        text = open(os.path.join(z, "ChangeLog"), "rb").read()[:256 << 10]
        data = (text * (a.input // len(text) + 1))[:a.input]
        src = os.path.join(d, "input")
        with open(src, "wb") as f:
            f.write(data)
        run(["sh", "-c", f'CC="{cc}" CFLAGS="-O2 -g" ./configure --static && make -j2 minigzip'],
            cwd=z, env=env)
        run(["make", "-j2", f"CC={cc}", "CFLAGS=-O2 -g -D_FILE_OFFSET_BITS=64", "bzip2"],
            cwd=b, env=env)
        progs = {
            "zlib minigzip": ([os.path.join(z, "minigzip"), "-c", src], "minigzip", {}),
            # Debian's bzip2 links the libbz2.so built beside it (as its Makefile's tests run it)
            "bzip2 -1": ([os.path.join(b, "bzip2"), "-1", "-c", src], "bzip2",
                         {"LD_LIBRARY_PATH": b}),
        }
        for name, (argv, short, extra) in progs.items():
            trace = os.path.join(shm, short + ".trace")
            with open(os.devnull, "wb") as out:
                subprocess.run(argv, check=True, stdout=out,
                               env=dict(env, **extra, CAIRN_TRACE=trace,
                                        CAIRN_PERSISTENT_HEAP=os.path.join(shm, short + ".pool")))
            cli = [sys.executable, "-m", "cairn"]
            r = json.loads(run([*cli, "trace", "report", trace, "--json"], env=env).stdout)
            s = json.loads(run([*cli, "sim", trace, "--json"], env=env).stdout)
            rows.append(dict(collect.whisper_row(name, r), records=r["trace"]["records"]))
            sims.append({"workload": name, **{k: round(v["normalized"], 3)
                                              for k, v in s[os.path.basename(trace)]["designs"].items()},
                         "x86_ms": round(s[os.path.basename(trace)]["designs"]["x86"]["ns"] / 1e6, 3)})
    out = {"input_bytes": a.input, "whisper_table": rows, "fig10": sims}
    collect.write_results(a.out, "debian_trace.py", out)
    print(json.dumps(out["whisper_table"], indent=1))
    print(json.dumps(out["fig10"], indent=1))


if __name__ == "__main__":
    main()
