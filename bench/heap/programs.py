#!/usr/bin/env python3
"""Debian programs under cairn-cc --persistent-heap, timed against their
clang -O2 builds on real files (issue 19 item 5).

    bench/heap/programs.py [--build DIR] [--base DIR] [--rounds N] [--scale X]
                           [--packages P,...] [--json FILE]

The sources are the Debian 12 source packages tests/debian/run.sh fetches
(its cache, $CAIRN_DEBIAN_CACHE or BUILD/debian; a missing one is fetched
with `tests/debian/run.sh --fetch PKG`). Each package is unpacked twice under
BUILD/heap-programs/ and built twice, with CC="clang-19" and with
CC="cairn-cc --persistent-heap", both at -O2; every malloc of the cairn
build (library and program) then lives in a pool. Builds are kept there;
a cairn build older than BUILD/compiler's cairn-cc, pass or runtime
libraries is made again.

  package  program          workload (inputs: see corpus())
  zlib     minigzip         compress the corpus at -9, then decompress it
  bzip2    bzip2            compress the corpus at -9, then decompress it
  pcre2    pcre2grep        count the corpus lines matching four patterns
                            (8-bit library, JIT off, as tests/debian)
  expat    xmlwf            check expat's own testdata/largefiles/nes96.xml
                            several times
  jansson  jansson_parse.c  parse the JSON corpus, walk it, dump it sorted
  jq       jq               three filters over the JSON corpus

The corpus is pcre2's orig tarball unpacked to one tar stream (text and
source code); the JSON corpus describes each of its text files (name,
size, mode, lines) as one array. --scale X makes both X times as large (repeated
or cut; default 1: a few seconds per program on this machine).

With --base DIR (a copy of a build directory from before a change), the
cairn build of DIR's cairn-cc and runtime runs as a third build in the
same rounds ("base"; built under DIR/heap-programs), so before and after
are timed side by side with clang.

Each round runs every build of a task, the order rotating. A run is
timed by the CPU seconds (user + system) the program used, from wait4: on a
machine shared with other jobs wall-clock time mostly measures the
scheduler (the wall-clock figures are kept beside it). A task's ratio
cairn/clang is the median of the per-round ratios, with min-max.
Every build must produce the same output (a hash of it), or the run stops.
The goal (<= 1.5x clang per program) is "met" when every round meets it,
"NOT met" when none does, "not shown" otherwise (always with one round).
"""
import argparse
import datetime
import gzip
import hashlib
import io
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
from cairn.results import verdict  # noqa: E402
from cairn.ycsb import _source  # noqa: E402

PACKAGES = ("zlib", "bzip2", "pcre2", "expat", "jansson", "jq")
BUILDS = ("clang", "cairn")
GOAL = 1.5
JOBS = "2"


def die(msg):
    sys.exit(f"programs.py: {msg}")


def sh(cmd, cwd, env, log):
    with open(log, "a") as f:
        f.write(f"$ {cmd}\n")
        f.flush()
        r = subprocess.run(["bash", "-c", cmd], cwd=cwd, env=env, stdout=f, stderr=f)
    if r.returncode != 0:
        die(f"`{cmd}` failed in {cwd} (see {log}); fix the build recipe or the toolchain")


# ---------------------------------------------------------------- builds
# Each recipe runs in the unpacked tree with $CC and $CFLAGS set, and
# returns the path of the program it built (relative to the tree).

def build_zlib(tree, env, log):
    sh('./configure --static && make -j"$JOBS" minigzip', tree, env, log)
    return "minigzip"


def build_bzip2(tree, env, log):
    # Debian's Makefile links bzip2 with the shared libbz2, which the system
    # provides too: linked with the static library, the program runs the
    # library its build compiled.
    sh('make -j"$JOBS" CC="$CC" CFLAGS="$CFLAGS -D_FILE_OFFSET_BITS=64" libbz2.a bzip2.o && '
       '$CC $CFLAGS -o bzip2-static bzip2.o libbz2.a', tree, env, log)
    return "bzip2-static"


def build_pcre2(tree, env, log):
    sh('./configure --disable-shared --disable-jit && make -j"$JOBS" pcre2grep', tree, env, log)
    return "pcre2grep"


