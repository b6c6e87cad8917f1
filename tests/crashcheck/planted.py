"""A libcairn.a built with a planted bug (a build switch of runtime/), for
the tests that prove the checks catch it."""
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def planted_runtime(tmp_path, define):
    """runtime/*.c compiled with -D<define> into tmp_path/libcairn_planted.a"""
    objs = []
    for src in sorted((ROOT / "runtime").glob("*.c")):
        o = tmp_path / (src.stem + ".o")
        r = subprocess.run(["cc", "-O2", "-std=gnu11", f"-D{define}", f"-I{ROOT / 'include'}",
                            f"-I{ROOT / 'runtime'}", "-c", str(src), "-o", str(o)],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        objs.append(str(o))
    lib = tmp_path / "libcairn_planted.a"
    subprocess.run(["ar", "rcs", str(lib), *objs], check=True)
    return lib
