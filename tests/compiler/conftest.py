"""Shared fixtures for cairn-cc tests.

The build directory is $CAIRN_BUILD, default ./build. IR tests need only
cairn-cc; end-to-end tests also need the runtime library and skip, with the
reason, when it is not built yet (a skip fails the run: tests/conftest.py).

In a sanitized build (scripts/test.sh's ASan and TSan steps),
CAIRN_TEST_SANITIZE names the sanitizers, e.g. address,undefined: build()
then passes -fsanitize=... to the compiler (cairn-cc forwards it to clang),
so the test programs are checked along with the sanitized runtime they
link."""
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("CAIRN_BUILD", ROOT / "build")).resolve()
CAIRN_CC = BUILD / "compiler" / "cairn-cc"
CLANG = Path("/usr/lib/llvm-19/bin/clang")
FILECHECK = Path("/usr/lib/llvm-19/bin/FileCheck")
HERE = Path(__file__).resolve().parent


def runtime_built() -> bool:
    return any((BUILD / "runtime" / n).exists() for n in ("libcairn.so", "libcairn.a"))


@pytest.fixture(scope="session")
def cairn_cc():
    if not CAIRN_CC.exists():
        pytest.skip(f"cairn-cc is not built in {BUILD} (ninja -C {BUILD} cairn-cc)")
    return CAIRN_CC


@pytest.fixture(scope="session")
def runtime(cairn_cc):
    if not runtime_built():
        pytest.skip(f"the runtime library is not built yet ({BUILD}/runtime/libcairn.*)")
    return BUILD / "runtime"


@pytest.fixture
def pool_path(tmp_path):
    """A pool file on /dev/shm when it exists (emulated PM), else tmp."""
    base = Path("/dev/shm") if Path("/dev/shm").is_dir() else tmp_path
    p = base / f"cairn-cc-test-{os.getpid()}-{tmp_path.name}.pool"
    yield p
    if p.exists():
        p.unlink()


def sanitize_flags():
    """-fsanitize flags for the programs tests build in a sanitized build
    (a program that links the sanitized libcairn needs them)."""
    san = os.environ.get("CAIRN_TEST_SANITIZE")
    if not san:
        return []
    return [f"-fsanitize={san}", "-fno-omit-frame-pointer", "-fno-sanitize-recover=all"]


def asan_options(**opts):
    """ASAN_OPTIONS for one program of an ASan run (CAIRN_TEST_SANITIZE
    names address), appended to the run's own (the last setting of an option
    wins); nothing in other runs. For a run() env."""
    if "address" not in os.environ.get("CAIRN_TEST_SANITIZE", ""):
        return {}
    extra = ":".join(f"{k}={v}" for k, v in opts.items())
    base = os.environ.get("ASAN_OPTIONS")
    return {"ASAN_OPTIONS": f"{base}:{extra}" if base else extra}


def build(compiler, src, out, *flags):
    flags = (*sanitize_flags(), *flags)
    r = subprocess.run([str(compiler), *flags, str(src), "-o", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, f"{compiler} {' '.join(flags)} {src} failed:\n{r.stderr}"
    return out


def run(cmd, env=None, **kw):
    e = dict(os.environ)
    e.setdefault("CAIRN_PMEM_FORCE", "1")
    if env:
        e.update(env)
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True,
                          env=e, **kw)
