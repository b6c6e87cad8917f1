"""Debian packages' own test suites, built with cairn-cc --persistent-heap.

tests/debian/run.sh does the work (fetch with apt-get source from the archive
the machine's apt configuration names, build, run the suite); this runs it
once per package. A
source that cannot be fetched is a failure, never a skip: these are the
tests that show real programs work under cairn-cc."""
import os
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
BUILD = Path(os.environ.get("CAIRN_BUILD", HERE.parents[1] / "build")).resolve()


@pytest.mark.parametrize("package", ["zlib", "jansson", "expat", "bzip2", "pcre2", "jq",
                                     "tinyxml2"])
def test_debian_package_suite_passes_under_persistent_heap(package):
    assert (BUILD / "compiler" / "cairn-cc").exists(), f"cairn-cc is not built in {BUILD}"
    r = subprocess.run([str(HERE / "run.sh"), package], capture_output=True, text=True,
                       timeout=900, env={**os.environ, "CAIRN_BUILD": str(BUILD)})
    print(r.stdout, r.stderr)
    assert r.returncode == 0, f"{package}:\n{r.stdout}{r.stderr}"
    assert f"{package} " in r.stdout and ": PASS (" in r.stdout
