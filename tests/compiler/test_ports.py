"""cairn.h's porting conveniences under cairn-cc (docs/compiler.md, "Porting
conveniences"): CAIRN_TX_FUNCTION makes a function's body one transaction,
CAIRN_HEAP_POOL sends a file's malloc family to a pool, CAIRN_OPEN_ROOT opens
or creates a pool and its root in one call. The program is
programs/port_conveniences.c."""
import re
import subprocess

import pytest

from conftest import HERE, build, run

OPTS = ["-O0", "-O2"]
SRC = HERE / "programs" / "port_conveniences.c"


@pytest.fixture(scope="module")
def prog(tmp_path_factory, cairn_cc, runtime):
    out = tmp_path_factory.mktemp("ports")
    cache = {}

    def make(opt):
        if opt not in cache:
            cache[opt] = build(cairn_cc, SRC, out / f"ports{opt}", opt, "-g", "-Wall",
                               "-Wextra", "-Werror")
        return cache[opt]
    return make


def counts(text):
    m = re.search(r"count (\d+) sum (\d+) walked (\d+)/(\d+) half (\d+)/(\d+) early (-?\d+)",
                  text)
    assert m, text
    return tuple(int(x) for x in m.groups())


@pytest.mark.parametrize("opt", OPTS)
def test_sigkill_inside_a_transaction_function_rolls_it_back(prog, pool_path, opt):
    exe = prog(opt)
    r = run([exe, "fill", pool_path, "20"])
    assert r.returncode == 0, r.stdout + r.stderr
    before = counts(r.stdout)
    for _ in range(2):
        r = run([exe, "kill", pool_path])
        assert r.returncode == -9, r.stdout + r.stderr
        r = run([exe, "verify", pool_path])
        assert r.returncode == 0, r.stdout + r.stderr
        # the stores before the SIGKILL (half_a, count += 1000) are undone
        assert counts(r.stdout) == before, r.stdout


@pytest.mark.parametrize("opt", OPTS)
def test_every_push_is_durable_and_in_the_pool(prog, pool_path, opt):
    exe = prog(opt)
    for n in (5, 7):
        r = run([exe, "fill", pool_path, str(n)])
        assert r.returncode == 0, r.stdout + r.stderr
    r = run([exe, "verify", pool_path])
    assert r.returncode == 0, r.stdout + r.stderr
    assert counts(r.stdout)[:4] == (12, 43, 12, 43)


@pytest.mark.parametrize("opt", OPTS)
def test_early_return_commits_and_abort_aborts(prog, pool_path, opt):
    exe = prog(opt)
    r = run([exe, "early", pool_path])
    assert r.returncode == 0 and "early 1 0 depth 0" in r.stdout, r.stdout + r.stderr
    r = run([exe, "verify", pool_path])
    # early(3) returned before its second store; early(4) ran whole; aborted() left nothing
    assert counts(r.stdout)[6] == 3 + 4 + 100, r.stdout


