"""Mutants that prove `cairn crashcheck` bites: runtime/mutants.h lists every
persistence site of the runtime (each flush, fence and non-temporal store,
dropped, moved or aimed at the next line); each mutant is a libcairn.a built
with -DCAIRN_MUTANT=N, and crashcheck over the mutant's workload must catch it
(exit 1). A mutant marked survivor in the table must instead pass (exit 0):
if it is caught, the table's reason is wrong. CAIRN_MUTANT_JOBS mutants
(default 2) are built and checked at once. With CAIRN_MUTANTS_JSON=FILE
the module writes the score per kind (scripts/results.py reads it)."""
import json
import os
import re
import signal
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import rtjobs

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
BUILD = Path(os.environ.get("CAIRN_BUILD", ROOT / "build")).resolve()
RUNTIME = ROOT / "runtime"
LINE = re.compile(r'M\((\d+), (\w+), (\w+), ([\w:]+), "([^"]*)", "([^"]*)"\)')


def mutants():
    text = (RUNTIME / "mutants.h").read_text()
    return [dict(n=int(m[0]), name=m[1], kind=m[2], workload=m[3], site=m[4], survivor=m[5])
            for m in LINE.findall(text)]


MUTANTS = mutants()
CFLAGS = ["cc", "-O2", "-g", "-std=gnu11", f"-I{ROOT / 'include'}", f"-I{RUNTIME}"]