def build_expat(tree, env, log):
    # Debian's security patches test "#if XML_DTD == 1"; CMake's config
    # header defines it empty (tests/debian/run.sh does the same).
    sh('cd expat && mkdir -p b && cd b && cmake .. -DCMAKE_C_COMPILER="${CC%% *}" '
       '-DCMAKE_C_FLAGS="${CC#"${CC%% *}"} $CFLAGS" -DEXPAT_SHARED_LIBS=OFF '
       '-DEXPAT_BUILD_TOOLS=ON -DEXPAT_BUILD_EXAMPLES=OFF -DEXPAT_BUILD_DOCS=OFF '
       '-DEXPAT_BUILD_TESTS=OFF -DEXPAT_BUILD_FUZZERS=OFF && '
       "sed -i 's/^#define XML_DTD$/#define XML_DTD 1/' expat_config.h && "
       'make -j"$JOBS" xmlwf', tree, env, log)
    return "expat/b/xmlwf/xmlwf"


def build_jansson(tree, env, log):
    sh('mkdir -p b && cd b && cmake .. -DCMAKE_C_COMPILER="${CC%% *}" '
       '-DCMAKE_C_FLAGS="${CC#"${CC%% *}"} $CFLAGS" -DJANSSON_BUILD_DOCS=OFF '
       '-DJANSSON_EXAMPLES=OFF -DJANSSON_WITHOUT_TESTS=ON && make -j"$JOBS" jansson && '
       f'$CC $CFLAGS -Iinclude {HERE}/jansson_parse.c lib/libjansson.a -o ../jansson_parse',
       tree, env, log)
    return "jansson_parse"


def build_jq(tree, env, log):
    # Debian runs autoreconf (not on this machine): the library and jq are
    # compiled from the sources Makefile.am names, with the definitions
    # configure makes on glibc, the parser and lexer as shipped (the recipe
    # of tests/debian/run.sh).
    defs = ["-D_GNU_SOURCE", "-DIEEE_8087=1", "-DHAVE___THREAD=1", "-DHAVE_ALLOCA_H=1",
            "-DHAVE_ALLOCA=1", "-DHAVE_MEMMEM=1", "-DHAVE_MKSTEMP=1", "-DHAVE_TM_TM_GMT_OFF=1"]
    funcs = ["isatty", "strptime", "strftime", "timegm", "gmtime_r", "gmtime", "localtime_r",
             "localtime", "gettimeofday", "getentropy", "pthread_once"]
    with open(os.path.join(tree, "configure.ac")) as f:
        for line in f:
            if line.startswith("AC_CHECK_MATH_FUNC("):
                funcs.append(line[len("AC_CHECK_MATH_FUNC("):].split(")")[0])
    defs += [f"-DHAVE_{fn.upper()}=1" for fn in funcs if fn != "pow10"]
    with open(os.path.join(tree, "src", "version.h"), "w") as f:
        f.write('#define JQ_VERSION "1.6"\n')
    with open(os.path.join(tree, "src", "builtin.jq")) as f, \
            open(os.path.join(tree, "src", "builtin.inc"), "w") as out:
        for line in f.read().splitlines():
            out.write('"' + line.replace("\\", "\\\\").replace('"', '\\"') + '\\n"\n')
    srcs = ("builtin bytecode compile execute jq_test jv jv_alloc jv_aux jv_dtoa jv_file "
            "jv_parse jv_print jv_unicode linker locfile util lexer parser main").split()
    objs = " ".join(f"src/{s}.o" for s in srcs)
    with open(os.path.join(tree, "cairn.mk"), "w") as f:
        f.write(f"src/%.o: src/%.c\n\t$(CC) $(CFLAGS) -c $< -o $@\n"
                f"jq: {objs}\n\t$(CC) $(CFLAGS) -o $@ $^ -lm\n")
    sh(f'make -r -j"$JOBS" -f cairn.mk CC="$CC" CFLAGS="$CFLAGS -I. -Isrc {" ".join(defs)}" jq',
       tree, env, log)
    return "jq"


def cached_sources(pkg, cache):
    d = os.path.join(cache, "src")
    return sorted(f for f in os.listdir(d) if f.startswith(pkg + "_") and f.endswith(".dsc")) \
        if os.path.isdir(d) else []


