"""What the Debian suites found, as small programs (tests/debian/found):
each is built with cairn-cc --persistent-heap and with plain clang, and
must print exactly what the clang build prints. They need no download."""
import os
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
BUILD = Path(os.environ.get("CAIRN_BUILD", HERE.parents[1] / "build")).resolve()
CAIRN_CC = BUILD / "compiler" / "cairn-cc"
CLANG = "clang-19"


def build(cc, src, out, *flags):
    cmd = [*cc, *flags, "-g", str(src), "-o", str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stderr}"
    return out


def run(prog):
    return subprocess.run([str(prog)], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "CAIRN_PMEM_FORCE": "1"})


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
@pytest.mark.parametrize("name", ["heap_argv", "heap_union_double", "heap_jv_word"])
def test_found_program_prints_what_clang_prints(tmp_path, name, opt):
    assert CAIRN_CC.exists(), f"cairn-cc is not built in {BUILD}"
    src = HERE / "found" / f"{name}.c"
    want = run(build([CLANG], src, tmp_path / "plain", opt))
    got = run(build([str(CAIRN_CC), "--persistent-heap"], src, tmp_path / "heap", opt))
    assert want.returncode == 0 and want.stdout, want.stderr
    assert got.returncode == 0, got.stdout + got.stderr
    assert got.stdout == want.stdout