@pytest.mark.parametrize("opt", OPTS)
def test_transaction_that_cannot_begin_returns_the_failure_value(prog, opt):
    r = run([prog(opt), "nopool"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "push -1 errno set first (nil) msg cairn_tx_begin: NULL pool" in r.stdout, r.stdout


def test_struct_returning_function_that_cannot_begin_stops_with_one_line(prog):
    r = run([prog("-O2"), "nopool-struct"])
    assert r.returncode != 0 and "pair" not in r.stdout
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "cairn: pair_of: its transaction (CAIRN_TX_FUNCTION) cannot begin"), r.stderr


@pytest.mark.parametrize("opt", OPTS)
def test_heap_pool_calloc_realloc_and_libc_memory(prog, pool_path, opt):
    r = run([prog(opt), "heap", pool_path])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "calloc zero 1 in pool 1 kept 42 7 big 1 libc 1" in r.stdout, r.stdout
    assert "outside any transaction" not in r.stderr, r.stderr


def test_malloc_before_the_pool_is_open_returns_null_with_one_line(prog):
    r = run([prog("-O2"), "malloc-early"])
    assert r.returncode == 0 and "malloc NULL errno 22" in r.stdout, r.stdout
    assert r.stderr.count("\n") == 1 and "CAIRN_HEAP_POOL" in r.stderr, r.stderr


def test_open_root_creates_then_opens_and_never_replaces_a_bad_file(prog, pool_path, tmp_path):
    exe = prog("-O2")
    assert not pool_path.exists()
    r = run([exe, "fill", pool_path, "3"])
    assert r.returncode == 0 and pool_path.exists(), r.stderr
    r = run([exe, "verify", pool_path])
    assert r.returncode == 0 and counts(r.stdout)[0] == 3, r.stdout + r.stderr
    bad = tmp_path / "bad.pool"
    bad.write_bytes(b"not a pool" * 1000)
    r = run([exe, "verify", bad])
    assert r.returncode == 2 and r.stderr.startswith("open: "), r.stderr
    assert bad.read_bytes() == b"not a pool" * 1000


def test_open_root_refuses_another_root_type_and_closes_the_pool(cairn_cc, runtime, pool_path,
                                                                 tmp_path):
    src = tmp_path / "other.c"
    src.write_text("#include <cairn.h>\n#include <stdio.h>\n"
                   "struct other { double x; };\n"
                   "int main(int c, char **v) { (void)c; cairn_pool *p;\n"
                   "  struct other *o = CAIRN_OPEN_ROOT(p, v[1], \"ports\", 16 << 20, struct other);\n"
                   "  printf(\"%d %d\\n\", o == NULL, p == NULL);\n"
                   "  return cairn_pool_open(v[1], \"ports\") ? 0 : 1; }\n")
    exe = build(cairn_cc, src, tmp_path / "other", "-O2")
    # the pool made by port_conveniences has a struct root
    prep = tmp_path / "ports"
    build(cairn_cc, SRC, prep, "-O2")
    assert run([prep, "fill", pool_path, "1"]).returncode == 0
    r = run([exe, pool_path])
    # NULL root and NULL pool; the handle was closed, so the pool opens again
    assert r.returncode == 0 and r.stdout.strip() == "1 1", r.stdout + r.stderr


def test_pass_lowers_both_before_optimization(cairn_cc, tmp_path):
    out = tmp_path / "p.ll"
    r = subprocess.run([str(cairn_cc), "-O2", "-S", "-emit-llvm", str(SRC), "-o", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    ir = out.read_text()
    assert "call ptr @malloc" not in ir and "call void @free" not in ir
    assert "@cairn_cc__pool_malloc" in ir and "@cairn_cc__pool_realloc" in ir
    # push: one begin, an end before its return
    body = re.search(r"define internal i32 @push\(.*?\n}\n", ir, re.S) or \
        re.search(r"define [^\n]*@main\(.*?\n}\n", ir, re.S)
    assert body and "cairn_cc__tx_function_begin" in body.group(0)
    assert "cairn_cc__tx_function_end" in body.group(0)


@pytest.mark.parametrize("macro", ["CAIRN_HEAP_POOL(pool);", "CAIRN_TX_FUNCTION(pool) int f(void);"])
def test_without_the_pass_the_conveniences_stop_the_build(cairn_cc, tmp_path, macro):
    src = tmp_path / "np.c"
    src.write_text(f"#include <cairn.h>\nstatic cairn_pool *pool;\n{macro}\n"
                   "int main(void) { return pool != 0; }\n")
    r = subprocess.run([str(cairn_cc), "-fno-cairn", "-c", str(src), "-o",
                        str(tmp_path / "np.o")], capture_output=True, text=True)
    assert r.returncode != 0 and "needs cairn-cc's pass (C, without -fno-cairn)" in r.stderr, \
        r.stderr
