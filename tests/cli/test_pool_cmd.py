"""`cairn pool` (python/cairn/commands/pool.py over runtime/tools/cairn-pool.c)
as a user drives it: JSON that stays JSON whatever the file holds, sizes
refused with the reason, real sizes reported, one help per action, and a
grow that says it recovered a crashed pool first."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("CAIRN_BUILD", ROOT / "build")).resolve()
TOOL = BUILD / "runtime" / "cairn-pool"
KVSTORE = BUILD / "examples" / "kvstore"

pytestmark = pytest.mark.skipif(not TOOL.exists(), reason=f"cairn-pool is not built in {BUILD}")


def cairn(*args, timeout=120):
    env = dict(os.environ, CAIRN_BUILD=str(BUILD), CAIRN_PMEM_FORCE="1",
               PYTHONPATH=str(ROOT / "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "cairn.cli", *args], capture_output=True,
                          text=True, env=env, timeout=timeout)


@pytest.fixture
def shm():
    """A fresh directory for pools, on /dev/shm when it exists (emulated PM)."""
    d = Path(tempfile.mkdtemp(prefix="cairn-cli-test-",
                              dir="/dev/shm" if Path("/dev/shm").is_dir() else None))
    yield d
    shutil.rmtree(d, ignore_errors=True)


# ---- 1. JSON ---------------------------------------------------------------

def test_json_escapes_a_hostile_layout_and_path(shm):
    path = shm / 'q"uo\\te'
    layout = b'a"b\\c\nd\te\x01f\x7fg\xffh\xc3\xa9'     # quote, backslash, controls, a stray byte
    r = subprocess.run([sys.executable, "-m", "cairn.cli", "pool", "create", str(path), layout, "8M"],
                       capture_output=True, env=dict(os.environ, CAIRN_BUILD=str(BUILD),
                                                     CAIRN_PMEM_FORCE="1",
                                                     PYTHONPATH=str(ROOT / "python")))
    assert r.returncode == 0, r.stderr
    want = 'a"b\\c\nd\te\x01f\x7fg\xffh\xe9'               # \xff shown as U+00FF; é kept
    for args in (("--json", "info"), ("--json", "check"), ("info", "--json"), ("check", "--json")):
        r = cairn("pool", *args, str(path))
        assert r.returncode == 0, r.stderr
        data = json.loads(r.stdout)
        assert data["file"] == str(path)
        if "layout" in data:
            assert data["layout"] == want
    text = cairn("pool", "info", str(path))
    assert text.returncode == 0
    layout_line = next(line for line in text.stdout.splitlines() if line.startswith("layout"))
    assert layout_line.split(None, 1)[1] == 'a"b\\c\\x0ad\\x09e\\x01f\\x7fg\\xffhé'


@pytest.mark.parametrize("action", ["info", "check", "gc", "grow"])
def test_json_errors_are_json(action, shm):
    extra = ["64M"] if action == "grow" else []
    for argv in (["pool", "--json", action, "/nonexistent/x.pool", *extra],
                 ["pool", action, "--json", str(shm / "none.pool"), *extra]):
        r = cairn(*argv)
        assert r.returncode == 2
        data = json.loads(r.stdout)
        assert "No such file" in data["error"] and data["file"].endswith(".pool")
    # a bad size under --json is a JSON error too
    r = cairn("pool", "--json", "create", str(shm / "p.pool"), "l", "abc")
    assert r.returncode == 2 and "is not a size" in json.loads(r.stdout)["error"]


def test_json_for_create_grow_gc(shm):
    p = shm / "p.pool"
    r = cairn("pool", "--json", "create", str(p), "lay", "16000001")
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads(r.stdout) == {"file": str(p), "layout": "lay", "size": 15998976,
                                    "requested": 16000001}
    r = cairn("pool", "grow", "--json", str(p), "32M")
    d = json.loads(r.stdout)
    assert (d["previous_size"], d["size"], d["recovered"]) == (15998976, 32 << 20, False)
    r = cairn("pool", "gc", "--json", str(p))
    d = json.loads(r.stdout)
    assert r.returncode == 0 and d["objects_kept"] == 0 and d["bytes_freed"] == 0


# ---- 2. sizes --------------------------------------------------------------

@pytest.mark.parametrize("size,msg", [
    ("18446744073709551616", "size 18446744073709551616 is too large: pools are 8 MiB .. 1 TiB"),
    ("17179869185G", "size 17179869185G is too large: pools are 8 MiB .. 1 TiB"),
    ("2T", "size 2T is too large"),
    ("4M", "size 4M is too small: pools are 8 MiB .. 1 TiB"),
    ("0", "size 0 is too small"),
    ("nan", "'nan' is not a size: give bytes or a whole number with K, M, G or T"),
    ("abc", "'abc' is not a size"),
    ("64Q", "'64Q' is not a size"),
    ("-16M", "size -16M is negative"),
    ("16.5M", "size 16.5M has a fraction: a size is whole bytes or a whole number of K, M, G "
              "or T; write 16896K"),
    ("1e7", "size 1e7 has an exponent: a size is whole bytes or a whole number of K, M, G or T; "
            "write 10000000"),
])
def test_bad_sizes_are_named(size, msg, shm):
    p = shm / "p.pool"
    for argv in (["pool", "create", str(p), "lay", size], ["pool", "grow", str(p), size]):
        r = cairn(*argv)
        assert r.returncode == 2 and r.stderr.startswith(f"cairn pool: {msg}"), (argv, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not p.exists()


def test_sizes_are_rounded_and_the_real_size_reported(shm):
    p = shm / "p.pool"
    r = cairn("pool", "create", str(p), "lay", "16000001")
    assert r.returncode == 0, r.stderr
    assert os.path.getsize(p) == 15998976
    assert "15998976 bytes (15.3 MiB; 16000001 rounded down to a multiple of 4 KiB)" in r.stdout
    r = cairn("pool", "grow", str(p), "16001000")
    assert r.returncode == 2
    assert ("cannot grow to 16001000 bytes, which rounds down to 15998976 (a multiple of 4 KiB): "
            "the pool is already 15998976 bytes; give a size of at least 16003072") in r.stderr
    r = cairn("pool", "grow", str(p), "16003073")
    assert r.returncode == 0, r.stderr
    assert "grown from 15998976 to 16003072 bytes" in r.stdout
    assert "16003073 rounded down to a multiple of 4 KiB" in r.stdout
    assert os.path.getsize(p) == 16003072
    for spelling in ("16MiB", "16mb", "16777216B", "16384k"):
        q = shm / f"{spelling}.pool"
        r = cairn("pool", "create", str(q), "lay", spelling)
        assert r.returncode == 0 and "16777216 bytes (16 MiB)" in r.stdout, (spelling, r.stderr)


def test_info_picks_units(shm):
    p = shm / "p.pool"
    assert cairn("pool", "create", str(p), "lay", "1G").returncode == 0
    r = cairn("pool", "info", str(p))
    assert "size         1073741824 bytes (1 GiB)," in r.stdout, r.stdout


# ---- 3. arguments and help -------------------------------------------------

def test_arguments_are_checked(shm):
    r = cairn("pool", "info")
    assert r.returncode == 2 and "the following arguments are required: FILE" in r.stderr
    p = shm / "p.pool"
    assert cairn("pool", "create", str(p), "lay", "8M").returncode == 0
    for action in ("info", "check", "gc"):
        r = cairn("pool", action, str(p), "extra")
        assert r.returncode == 2
        assert f"unexpected argument 'extra': {action} takes FILE" in r.stderr, r.stderr
    r = cairn("pool", "grow", str(p), "16M", "more")
    assert r.returncode == 2 and "unexpected argument 'more'" in r.stderr
    # check's fatal error looks like every other command's
    r = cairn("pool", "check", str(shm / "none.pool"))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("cairn pool: ") and "No such file" in r.stderr


@pytest.mark.parametrize("action,words", [
    ("info", ["usage: cairn pool info", "FILE", "examples:", "cairn pool info /dev/shm/"]),
    ("check", ["usage: cairn pool check", "without changing it",
               "examples:"]),
    ("create", ["usage: cairn pool create", "FILE LAYOUT SIZE", "fractions", "examples:"]),
    ("grow", ["usage: cairn pool grow", "FILE SIZE", "recovered first", "examples:"]),
    ("gc", ["usage: cairn pool gc", "root cannot reach", "examples:"]),
])
def test_each_action_has_its_own_help(action, words):
    r = cairn("pool", action, "--help")
    assert r.returncode == 0
    for w in words:
        assert w in r.stdout, (w, r.stdout)


# ---- 4. grow after a crash -------------------------------------------------

def _crashed_pool(path):
    """A kvstore pool left open by SIGKILL while committing."""
    progress = Path(str(path) + ".progress")
    progress.write_bytes(b"\0" * 8)
    env = dict(os.environ, CAIRN_PMEM_FORCE="1", KV_PROGRESS=str(progress))
    proc = subprocess.Popen([str(KVSTORE), "run", str(path), "0"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while progress.read_bytes()[:8] == b"\0" * 8 and time.monotonic() < deadline:
        time.sleep(0.001)
    time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    progress.unlink()


@pytest.mark.skipif(not KVSTORE.exists(), reason="examples/kvstore is not built")
def test_grow_reports_the_recovery_it_ran(shm):
    p = shm / "kv.pool"
    _crashed_pool(p)
    info = cairn("pool", "info", str(p)).stdout
    assert "not closed cleanly" in info
    m = re.search(r"transactions (\d+) unfinished \((\d+) undo records\)", info)
    r = cairn("pool", "grow", str(p), "128M")
    assert r.returncode == 0, r.stderr
    assert (f"was not closed cleanly (crashed): recovered first, {m.group(1)} transaction(s) "
            f"rolled back ({m.group(2)} undo records)") in r.stdout, r.stdout
    assert "grown from 67108864 to 134217728 bytes (128 MiB)" in r.stdout
    assert "closed cleanly" in cairn("pool", "info", str(p)).stdout
    r = cairn("pool", "grow", str(p), "256M")           # clean now: nothing to report
    assert r.returncode == 0 and "recovered" not in r.stdout