def compile_obj(src, out, define=None):
    cmd = CFLAGS + ([f"-DCAIRN_MUTANT={define}"] if define else [])
    cmd += ["-c", str(src), "-o", str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return out


def build_mutant(m, base, out_dir):
    """libcairn.a with mutant m: the files naming its site recompiled with
    -DCAIRN_MUTANT=N, every other object the shipped one (a site in a header
    recompiles every file)."""
    d = out_dir / m["name"]
    d.mkdir(exist_ok=True)
    tag = f"CAIRN_MUTATED({m['name']})"
    in_header = any(tag in h.read_text() for h in RUNTIME.glob("*.h"))
    objs = []
    for src in sorted(RUNTIME.glob("*.c")):
        if in_header or tag in src.read_text():
            objs.append(str(compile_obj(src, d / (src.stem + ".o"), m["n"])))
        else:
            objs.append(str(base[src.stem]))
    assert len(objs) == len(base)
    lib = d / "libcairn.a"
    subprocess.run(["ar", "rcs", str(lib), *objs], check=True)
    return lib


# mutants built and checked at once (CAIRN_MUTANT_JOBS, default 2: one per
# core of CI's machine); each crashcheck run is one process (--jobs 1)
JOBS_AT_ONCE = int(os.environ.get("CAIRN_MUTANT_JOBS", "2"))


def selected(session):
    """the mutants whose test_mutant_caught this session runs (all of them,
    or those a -k or node id picked)"""
    names = {it.callspec.params["m"]["name"] for it in session.items
             if it.originalname == "test_mutant_caught" and hasattr(it, "callspec")}
    return [m for m in MUTANTS if m["name"] in names]


def build_and_check(m, base, out):
    """one mutant's library built and its workload checked under crashcheck"""
    lib = build_mutant(m, base, out)
    base_dir = Path("/dev/shm") if Path("/dev/shm").is_dir() else out
    pool = base_dir / f"cairn-mutant-{os.getpid()}-{m['name']}.pool"
    return run_workload(m["workload"], lib, out / m["name"], pool)


@pytest.fixture(scope="module")
def outcomes(request, tmp_path_factory):
    """every selected mutant's crashcheck run, as a future: JOBS_AT_ONCE
    mutants are built and checked at a time, in the table's order (the
    shipped objects first), so one mutant's compiles overlap another's
    check; each test waits for its own mutant's run"""
    if not (BUILD / "runtime" / "cairn-crashcheck").exists():
        yield {}
        return
    out = tmp_path_factory.mktemp("mutants")
    (out / "base").mkdir()
    srcs = sorted(RUNTIME.glob("*.c"))
    ex = ThreadPoolExecutor(JOBS_AT_ONCE)
    try:
        base = dict(zip([s.stem for s in srcs],
                        ex.map(lambda s: compile_obj(s, out / "base" / (s.stem + ".o")), srcs)))
        yield {m["name"]: ex.submit(build_and_check, m, base, out)
               for m in selected(request.session)}
    finally:
        ex.shutdown(wait=True, cancel_futures=True)


def link(lib, src, out, defines=()):
    r = subprocess.run(["cc", "-O1", "-g", *defines, f"-I{ROOT / 'include'}", str(src), "-o",
                        str(out), str(lib), "-lpthread", "-ldl"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return out


def until_first_failure(args, capture_output, text, env, cwd, timeout):
    """subprocess.run for `cairn crashcheck` that stops it at its first
    failed state: crashcheck exits 1 exactly when a state fails, so the
    states after the first failure cannot change the verdict. The run gets
    its own process group; at the first "FAILED:" line on stderr the group
    gets SIGINT (the wrapper removes its work directory, the checker and
    its check programs stop). Returns the CompletedProcess with
    returncode 1 when it was stopped so, else crashcheck's own status."""
    assert capture_output and text
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env, cwd=cwd, start_new_session=True)
    out = []
    timer = threading.Timer(timeout, lambda: os.killpg(p.pid, signal.SIGKILL))
    reader = threading.Thread(target=lambda: out.append(p.stdout.read()))
    timer.start()
    reader.start()
    err, failed = [], False
    for line in p.stderr:
        err.append(line)
        if "crashcheck: FAILED:" in line and not failed:
            failed = True
            try:
                os.killpg(p.pid, signal.SIGINT)
            except ProcessLookupError:
                pass
    p.wait()
    timer.cancel()
    reader.join()
    assert p.returncode != -signal.SIGKILL, f"crashcheck ran over {timeout} s: {args}"
    return subprocess.CompletedProcess(args, 1 if failed else p.returncode, "".join(out),
                                       "".join(err))


def crashcheck(argv, pool, pmem_force="1"):
    env = dict(os.environ, CAIRN_BUILD=str(BUILD), CAIRN_PMEM_FORCE=pmem_force,
               CAIRN_UNLOGGED="off")
    for p in (pool,):
        if p.exists():
            p.unlink()
    r = until_first_failure([sys.executable, "-m", "cairn", "crashcheck", "--quiet",
                             *map(str, argv)], capture_output=True, text=True, env=env,
                            cwd=ROOT / "python", timeout=600)
    if pool.exists():
        pool.unlink()
    return r


def run_workload(workload, lib, tmp_path, pool):
    """crashcheck of one workload against lib; its exit status and output"""
    kind, _, arg = workload.partition(":")
    if kind == "rt":
        prog = rtjobs.build(lib, tmp_path / "rt_jobs")
        # a mutant's first failing states come early (nothing durable, all,
        # prefixes): 64 states per crash point keep a run to seconds
        return rtjobs.crashcheck(prog, arg, pool, ["--max-states", "64"], run=until_first_failure)
    if kind in ("trace_cost", "trace_cost_msync"):
        prog = link(lib, ROOT / "bench" / "runtime" / "trace_cost.c", tmp_path / "trace_cost")
        return crashcheck(["--nested-every", "2", "--", prog, pool, "4"], pool,
                          "1" if kind == "trace_cost" else "0")
    if kind == "kvstore":
        prog = link(lib, ROOT / "examples" / "kvstore" / "kvstore.c", tmp_path / "kvstore")
        return crashcheck(["--nested-every", "4", "--check", f"{prog} verify {{pool}}", "--",
                           prog, "run", pool, "6"], pool)
    if kind == "corpus":
        prog = link(lib, HERE / f"{arg}.c", tmp_path / arg)
        return crashcheck(["--nested-every", "2", "--check", f"{prog} check {{pool}}", "--",
                           prog, "run", pool], pool)
    raise AssertionError(f"mutants.h names an unknown workload {workload!r}")


RESULTS = {}


def test_table_covers_every_site():
    """every mutant in the table is planted somewhere, and numbers are unique"""
    names = [m["name"] for m in MUTANTS]
    assert len(MUTANTS) >= 40 and len(set(names)) == len(names)
    assert len({m["n"] for m in MUTANTS}) == len(MUTANTS)
    text = "".join(p.read_text() for p in RUNTIME.glob("*.[ch]") if p.name != "mutants.h")
    for n in names:
        assert f"CAIRN_MUTATED({n})" in text, f"mutant {n} is in the table but planted nowhere"
    for used in set(re.findall(r"CAIRN_MUTATED\((\w+)\)", text)) - {"name"}:
        assert used in names, f"CAIRN_MUTATED({used}) is not in runtime/mutants.h"


@pytest.mark.parametrize("m", MUTANTS, ids=[m["name"] for m in MUTANTS])
def test_mutant_caught(m, outcomes):
    if not (BUILD / "runtime" / "cairn-crashcheck").exists():
        pytest.skip("cairn-crashcheck is not built (scripts/build.sh)")
    r = outcomes[m["name"]].result()
    RESULTS[m["name"]] = dict(kind=m["kind"], site=m["site"], workload=m["workload"],
                              caught=r.returncode == 1, survivor=bool(m["survivor"]))
    if m["survivor"]:
        assert r.returncode == 0, (f"{m['name']} is marked survivor ({m['survivor']}) but "
                                   f"crashcheck caught it:\n" + r.stdout + r.stderr[-3000:])
    else:
        assert r.returncode == 1, (f"{m['name']} ({m['site']}, {m['kind']}) survived "
                                   f"{m['workload']}:\n" + r.stdout + r.stderr[-3000:])
        assert "FAILED" in r.stderr


def test_score_matches_the_committed_one():
    """The mutation score this run measured equals the one committed in
    bench/crashcheck/results/mutants.json (what docs/RESULTS.md shows); with
    CAIRN_MUTANTS_JSON set, the run's score is written there first (write it
    to that file, then scripts/results.py --write)."""
    assert len(RESULTS) == len(MUTANTS), \
        "run the whole module: the score needs every mutant's result"
    kinds = {}
    for r in RESULTS.values():
        k = kinds.setdefault(r["kind"], dict(kind=r["kind"], total=0, caught=0, survivors=0))
        k["total"] += 1
        k["caught"] += r["caught"]
        k["survivors"] += r["survivor"]
    caught = sum(r["caught"] for r in RESULTS.values())
    kinds["all"] = dict(kind="all", total=len(RESULTS), caught=caught,
                        survivors=sum(r["survivor"] for r in RESULTS.values()))
    rows = [dict(name=n, **r) for n, r in sorted(RESULTS.items(), key=lambda x: x[0])]
    for r in rows:
        r["caught"] = "yes" if r["caught"] else "no"
    doc = dict(kinds=list(kinds.values()), mutants=rows, score=f"{caught}/{len(RESULTS)}")
    out = os.environ.get("CAIRN_MUTANTS_JSON")
    if out:
        Path(out).write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    committed = json.loads((ROOT / "bench" / "crashcheck" / "results" / "mutants.json").read_text())
    assert (committed["score"], committed["kinds"]) == (doc["score"], doc["kinds"]), \
        ("the committed mutation score is stale: rerun this module with "
         "CAIRN_MUTANTS_JSON=bench/crashcheck/results/mutants.json, then scripts/results.py --write")