def fetch_source(pkg, cache, build_dir):
    """The .dsc files of PKG in the cache, fetched by tests/debian/run.sh
    --fetch when there are none; stops the run when it cannot be fetched."""
    dscs = cached_sources(pkg, cache)
    if dscs:
        return dscs
    r = subprocess.run([os.path.join(ROOT, "tests", "debian", "run.sh"), "--fetch", pkg],
                       env={**os.environ, "CAIRN_BUILD": build_dir, "CAIRN_DEBIAN_CACHE": cache},
                       capture_output=True, text=True)
    dscs = cached_sources(pkg, cache) if r.returncode == 0 else []
    if not dscs:
        die(f"no {pkg} source in {cache}/src and `tests/debian/run.sh --fetch {pkg}` "
            f"could not fetch it ({(r.stdout + r.stderr).strip()}); set "
            "CAIRN_DEBIAN_MIRROR or copy the .dsc and its files there")
    return dscs


def build_all(packages, build_dir, cache, outdir, builds=BUILDS):
    """{package: {build: exe}}"""
    cc = {"clang": shutil.which("clang-19") or "/usr/lib/llvm-19/bin/clang",
          "cairn": os.path.join(build_dir, "compiler", "cairn-cc") + " --persistent-heap"}
    if not os.access(cc["cairn"].split()[0], os.X_OK):
        die(f"{cc['cairn'].split()[0]} is not built; run scripts/build.sh")
    # a cairn build older than the toolchain that made it is rebuilt
    tool = os.path.join(build_dir, "compiler")
    toolchain = max(os.path.getmtime(os.path.join(tool, f)) for f in os.listdir(tool)
                    if f.endswith((".so", ".a")) or f.startswith("cairn-"))
    exes = {}
    for pkg in packages:
        dscs = fetch_source(pkg, cache, build_dir)
        exes[pkg] = {}
        for b in builds:
            tree = os.path.join(outdir, b, pkg)
            log = os.path.join(outdir, f"{pkg}-{b}.log")
            stamp = os.path.join(outdir, b, f"{pkg}.built")
            recipe = globals()[f"build_{pkg}"]
            stale = b == "cairn" and os.path.exists(stamp) and \
                os.path.getmtime(stamp) < toolchain
            if stale or not os.path.exists(stamp):
                shutil.rmtree(tree, ignore_errors=True)
                os.makedirs(os.path.dirname(tree), exist_ok=True)
                open(log, "w").close()
                sh(f"dpkg-source -x {os.path.join(cache, 'src', dscs[-1])} {tree}",
                   outdir, os.environ, log)
                env = {**os.environ, "CC": cc[b], "CFLAGS": "-O2", "JOBS": JOBS}
                exe = os.path.join(tree, recipe(tree, env, log))
                with open(stamp, "w") as f:
                    f.write(exe + "\n")
            with open(stamp) as f:
                exes[pkg][b] = f.read().strip()
            if not os.access(exes[pkg][b], os.X_OK):
                die(f"{exes[pkg][b]} is missing; remove {stamp} to rebuild")
    return exes


def exes_and_builds(pkgs, build_dir, cache, base=None):
    """({package: {build: exe}}, builds): clang and cairn from build_dir
    and, with base (a build directory from before a change), its cairn
    build as "base" (built under base/heap-programs)"""
    exes = build_all(pkgs, build_dir, cache, os.path.join(build_dir, "heap-programs"))
    if not base:
        return exes, BUILDS
    base_dir = os.path.abspath(base)
    base_exes = build_all(pkgs, base_dir, cache, os.path.join(base_dir, "heap-programs"),
                          builds=("cairn",))
    for pkg in pkgs:
        exes[pkg]["base"] = base_exes[pkg]["cairn"]
    return exes, BUILDS + ("base",)


