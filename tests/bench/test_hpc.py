"""NVL-C's HPC kernels (bench/hpc/): the DRAM build and the cairn-cc build
(per-row checkpoint transactions, with and without cairn_tx_clobber)
compute the same result; clobber leaves only the row counter's undo record
per row; bench/hpc/run.py runs end to end with JSON and a PNG. A missing
build is a failure. Speed is the benchmark's output, not a test."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("CAIRN_BUILD", ROOT / "build")).resolve()
HPC = BUILD / "bench" / "hpc"
SIZES = {"triad": (20000, 2), "matmul": (40, 1), "jacobi": (64, 3)}


def _run(build, kernel, pool, clobber=False):
    exe = HPC / f"hpc-{build}"
    assert exe.exists(), f"{exe} is not built"
    n, reps = SIZES[kernel]
    r = subprocess.run([str(exe), kernel, str(pool), str(n), str(reps)] +
                       (["--clobber"] if clobber else []), capture_output=True, text=True,
                       env={**os.environ, "CAIRN_PMEM_FORCE": "1"})
    assert r.returncode == 0, r.stderr
    w = r.stdout.split()
    return dict(zip(w[1::2], w[2::2]))


@pytest.mark.parametrize("kernel", list(SIZES))
def test_clobber_leaves_only_the_counter_logged(tmp_path, kernel):
    dram = _run("dram", kernel, tmp_path / "unused")
    pool = tmp_path / "hpc.pool"
    backup = _run("cairn", kernel, pool)
    pool.unlink()
    clobber = _run("cairn", kernel, pool, clobber=True)
    rows = int(dram["rows"])
    assert rows > 1
    for r in (backup, clobber):
        assert r["checksum"] == dram["checksum"] and int(r["rows"]) == rows
    assert int(dram["undo_bytes"]) == 0
    # without clobber every row's stores are logged: more than a row's bytes
    # per transaction; with it, one 8-byte record (the counter) per row
    assert int(backup["undo_bytes"]) > rows * 8 * 8
    assert int(clobber["undo_records"]) == rows
    assert int(clobber["undo_bytes"]) == rows * 8


def test_run_py_end_to_end(tmp_path):
    out, png = tmp_path / "hpc.json", tmp_path / "hpc.png"
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "hpc" / "run.py"), "--build",
                        str(BUILD), "--rounds", "2", "--scale", "0.01", "--dir", str(tmp_path),
                        "--json", str(out), "--plot", str(png)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    assert [k["kernel"] for k in doc["kernels"]] == ["triad", "matmul", "jacobi"]
    for k in doc["kernels"]:
        assert k["undo_bytes_per_row_clobber"] == 8
        assert k["backup_undo_bytes"] > k["clobber_undo_bytes"]
        assert k["dram_undo_bytes"] == 0
        assert k["clobber_faster"] in ("met", "not shown", "NOT met")
    assert png.stat().st_size > 1000
    assert not list(tmp_path.glob("*.pool"))
