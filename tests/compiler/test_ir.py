"""IR tests: each tests/compiler/ir/*.c carries lines
    // RUN: <cairn-cc flags> | <FileCheck prefix>
and the checks for that prefix. These need cairn-cc only, not the runtime."""
import subprocess
from pathlib import Path

import pytest

from conftest import FILECHECK, HERE

CASES = []
for src in sorted((HERE / "ir").glob("*.c")):
    for line in src.read_text().splitlines():
        if line.startswith("// RUN:"):
            flags, prefix = line[len("// RUN:"):].split("|")
            CASES.append(pytest.param(src, flags.split(), prefix.strip(),
                                      id=f"{src.stem}-{prefix.strip()}"))


@pytest.mark.parametrize("src,flags,prefix", CASES)
def test_ir(cairn_cc, src, flags, prefix):
    ir = subprocess.run([str(cairn_cc), *flags, "-S", "-emit-llvm", "-o", "-", str(src)],
                        capture_output=True, text=True)
    assert ir.returncode == 0, ir.stderr
    fc = subprocess.run([str(FILECHECK), f"--check-prefix={prefix}", str(src)],
                        input=ir.stdout, capture_output=True, text=True)
    assert fc.returncode == 0, fc.stderr + "\n--- IR ---\n" + ir.stdout