def write_json(path, result):
    with open(path, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")


# ---------------------------------------------------------------- inputs

def corpus(cache, build_dir, outdir, scale):
    """(text corpus, JSON corpus): pcre2's orig tarball unpacked, and a JSON
    array describing its files, each repeated or cut to SCALE times its
    size (pcre2's source is fetched when it is not cached, whichever
    packages are timed)."""
    fetch_source("pcre2", cache, build_dir)
    src = [f for f in os.listdir(os.path.join(cache, "src")) if f.startswith("pcre2_")
           and ".orig.tar" in f]
    if not src:
        die(f"no pcre2 orig tarball in {cache}/src; fetch it with `tests/debian/run.sh pcre2`")
    text = os.path.join(outdir, f"corpus-{scale:g}.tar")
    js = os.path.join(outdir, f"corpus-{scale:g}.json")
    if os.path.exists(text) and os.path.exists(js):
        return text, js
    with gzip.open(os.path.join(cache, "src", src[0])) as f:
        raw = f.read()
    files = []
    with tarfile.open(fileobj=io.BytesIO(raw)) as t:
        for m in t.getmembers():
            data = t.extractfile(m).read() if m.isfile() else b"\0"
            if b"\0" not in data:   # text files only
                lines = data.decode("latin-1").splitlines()
                files.append({"name": m.name, "size": m.size, "mode": m.mode,
                              "lines": lines})
    reps = math.ceil(scale)
    with open(text + ".tmp", "wb") as f:
        f.write((raw * reps)[:max(1, round(len(raw) * scale))])
    with open(js + ".tmp", "w") as f:
        json.dump((files * reps)[:max(1, round(len(files) * scale))], f)
    os.rename(text + ".tmp", text)
    os.rename(js + ".tmp", js)
    return text, js


def tasks(exes, cache, outdir, text, js, scale, builds=BUILDS):
    """[(name, package, {build: (argv, stdin file or None)})]"""
    nes = os.path.join(outdir, "clang", "expat", "testdata", "largefiles", "nes96.xml")
    xml_reps = max(1, round(8 * scale))
    out = []

    def task(name, pkg, args, stdin=None):
        if pkg in exes:
            out.append((name, pkg, {b: ([exes[pkg][b], *args(b)], stdin(b) if stdin else None)
                                    for b in builds}))

    gz = {b: os.path.join(outdir, f"corpus.{b}.gz") for b in builds}
    bz = {b: os.path.join(outdir, f"corpus.{b}.bz2") for b in builds}
    task("zlib compress", "zlib", lambda b: ["-9"], lambda b: text)
    task("zlib decompress", "zlib", lambda b: ["-d"], lambda b: gz[b])
    task("bzip2 compress", "bzip2", lambda b: ["-9"], lambda b: text)
    task("bzip2 decompress", "bzip2", lambda b: ["-d"], lambda b: bz[b])
    task("pcre2grep match", "pcre2", lambda b: [
        "-c", "-i", "-e", r"\b(?:pcre2|pattern)_[a-z_]+\s*\(", "-e", r"0x[0-9a-f]{4,}",
        "-e", r"^\s*(?:if|while)\s*\(.*(?:==|!=).*\)\s*$", "-e", r"(\w+)\s+\1\b", text])
    task("expat xmlwf", "expat", lambda b: [nes] * xml_reps)
    task("jansson parse+dump", "jansson", lambda b: [js, str(max(1, round(2 * scale)))])
    task("jq filter", "jq", lambda b: [
        "-c", "([.[] | select(.size > 4096) | {name, n: (.lines | length)}] | length), "
        "([.[] | .lines[] | split(\" \") | length] | add), "
        "(map(.lines | map(length) | add // 0) | sort | .[length / 2 | floor])", js])
    return out, gz, bz


def run_one(argv, stdin, stdout_path, env):
    """(wall seconds, CPU seconds (user + system), peak RSS KiB, sha256 of
    stdout)"""
    with open(stdin or os.devnull, "rb") as i, open(stdout_path, "wb") as o:
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, stdin=i, stdout=o, stderr=subprocess.PIPE, env=env)
        _, status, ru = os.wait4(p.pid, 0)
        dt = time.perf_counter() - t0
        err = p.stderr.read().decode(errors="replace")
        p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        die(f"{' '.join(argv)} failed: {err.strip()[-300:]}; fix the build or the workload")
    with open(stdout_path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    return dt, ru.ru_utime + ru.ru_stime, ru.ru_maxrss, digest


def spread(xs):
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.environ.get("CAIRN_BUILD", os.path.join(ROOT, "build")),
                    help="cairn build directory (default $CAIRN_BUILD or ./build)")
    ap.add_argument("--base", help="a build directory from before a change: its cairn build "
                    "runs as a third build in the same rounds")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scale", type=float, default=1.0, help="input size factor (default 1)")
    ap.add_argument("--packages", default=",".join(PACKAGES),
                    help=f"subset of {','.join(PACKAGES)}")
    ap.add_argument("--json", help="write the results here")
    a = ap.parse_args()
    if a.rounds < 1 or a.scale <= 0:
        die("--rounds must be at least 1 and --scale above 0")
    pkgs = [p for p in a.packages.split(",") if p]
    bad = [p for p in pkgs if p not in PACKAGES]
    if bad:
        die(f"unknown package {','.join(bad)}; choose from {','.join(PACKAGES)}")
    build_dir = os.path.abspath(a.build)
    cache = os.environ.get("CAIRN_DEBIAN_CACHE", os.path.join(build_dir, "debian"))
    outdir = os.path.join(build_dir, "heap-programs")
    os.makedirs(outdir, exist_ok=True)
    exes, builds = exes_and_builds(pkgs, build_dir, cache, a.base)
    text, js = corpus(cache, build_dir, outdir, a.scale)
    todo, gz, bz = tasks(exes, cache, outdir, text, js, a.scale, builds)
    env = {**os.environ, "CAIRN_PMEM_FORCE": "1"}
    heaps_before = set(f for f in os.listdir("/dev/shm") if f.startswith("cairn-heap-"))
    result = {"command": "bench/heap/programs.py " + " ".join(sys.argv[1:]),
              "started": datetime.datetime.now(datetime.timezone.utc).isoformat(
                  timespec="seconds"),
              "rounds": a.rounds, "scale": a.scale, "goal": GOAL,
              "corpus_bytes": os.path.getsize(text), "json_bytes": os.path.getsize(js),
              "loadavg_start": os.getloadavg()[0], "tasks": []}
    result["source"] = _source()
    for name, pkg, cmds in todo:
        secs = {b: [] for b in builds}   # CPU seconds
        wall = {b: [] for b in builds}
        rss = {b: [] for b in builds}
        digests = set()
        for r in range(a.rounds):
            for b in builds[r % len(builds):] + builds[:r % len(builds)]:
                argv, stdin = cmds[b]
                dest = {"zlib compress": gz, "bzip2 compress": bz}.get(name, {}).get(b)
                dt, cpu, kib, digest = run_one(argv, stdin, dest or os.path.join(outdir, "out"),
                                               env)
                secs[b].append(cpu)
                wall[b].append(dt)
                rss[b].append(kib)
                digests.add(digest)
        if len(digests) != 1:
            die(f"the builds of {name} print different output; a cairn-cc miscompile?")
        ratios = spread([c / k for c, k in zip(secs["cairn"], secs["clang"])])
        wall_ratios = spread([c / k for c, k in zip(wall["cairn"], wall["clang"])])
        row = {"task": name, "package": pkg,
               "clang_s": statistics.median(secs["clang"]),
               "cairn_s": statistics.median(secs["cairn"]),
               "ratio": ratios["median"], "ratio_min": ratios["min"], "ratio_max": ratios["max"],
               "clang_wall_s": statistics.median(wall["clang"]),
               "cairn_wall_s": statistics.median(wall["cairn"]),
               "wall_ratio": wall_ratios["median"], "wall_ratio_min": wall_ratios["min"],
               "wall_ratio_max": wall_ratios["max"],
               "clang_rss_mib": statistics.median(rss["clang"]) / 1024,
               "cairn_rss_mib": statistics.median(rss["cairn"]) / 1024,
               "goal": verdict(ratios["min"], ratios["max"], GOAL, better="lower")
               if a.rounds > 1 else "not shown"}
        if a.base:
            base_ratios = spread([c / k for c, k in zip(secs["base"], secs["clang"])])
            speedup = spread([o / c for o, c in zip(secs["base"], secs["cairn"])])
            row.update({"base_s": statistics.median(secs["base"]),
                        "base_ratio": base_ratios["median"],
                        "base_ratio_min": base_ratios["min"],
                        "base_ratio_max": base_ratios["max"],
                        "speedup": speedup["median"], "speedup_min": speedup["min"],
                        "speedup_max": speedup["max"]})
        result["tasks"].append(row)
        print(f"{name:20s} CPU: clang {row['clang_s']:.3f}s cairn {row['cairn_s']:.3f}s "
              f"{row['ratio']:.2f}x ({row['ratio_min']:.2f}-{row['ratio_max']:.2f}) "
              f"goal <= {GOAL}x: {row['goal']}" +
              (f"; base {row['base_ratio']:.2f}x, base/cairn {row['speedup']:.2f}"
               f" ({row['speedup_min']:.2f}-{row['speedup_max']:.2f})" if a.base else ""),
              flush=True)
    left = set(f for f in os.listdir("/dev/shm") if f.startswith("cairn-heap-")) - heaps_before
    if left:
        die(f"heap files left in /dev/shm: {', '.join(sorted(left))}")
    for f in list(gz.values()) + list(bz.values()) + [os.path.join(outdir, "out")]:
        if os.path.exists(f):
            os.unlink(f)
    result["loadavg_end"] = os.getloadavg()[0]
    if a.json:
        write_json(a.json, result)


if __name__ == "__main__":
    main()
