"""Options of `cairn trace`, `cairn demo` and `cairn bench` refused up front
with one line naming the problem, and Ctrl-C ending any command quietly."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("CAIRN_BUILD", ROOT / "build")).resolve()
KVSTORE = BUILD / "examples" / "kvstore"
sys.path.insert(0, str(ROOT / "python"))
from cairn.cli import main  # noqa: E402


def cairn(*args, timeout=120):
    env = dict(os.environ, CAIRN_BUILD=str(BUILD), CAIRN_PMEM_FORCE="1",
               PYTHONPATH=str(ROOT / "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "cairn.cli", *args], capture_output=True,
                          text=True, env=env, timeout=timeout)


def refused(capsys, *argv):
    """main(argv) must stop before doing anything: exit 2 and the one-line reason."""
    with pytest.raises(SystemExit) as e:
        main(list(argv))
    assert e.value.code == 2
    return capsys.readouterr().err.strip().splitlines()[-1]


# ---- 5. trace dump ---------------------------------------------------------

@pytest.fixture(scope="module")
def trace_file(tmp_path_factory):
    if not KVSTORE.exists():
        pytest.skip("examples/kvstore is not built")
    d = tmp_path_factory.mktemp("trace")
    pool = Path("/dev/shm" if Path("/dev/shm").is_dir() else d) / f"cairn-cli-test-{os.getpid()}.pool"
    tf = d / "kv.trace"
    try:
        subprocess.run([str(KVSTORE), "run", str(pool), "20"], check=True, capture_output=True,
                       env=dict(os.environ, CAIRN_PMEM_FORCE="1", CAIRN_TRACE=str(tf)))
    finally:
        pool.unlink(missing_ok=True)
    return tf


def test_trace_thread_as_dump_shows_it(trace_file):
    by_name = cairn("trace", "dump", "--thread", "t1", "--limit", "5", str(trace_file))
    by_number = cairn("trace", "dump", "--thread", "1", "--limit", "5", str(trace_file))
    assert by_name.returncode == 0, by_name.stderr
    assert by_name.stdout == by_number.stdout and len(by_name.stdout.splitlines()) == 5
    r = cairn("trace", "dump", "--thread", "t9", str(trace_file))
    assert r.returncode == 2 and "has no thread t9 (threads: t1)" in r.stderr, r.stderr


def test_trace_refuses_bad_thread_and_limit(capsys):
    assert "argument --thread: 'tx' is not a thread: give t1, t2, ..." in \
        refused(capsys, "trace", "dump", "x.trace", "--thread", "tx")
    assert "argument --limit: -5 is negative; give 0 or more" in \
        refused(capsys, "trace", "dump", "x.trace", "--limit", "-5")


# ---- 6. Ctrl-C ---------------------------------------------------------------

def test_interrupt_is_one_line_and_status_130(tmp_path):
    """`cairn trace stats` blocked reading a FIFO gets SIGINT: no traceback."""
    fifo = tmp_path / "t.trace"
    os.mkfifo(fifo)
    env = dict(os.environ, CAIRN_BUILD=str(BUILD),
               PYTHONPATH=str(ROOT / "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    # SIGINT back to its default in the child: a suite started in the background
    # (`cmd &` in a script) inherits SIGINT ignored, and Python then installs no
    # handler, so the signal would be dropped and the test would hang
    proc = subprocess.Popen([sys.executable, "-m", "cairn.cli", "trace", "stats", str(fifo)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    writer = None
    deadline = time.monotonic() + 30
    while writer is None and time.monotonic() < deadline:    # until it has the FIFO open
        try:
            writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            time.sleep(0.01)
    try:
        assert writer is not None, "cairn trace never opened the FIFO"
        time.sleep(0.2)                                       # now blocked in read
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if writer is not None:
            os.close(writer)
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert err == "cairn: interrupted\n"


def test_interrupt_in_any_command_is_caught_centrally(monkeypatch, capsys):
    from cairn.commands import trace as trace_cmd

    def interrupted(path):
        raise KeyboardInterrupt
    monkeypatch.setattr(trace_cmd.trace, "read", interrupted)
    try:
        rc = main(["trace", "dump", "x.trace"])
    except KeyboardInterrupt:       # would stop pytest itself
        pytest.fail("KeyboardInterrupt escaped cairn.cli.main")
    assert rc == 130
    assert capsys.readouterr().err == "cairn: interrupted\n"


# ---- 7. demo ---------------------------------------------------------------

def test_demo_checks_its_options_first(capsys, tmp_path):
    assert main(["demo", "--pool", "/nonexist/dir/x.pool"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("cairn demo: --pool /nonexist/dir/x.pool: directory /nonexist/dir does not "
                   "exist; give a path in an existing directory (e.g. /dev/shm/cairn-demo.pool)")
    assert main(["demo", "--pool", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err
    for kills in ("-1", "0"):
        assert f"argument --kills: {kills} must be at least 1" in \
            refused(capsys, "demo", "--kills", kills)
    assert "argument --program: unknown program 'nosuch' (choose: kvstore_cc, kvstore)" in \
        refused(capsys, "demo", "--program", "nosuch")


# ---- 8. bench ----------------------------------------------------------------

def test_bench_runtime_checks_its_options_first(capsys):
    assert "argument --parts: unknown part 'bogus' (choose from micro, counts, open)" in \
        refused(capsys, "bench", "runtime", "--parts", "bogus")
    assert "argument --parts: unknown part 'opn'" in \
        refused(capsys, "bench", "runtime", "--parts", "micro,opn")
    assert "argument --threads: 0 threads: each count must be at least 1" in \
        refused(capsys, "bench", "runtime", "--threads", "1,0")
    assert "argument --threads: 'x' is not a whole number" in \
        refused(capsys, "bench", "runtime", "--threads", "x")
    for bad in ("-1", "0", "nan"):
        assert f"argument --seconds: {bad} must be a number of seconds above 0" in \
            refused(capsys, "bench", "runtime", "--seconds", bad)
    assert "argument --rounds: 0 must be at least 1" in \
        refused(capsys, "bench", "runtime", "--rounds", "0")
    assert main(["bench", "runtime", "--dir", "/nonexist"]) == 2
    assert capsys.readouterr().err.strip() == (
        "cairn bench runtime: --dir /nonexist: no such directory; give a directory you can "
        "write for the pools (default /dev/shm)")


def test_bench_compiler_checks_its_dir_first(capsys):
    assert main(["bench", "compiler", "--dir", "/nonexist"]) == 2
    assert "--dir /nonexist: no such directory" in capsys.readouterr().err


def test_bench_compiler_has_its_own_description(capsys):
    with pytest.raises(SystemExit):
        main(["bench", "compiler", "--help"])
    out = capsys.readouterr().out
    assert "cairn cc config" not in out and "the compiler's helpers" not in out
    assert "The compiler benchmark (`cairn bench compiler`, also `cairn cc bench`)" in out
