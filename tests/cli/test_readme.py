"""The README's C example compiles and opens-or-creates the right way: it
creates only when there is no pool yet (errno == ENOENT), so an open that
failed for another reason (in use, no permission, wrong layout) is reported
instead of being hidden by create's "exists"."""
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def c_blocks(md):
    return re.findall(r"```c\n(.*?)```", md.read_text(), re.S)


def test_readme_creates_only_when_the_pool_does_not_exist():
    code = c_blocks(ROOT / "README.md")[0]
    lines = [line.strip() for line in code.splitlines()]
    create = next(i for i, line in enumerate(lines) if "cairn_pool_create" in line)
    cond = " ".join(lines[create - 1:create + 1])
    assert re.search(r"if \(!pool && errno == ENOENT\)", cond), cond
    assert "cairn_errormsg()" in code


def test_readme_example_compiles(tmp_path):
    cc = shutil.which("cc") or shutil.which("clang-19") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler")
    src = tmp_path / "readme.c"
    src.write_text(c_blocks(ROOT / "README.md")[0])
    r = subprocess.run([cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only",
                        f"-I{ROOT / 'include'}", str(src)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
