"""Power loss simulated at every fence of a plain-C program built by cairn-cc
(programs/crashstates_cc.c, engine tests/unit/crashsim.h): every crash state
a fence leaves open recovers to a committed state, checks clean and leaks
nothing; a store the pass cannot see (inline asm) is caught."""
import re

import pytest

from conftest import ROOT, build, run

PROGRAM = ROOT / "tests" / "compiler" / "programs" / "crashstates_cc.c"
INCLUDES = ("-I", str(ROOT / "runtime"), "-I", str(ROOT / "tests" / "unit"))


def summary(out):
    m = re.search(r"(\d+) steps, (\d+) fences, (\d+) crash states, .* (\d+) failed", out)
    assert m, out
    return tuple(int(x) for x in m.groups())


@pytest.fixture(scope="module")
def program(tmp_path_factory, cairn_cc, runtime):
    out = tmp_path_factory.mktemp("crashstates")
    cache = {}

    def make(opt):
        if opt not in cache:
            cache[opt] = build(cairn_cc, PROGRAM, out / f"crashstates_cc{opt}", opt, "-g",
                               "-Wall", "-Werror", "--cairn-static", *INCLUDES)
        return cache[opt]
    return make


# -O0 logs every store on its own (many fences): one step of each kind
@pytest.mark.parametrize("opt,steps", [("-O0", 5), ("-O2", 15)])
def test_every_crash_state_recovers_to_a_committed_state(program, pool_path, opt, steps):
    r = run([program(opt), "run", pool_path, str(steps)], timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    n, fences, states, failed = summary(r.stdout)
    assert n == steps and failed == 0
    assert fences >= 2 * steps and states > fences


def test_an_unlogged_store_is_caught(program, pool_path):
    r = run([program("-O2"), "mutant", pool_path, "5"], timeout=600)
    assert r.returncode == 1
    n, fences, states, failed = summary(r.stdout)
    assert failed > 0
    assert "neither step" in r.stderr
