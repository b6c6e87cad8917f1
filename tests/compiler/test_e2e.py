"""End-to-end tests: programs built by cairn-cc run against libcairn.

Pools live on /dev/shm with CAIRN_PMEM_FORCE=1 (emulated PM)."""
import json
import os
import random
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import CLANG, HERE, asan_options, build, run

PROGRAMS = HERE / "programs"
OPTS = ["-O0", "-O2"]


@pytest.fixture(scope="module")
def exe(tmp_path_factory, cairn_cc, runtime):
    """exe(name, opt, *flags) -> path of programs/<name>.c built by cairn-cc."""
    out = tmp_path_factory.mktemp("bin")
    cache = {}

    def make(name, opt, *flags):
        key = (name, opt, flags)
        if key not in cache:
            tag = "".join(f.strip("-") for f in flags)
            cache[key] = build(cairn_cc, PROGRAMS / f"{name}.c",
                               out / f"{name}{opt}{tag}", opt, "-g", "-Wall", "-Werror", *flags)
        return cache[key]
    return make


@pytest.mark.parametrize("opt", OPTS)
def test_list_persists_and_reopens(exe, pool_path, opt):
    prog = exe("list", opt)
    first = run([prog, pool_path, 0])
    assert first.returncode == 0, first.stderr
    again = run([prog, pool_path, 1])
    assert again.returncode == 0, again.stderr
    assert "count=10 walked=10 sum=45 head=n9" in again.stdout
    assert "raw head relative=1" in again.stdout   # stored in relative form
    assert "warning" not in first.stderr + again.stderr


@pytest.mark.parametrize("opt", OPTS)
def test_crash_mid_transaction_rolls_back(exe, pool_path, opt):
    prog = exe("list", opt)
    assert run([prog, pool_path, 0]).returncode == 0
    crashed = run([prog, pool_path, 2])              # abort() inside the 6th tx
    assert crashed.returncode != 0
    after = run([prog, pool_path, 1])
    assert after.returncode == 0, after.stderr
    # 10 + the 5 committed inserts 0..4; the torn 6th is undone entirely
    assert "count=15 walked=15 sum=55 head=n4" in after.stdout


@pytest.mark.parametrize("opt", ["-O0", "-O1", "-O2", "-O3"])
def test_fig4_pointer_semantics(exe, pool_path, opt):
    r = run([exe("fig4", opt), pool_path])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "FAIL" not in r.stdout
    assert re.search(r"^(\d+) rows$", r.stdout, re.M).group(1) == "48"


def _line(marker):
    for no, text in enumerate((PROGRAMS / "safety.c").read_text().splitlines(), 1):
        if marker in text:
            return no
    raise AssertionError(marker)


@pytest.mark.parametrize("opt", OPTS)
def test_pointer_to_volatile_stops_with_file_line(exe, pool_path, opt):
    r = run([exe("safety", opt), 1, pool_path])
    assert r.returncode != 0
    assert "pointer to volatile memory" in r.stderr
    assert f"safety.c:{_line('LINE_SET_PTR')}" in r.stderr


@pytest.mark.parametrize("mode,what,fix", [
    (1, "(the stack)", "copy the value into an object from cairn_alloc"),
    # under ASan, &puts is ASan's interceptor, linked into the program
    (6, "(puts in safety" if asan_options() else "(puts in libc.so",
     "store an index, a name or a copy in the pool"),
    (7, "(code or static data of safety", "store an index, a name or a copy in the pool"),
    (8, "(the heap or another mapping)", "allocate the target with cairn_alloc"),
])
def test_pointer_to_volatile_names_what_it_points_at(exe, pool_path, mode, what, fix):
    """The stop says whether the address is the stack, code or static data
    (a function, a string literal: they move between runs) or the heap, and
    gives the fix that fits."""
    r = run([exe("safety", "-O2"), mode, pool_path])
    assert r.returncode != 0
    assert "pointer to volatile memory" in r.stderr and what in r.stderr, r.stderr
    assert fix in r.stderr, r.stderr
    assert f"safety.c:{_line('LINE_SET_PTR')}" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


@pytest.mark.parametrize("mode,message", [
    (9, "where no pool is open ({pool} was mapped there and is closed): a pointer "
        "into a pool was kept after cairn_pool_close"),
    (10, "bytes into {pool}, which is only 16777216 bytes: an access past the pool's end"),
])
def test_fault_in_the_pm_region_is_explained(exe, pool_path, mode, message):
    """A segfault at an address in cairn's region says which pool was or is
    there: a pointer followed after its pool's close, or past its end.
    ASan's own SIGSEGV handler is off for this program, so cairn's handler
    is the one that explains the fault."""
    r = run([exe("safety", "-O2"), mode, pool_path], env=asan_options(handle_segv=0))
    assert r.returncode == -signal.SIGSEGV, r.stdout + r.stderr
    assert message.format(pool=pool_path) in r.stderr, r.stderr


def test_pointer_between_pools_stops(exe, pool_path):
    r = run([exe("safety", "-O2"), 2, pool_path])
    # the program stops before it can remove its second pool
    os.remove(f"{pool_path}.other") if os.path.exists(f"{pool_path}.other") else None
    assert r.returncode != 0
    assert "between pools" in r.stderr
    assert f"safety.c:{_line('LINE_SET_PTR')}" in r.stderr


def test_store_outside_tx_warns_once_per_site(exe, pool_path):
    r = run([exe("safety", "-O2"), 3, pool_path])
    assert r.returncode == 0, r.stderr
    site = f"safety.c:{_line('LINE_SET_VAL')}"
    assert r.stderr.count("outside any transaction") == 1
    assert site in r.stderr


def test_store_outside_tx_can_abort(exe, pool_path):
    r = run([exe("safety", "-O2"), 3, pool_path], env={"CAIRN_UNLOGGED": "abort"})
    assert r.returncode != 0
    assert "outside any transaction" in r.stderr


def test_store_outside_tx_off_and_unknown_mode(exe, pool_path):
    # off: the store returns at once, nothing reported
    r = run([exe("safety", "-O2"), 3, pool_path], env={"CAIRN_UNLOGGED": "off"})
    assert r.returncode == 0 and "outside any transaction" not in r.stderr, r.stderr
    os.remove(pool_path)
    # a value that is none of the three is named once, then warn applies
    r = run([exe("safety", "-O2"), 3, pool_path], env={"CAIRN_UNLOGGED": "loud"})
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("CAIRN_UNLOGGED=loud is not off, warn or abort") == 1, r.stderr
    assert r.stderr.count("outside any transaction") == 1, r.stderr


def _log_calls(path):
    return json.loads(path.read_text().splitlines()[-1])["log_calls"]


@pytest.mark.parametrize("gate", [True, False], ids=["gate", "no-gate"])
def test_log_gate(cairn_cc, runtime, tmp_path, pool_path, gate):
    """cairn-inline-log-gate: with reports off a store outside a transaction
    stops calling cairn__log_store once the runtime has set the thread's
    cairn__log_skip; a later transaction (this thread or a new one) still
    logs its stores, so its abort restores them. With reports on (warn)
    every store still calls, and the site is reported once."""
    n = 20000
    flags = ["-O2", "-g", "--cairn-count"] + ([] if gate else ["-fno-cairn-inline-log-gate"])
    prog = build(cairn_cc, PROGRAMS / "log_gate.c", tmp_path / "log_gate", *flags)
    counts = tmp_path / "counts.json"
    r = run([prog, pool_path, n], env={"CAIRN_UNLOGGED": "off", "CAIRN_CC_COUNTS": str(counts)})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "outside any transaction" not in r.stderr
    # three phases of n stores outside a transaction, one logged store each
    calls = _log_calls(counts)
    if gate:
        # per phase: until the thread's word is set (two calls), and the
        # logged store of its transaction
        assert calls <= 3 * 3, calls
    else:
        assert calls == 3 * (n + 1), calls
    os.remove(pool_path)
    r = run([prog, pool_path, n], env={"CAIRN_UNLOGGED": "warn", "CAIRN_CC_COUNTS": str(counts)})
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stderr.count("outside any transaction") == 1, r.stderr
    assert _log_calls(counts) == 3 * (n + 1)


def test_without_debug_info_names_the_function(cairn_cc, runtime, tmp_path, pool_path):
    prog = build(cairn_cc, PROGRAMS / "safety.c", tmp_path / "safety-nog", "-O2")
    r = run([prog, 1, pool_path])
    assert r.returncode != 0 and "function set_ptr" in r.stderr


def test_legal_pointer_stores_are_quiet(exe, pool_path):
    r = run([exe("safety", "-O2"), 4, pool_path])
    assert r.returncode == 0 and r.stderr == "", r.stderr


@pytest.mark.parametrize("opt", OPTS)
def test_same_output_as_clang(exe, tmp_path, opt):
    plain = build(CLANG, PROGRAMS / "volatile_mix.c", tmp_path / "plain", opt)
    want = run([plain])
    got = run([exe("volatile_mix", opt)])
    assert want.returncode == got.returncode == 0
    assert got.stdout == want.stdout and got.stdout


@pytest.mark.parametrize("opt", OPTS)
def test_legacy_libraries_survive_sigkill(exe, pool_path, opt):
    """sys/queue.h, sys/tree.h (RB, splay) and uthash nodes in one pool,
    SIGKILLed at random instants, reopened and cross-checked each time."""
    kill_and_verify(exe("legacy_stress", opt), pool_path, rounds=8, seed=1234)


def kill_and_verify(prog, pool_path, rounds, seed):
    """`prog run POOL ROUND` until it says "started" and a random moment
    after, SIGKILL, then `prog verify POOL` must pass: `rounds` times."""
    rng = random.Random(seed)
    for round_ in range(rounds):
        p = subprocess.Popen([str(prog), "run", str(pool_path), str(round_)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={"CAIRN_PMEM_FORCE": "1"})
        assert p.stdout.readline().strip() == "started", p.stderr.read()
        time.sleep(rng.uniform(0.02, 0.3))
        p.send_signal(signal.SIGKILL)
        p.wait()
        v = run([prog, "verify", pool_path])
        assert v.returncode == 0, f"round {round_}: {v.stdout}{v.stderr}"
        assert "verified" in v.stdout


@pytest.mark.parametrize("opt", OPTS)
def test_threads_survive_sigkill(exe, pool_path, opt):
    """Four threads of a plain C program, each with its own TAILQ list and
    all sharing a uthash table under a mutex, SIGKILLed at random instants
    while their transactions run concurrently; reopened and verified."""
    kill_and_verify(exe("mt_stress", opt), pool_path, rounds=6, seed=4321)


@pytest.mark.parametrize("flags", [("-O0",), ("-O2",), ("-O3",),
                                   ("-O2", "-fno-cairn-hoist-loop-logs")])
def test_hoisted_loop_logs_restore_everything(exe, pool_path, flags):
    prog = exe("loops", *flags)
    assert run([prog, "init", pool_path]).returncode == 0
    crash = run([prog, "crash", pool_path])
    assert crash.returncode != 0 and "wrong" not in crash.stdout
    v = run([prog, "verify", pool_path])
    assert v.returncode == 0, v.stdout + v.stderr
    assert "all 1000 elements restored" in v.stdout


@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("name", ["heap_mix", "volatile_mix", "heap_libc"])
def test_persistent_heap_same_output(exe, tmp_path, opt, name):
    plain = build(CLANG, PROGRAMS / f"{name}.c", tmp_path / "plain", opt)
    # heap_libc asks reallocarray for more than fits: libc says NULL, and so
    # does ASan's allocator when allowed to (else it stops the program)
    env = asan_options(allocator_may_return_null=1)
    want = run([plain], env=env)
    got = run([exe(name, opt, "--persistent-heap")], env=env)
    assert want.returncode == got.returncode == 0, got.stderr
    assert got.stdout == want.stdout and got.stdout
    if name == "heap_mix":
        assert "raw-relative=0" in want.stderr
        assert "raw-relative=1" in got.stderr   # heap pointers went relative


def test_persistent_heap_file(cairn_cc, runtime, tmp_path):
    """A named heap is kept at exit, closed cleanly: "%p" makes one per process."""
    prog = build(cairn_cc, PROGRAMS / "heap_mix.c", tmp_path / "hm",
                 "-O2", f"--persistent-heap={tmp_path}/heap-%p.pool")
    p = subprocess.Popen([str(prog)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env={**os.environ, "CAIRN_PMEM_FORCE": "1"})
    out, err = p.communicate()
    assert p.returncode == 0 and "raw-relative=1" in err
    heap = tmp_path / f"heap-{p.pid}.pool"
    assert heap.exists()                         # named: kept for inspection
    assert f"{tmp_path}/heap-%p.pool".encode() in prog.read_bytes()
    check = run([runtime / "cairn-pool", "check", heap])
    assert check.returncode == 0, check.stdout + check.stderr
    # the run-time variable names it too, and wins over the built-in name
    r = run([prog], env={"CAIRN_PERSISTENT_HEAP": str(tmp_path / "env.pool")})
    assert r.returncode == 0 and (tmp_path / "env.pool").exists()


@pytest.mark.parametrize("env,message", [
    ({"CAIRN_PERSISTENT_HEAP": "/nonexistent/dir/h.pool"},
     "persistent heap /nonexistent/dir/h.pool: /nonexistent/dir/h.pool: cannot create pool"),
    ({"CAIRN_PERSISTENT_HEAP_SIZE": "4G"}, "CAIRN_PERSISTENT_HEAP_SIZE=4G is not a size"),
    ({"CAIRN_PERSISTENT_HEAP_SIZE": "1000"}, "pool size 1000 out of range"),
    # %p expands to the process id (cairn__expand_pid_path, shared with CAIRN_TRACE)
    ({"CAIRN_PERSISTENT_HEAP": "/tmp/" + "%p" * 2100},
     "is longer than 4095 bytes once %p is expanded"),
])
def test_persistent_heap_bad_setting_stops_with_one_line(exe, env, message):
    """A heap that cannot be made stops the program at its first malloc with
    one line naming the file or the size and where each comes from."""
    r = run([exe("heap_mix", "-O2", "--persistent-heap")], env=env)
    assert r.returncode == -signal.SIGABRT, r.stdout + r.stderr
    assert message in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "CAIRN_PERSISTENT_HEAP" in r.stderr


HEAP_ENDS = {"exit": 0, "abort": -signal.SIGABRT, "_exit": 3, "exec": 0, "fork": 0,
             "fork_race": 0}


@pytest.mark.parametrize("mode", sorted(HEAP_ENDS))
def test_persistent_heap_default_leaves_no_file(exe, tmp_path, mode):
    """The default heap file is unlinked once mapped: nothing is left in
    /dev/shm however the process ends (abort, _exit, exec, a fork child
    that allocates). A fork child's heap is its own copy: the parent does
    not see its changes, and the output equals the clang build's."""
    plain = build(CLANG, PROGRAMS / "heap_life.c", tmp_path / "plain", "-O2")
    want = run([plain, mode])
    prog = exe("heap_life", "-O2", "--persistent-heap")
    p = subprocess.Popen([str(prog), mode], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env={**os.environ, "CAIRN_PMEM_FORCE": "1"})
    out, err = p.communicate()
    assert p.returncode == want.returncode == HEAP_ENDS[mode], err
    assert out == want.stdout and "sum 1515" in out
    assert "heap mapped=1 deleted=1" in err
    assert not Path(f"/dev/shm/cairn-heap-{p.pid}.pool").exists()
    if mode == "fork":
        assert "child exit 0" in out and "parent sum 1528" in out
    if mode == "fork_race":    # the child's heap is the heap at the fork
        assert "child sees 1\nparent sees 2, child exit 0" in out


ENOUGH = Path("/usr/share/doc/zlib1g-dev/examples/enough.c")


@pytest.mark.skipif(not ENOUGH.exists(), reason="zlib1g-dev's examples/enough.c is not installed")
@pytest.mark.parametrize("opt", OPTS)
def test_debian_program_enough_with_persistent_heap(cairn_cc, runtime, tmp_path, opt):
    """zlib's examples/enough.c (Debian zlib1g-dev): heavy malloc/realloc use
    and 64-bit counts that fall inside the PM region's address range (the
    case that proves untyped words are only converted when they point into
    an open pool)."""
    plain = build(CLANG, ENOUGH, tmp_path / "plain", opt)
    heap = build(cairn_cc, ENOUGH, tmp_path / "heap", opt, "--persistent-heap")
    want = run([plain, 286, 9, 15])
    got = run([heap, 286, 9, 15])
    assert want.returncode == got.returncode == 0, got.stderr
    assert got.stdout == want.stdout and "maximum" in got.stdout


ZRAN = Path("/usr/share/doc/zlib1g-dev/examples/zran.c")


@pytest.mark.skipif(not ZRAN.exists(), reason="zlib1g-dev's examples/zran.c is not installed")
def test_debian_program_zran_with_precompiled_zlib(cairn_cc, runtime, tmp_path):
    """zlib's examples/zran.c (random access into a .gz through an index of
    access points, each with a 32 KiB window buffer) under --persistent-heap,
    calling the precompiled libz: same bytes out as the clang build."""
    import gzip
    data = b"".join(b"line %d of some text %d\n" % (i, i * 7919 % 1000) for i in range(200000))
    gz = tmp_path / "data.gz"
    gz.write_bytes(gzip.compress(data, 6))
    flags = ("-O2", "-DTEST", "-Wno-format")
    plain = build(CLANG, ZRAN, tmp_path / "plain", *flags, "-lz")
    heap = build(cairn_cc, ZRAN, tmp_path / "heap", *flags, "--persistent-heap", "-lz")
    for offset in (0, 1_000_000, 3_000_000):
        want = subprocess.run([str(plain), str(gz), str(offset)], capture_output=True)
        got = subprocess.run([str(heap), str(gz), str(offset)], capture_output=True,
                             env={"CAIRN_PMEM_FORCE": "1"})
        assert want.returncode == got.returncode == 0, got.stderr
        assert got.stdout == want.stdout == data[offset:offset + 16384]
        assert b"access points" in got.stderr


@pytest.mark.parametrize("opt", OPTS)
def test_cairn_pm_qualifier(exe, pool_path, opt):
    prog = exe("pm_qualifier", opt)
    assert run([prog, "create", pool_path]).returncode == 0
    r = run([prog, "check", pool_path])
    assert r.returncode == 0, r.stderr
    assert r.stdout == "n=10 walked=10 sum=55\n"


def test_cairn_pm_refuses_mixing_at_compile_time(cairn_cc, tmp_path):
    src = tmp_path / "mix.c"
    src.write_text("struct n { long v; };\n"
                   "struct n cairn_pm *f(struct n *dram) { return dram; }\n")
    r = subprocess.run([str(cairn_cc), "-c", str(src), "-o", str(tmp_path / "mix.o")],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "address space" in r.stderr


def _jmp_sig(exe, pool_path, mode, opt="-O2"):
    prog = exe("jmp_sig", opt)
    r = run([prog, pool_path, mode])
    check = run([prog, pool_path, "check"])
    assert check.returncode == 0, check.stderr
    return r, check.stdout


@pytest.mark.parametrize("mode,lines,reopened_line", [
    # a longjmp out of a CAIRN_TX block skips its commit: the transaction
    # stays open in the thread; cairn_tx_abort() after setjmp rolls it back
    ("jmp-abort", ["after longjmp: x=1 y=0 h=0 open=1", "after abort: x=0 y=0 h=0 open=0",
                   "after commit: x=2 y=0 h=0 open=0"], "reopened: x=2"),
    # a handler runs on the interrupted thread: its store to PM is logged in
    # that thread's open transaction, rolled back or committed with it
    ("sig-tx", ["in tx after handler: x=1 y=0 h=42 open=1", "after abort: x=0 y=0 h=0 open=0",
                "after commit: x=3 y=0 h=42"], "reopened: x=3 y=0 h=42"),
])
def test_longjmp_and_signal_handler_in_tx(exe, pool_path, mode, lines, reopened_line):
    r, reopened = _jmp_sig(exe, pool_path, mode)
    assert r.returncode == 0, r.stderr
    for line in lines:
        assert line in r.stdout
    assert reopened_line in reopened


@pytest.mark.parametrize("mode,message", [
    ("jmp-nested", "began at depth 1 ends at depth 2"),
    ("jmp-stale", "a CAIRN_TX block begins while the transaction of a CAIRN_TX block "
                  "that was left without ending"),
])
def test_longjmp_mistakes_stop_and_roll_back(exe, pool_path, mode, message):
    """Leaving a nested block by longjmp, or beginning a block after the
    enclosing one was left by longjmp, would make new work part of a
    transaction that never commits: the runtime stops with the reason, and
    the next open rolls the whole transaction back."""
    r, reopened = _jmp_sig(exe, pool_path, mode)
    assert r.returncode != 0 and "not reached" not in r.stdout
    assert "safety violation" in r.stderr and message in r.stderr
    assert "cairn_tx_abort() where setjmp returns" in r.stderr
    assert "reopened: x=0 y=0 h=0" in reopened


def _line_of(path, marker):
    return next(i for i, l in enumerate(path.read_text().splitlines(), 1) if marker in l)


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
@pytest.mark.parametrize("mode", ["jmp-begin", "bjmp-begin", "jmp-deeper"])
def test_begin_after_longjmp_left_a_transaction_stops(exe, pool_path, mode, opt):
    """A begin after a longjmp left a transaction open, from a frame as deep
    as the one that was left (which the CAIRN_TX frame test cannot see):
    cairn-cc watches each setjmp, so the begin stops naming the setjmp's
    line instead of nesting into a transaction that never commits."""
    r, reopened = _jmp_sig(exe, pool_path, mode, opt)
    assert r.returncode != 0 and "not reached" not in r.stdout
    assert "safety violation" in r.stderr, r.stderr
    assert "left by a longjmp to the setjmp at" in r.stderr
    if mode in ("jmp-begin", "bjmp-begin"):
        marker = {"jmp-begin": "JMP-BEGIN-SETJMP", "bjmp-begin": "BUILTIN-SETJMP-BEGIN"}[mode]
        line = _line_of(PROGRAMS / "jmp_sig.c", marker)
        assert f"jmp_sig.c:{line}" in r.stderr
    assert "cairn_tx_abort() where setjmp returns" in r.stderr
    assert "reopened: x=0 y=0 h=0" in reopened


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_longjmp_inside_one_transaction_is_fine(exe, pool_path, opt):
    r, reopened = _jmp_sig(exe, pool_path, "jmp-inside", opt)
    assert r.returncode == 0, r.stderr
    assert "after commit: x=5 y=6 h=0 open=0" in r.stdout
    assert "reopened: x=5 y=6" in reopened


def test_tx_left_open_is_reported_at_exit(exe, pool_path):
    r, reopened = _jmp_sig(exe, pool_path, "jmp-exit")
    assert "after longjmp: x=1" in r.stdout
    assert "a transaction is still open at exit" in r.stderr
    assert "reopened: x=0" in reopened


def test_signal_handler_store_outside_tx_is_reported(exe, pool_path):
    r, _ = _jmp_sig(exe, pool_path, "sig-out")
    assert r.returncode == 0, r.stderr
    assert re.search(r"outside any transaction at .*jmp_sig\.c:\d+", r.stderr)
    assert "after handler: x=0 y=0 h=42" in r.stdout


HOIST_FLAGS = [("-O0",), ("-O2",), ("-O2", "-fno-cairn-hoist-conversions"),
               ("-O2", "-fno-cairn-inline-va2ra")]


@pytest.mark.parametrize("flags", HOIST_FLAGS)
def test_hoisted_pointer_conversions_store_the_right_relative_form(exe, pool_path, flags):
    prog = exe("hoist_ptr", *flags)
    r = run([prog, "ok", pool_path])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "t1: 500 items, 0 wrong owners" in r.stdout
    assert "t2 after the other pool: 500 items, 0 wrong owners" in r.stdout
    v = run([prog, "reopen", pool_path])          # relative forms survive a remap
    assert v.returncode == 0 and "reopened: 500 items, 0 wrong owners" in v.stdout, v.stdout + v.stderr


@pytest.mark.parametrize("flags", HOIST_FLAGS)
@pytest.mark.parametrize("mode,message", [("volatile", "pointer to volatile memory"),
                                          ("otherpool", "between pools")])
def test_hoisted_pointer_conversions_keep_the_safety_checks(exe, pool_path, flags, mode, message):
    r = run([exe("hoist_ptr", *flags), mode, pool_path])
    assert r.returncode != 0
    assert message in r.stderr
    line = next(i for i, l in enumerate((PROGRAMS / "hoist_ptr.c").read_text().splitlines(), 1)
                if "LINE_HOIST" in l)
    assert f"hoist_ptr.c:{line}" in r.stderr


def test_pass_counts_hoisted_conversions(cairn_cc, tmp_path):
    r = subprocess.run([str(cairn_cc), "-O2", "-c", "--cairn-stats", "-o", str(tmp_path / "h.o"),
                        str(PROGRAMS / "hoist_ptr.c")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    hoisted = re.search(r"(\d+) cairn - pointer conversions hoisted out of loops", r.stderr)
    inlined = re.search(r"(\d+) cairn - virtual->relative conversions of stored pointers inlined", r.stderr)
    assert hoisted and int(hoisted.group(1)) >= 1, r.stderr
    assert inlined and int(inlined.group(1)) >= 1, r.stderr


@pytest.mark.parametrize("opt", OPTS)
def test_reopened_pool_in_one_function(exe, pool_path, opt):
    r = run([exe("reopen_local", opt), pool_path])
    assert r.returncode == 0, r.stdout + r.stderr
    moved = int(re.search(r"moved (\d+) of 16", r.stdout).group(1))
    assert moved >= 8, r.stdout         # the pool really mapped elsewhere
    assert "wrong 0" in r.stdout


VEC_FLAGS = [(), ("-fno-cairn-vector-ptr-stores",)]


@pytest.mark.parametrize("flags", VEC_FLAGS)
def test_vectorized_pointer_stores_are_relative(exe, pool_path, flags):
    prog = exe("vec_ptrs", "-O2", *flags)
    r = run([prog, "fill", pool_path])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "filled: 0 wrong" in r.stdout and "after abort: 0 wrong" in r.stdout, r.stdout
    v = run([prog, "reopen", pool_path])          # relative forms survive a remap
    assert v.returncode == 0 and "reopened: 0 wrong" in v.stdout, v.stdout + v.stderr


def test_vectorized_pointer_stores_keep_the_safety_check(exe, pool_path):
    r = run([exe("vec_ptrs", "-O2"), "volatile", pool_path])
    assert r.returncode != 0
    assert "pointer to volatile memory" in r.stderr, r.stderr
    line = next(i for i, l in enumerate((PROGRAMS / "vec_ptrs.c").read_text().splitlines(), 1)
                if "LINE_VEC" in l)
    assert f"vec_ptrs.c:{line}" in r.stderr, r.stderr


def test_vector_store_scan_cannot_see_volatile_pointers(exe, pool_path):
    # the fallback (store, then rewrite the words that are pool addresses)
    # cannot tell a stack address from an integer: the gap the lane-by-lane
    # conversion closes, kept visible here. UBSan's checks in the loop stop
    # the vectorizer (no vector store is left to show the gap), so a
    # sanitized run checks this program with ASan alone.
    no_ubsan = ("-fno-sanitize=undefined",) if asan_options() else ()
    r = run([exe("vec_ptrs", "-O2", "-fno-cairn-vector-ptr-stores", *no_ubsan), "volatile",
             pool_path])
    assert r.returncode == 0, r.stdout + r.stderr


def test_pass_converts_vector_pointer_stores_inline(cairn_cc, tmp_path):
    def stats(*flags):
        r = subprocess.run([str(cairn_cc), "-O2", "-c", "--cairn-stats", *flags, "-o",
                            str(tmp_path / "v.o"), str(PROGRAMS / "vec_ptrs.c")],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        return r.stderr
    on = re.search(r"(\d+) cairn - vector-of-pointer stores converted lane by lane", stats())
    assert on and int(on.group(1)) >= 1, "the vectorizer made no <N x ptr> store to test"
    off = stats("-fno-cairn-vector-ptr-stores")
    assert re.search(r"\b0 cairn - vector-of-pointer stores converted", off), off
    assert int(re.search(r"(\d+) cairn - wide stores and copies scanned", off).group(1)) >= 1


@pytest.mark.parametrize("opt", OPTS)
def test_store_after_a_call_that_ends_the_transaction_is_logged(exe, pool_path, opt):
    r = run([exe("tx_cycle", opt), pool_path])
    assert r.returncode == 0 and "balance 10 count 1" in r.stdout, r.stdout + r.stderr


def test_translation_miss_keeps_the_callers_registers(exe, pool_path):
    # cairn-cc calls the miss with preserve_most on x86-64 (compiler/rt)
    r = run([exe("miss_regs", "-O2"), pool_path])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "relative yes, registers kept: yes" in r.stdout


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_word_scan_leaves_non_pointers_alone(exe, pool_path, opt):
    """Only words inside a pool's mapped bytes are copied pointers; a string
    or integer in the pool's slot past its end stays as written."""
    r = run([exe("scan_words", opt), pool_path])
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_integers_in_pointer_slots_are_not_stopped(exe, pool_path, opt):
    """GINT_TO_POINTER(7) or (void *)0x1000 stored in a pointer field of a
    pool object: no memory is there, so it cannot dangle; it was stopped as
    "pointer to volatile memory"."""
    r = run([exe("safety", opt), 11, pool_path])
    assert r.returncode == 0 and "done 11" in r.stdout, r.stdout + r.stderr
    assert "volatile" not in r.stderr


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
@pytest.mark.parametrize("name", ["uintptr_fields",    # pointers kept as integers
                                  "libc_pointers"])    # pointers written by libc
def test_pointers_survive_a_reopen(exe, pool_path, opt, name):
    prog = exe(name, opt)
    first = run([prog, pool_path])
    assert first.returncode == 0 and "created ok" in first.stdout, first.stdout + first.stderr
    again = run([prog, pool_path])
    assert again.returncode == 0 and "reopened ok" in again.stdout, again.stdout + again.stderr


@pytest.mark.parametrize("opt", ["-O0", "-O1", "-O2"])
def test_atomic_store_of_a_stack_pointer_stops(exe, pool_path, opt):
    r = run([exe("safety", opt), 12, pool_path])
    assert r.returncode != 0 and "pointer to volatile memory" in r.stderr, r.stderr
    assert f"safety.c:{_line('LINE_ATOMIC')}" in r.stderr, r.stderr


@pytest.mark.parametrize("opt", ["-O1", "-O2", "-O3"])
def test_vector_loads_of_pointers_are_translated(exe, pool_path, opt):
    r = run([exe("vec_ptr_loads", opt), pool_path])
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr


@pytest.mark.parametrize("opt", ["-O0", "-O1", "-O2"])
def test_cmpxchg_of_a_stack_pointer_stops(exe, pool_path, opt):
    r = run([exe("safety", opt), 13, pool_path])
    assert r.returncode != 0 and "pointer to volatile memory" in r.stderr, r.stderr
    assert f"safety.c:{_line('LINE_CAS')}" in r.stderr, r.stderr


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
@pytest.mark.parametrize("mode,marker", [(14, "LINE_GEN_STORE"), (15, "LINE_GEN_XCHG"),
                                         (16, "LINE_GEN_CAS"), (17, "LINE_C11_STORE")])
def test_generic_atomics_of_a_stack_pointer_stop(exe, pool_path, opt, mode, marker):
    """__atomic_store(&slot, &v), __atomic_exchange, __atomic_compare_exchange
    and C11 atomics on _Atomic(T *): at -O0 the value reaches the atomic as
    an integer loaded from a temporary; a stack pointer went into PM."""
    r = run([exe("safety", opt), mode, pool_path])
    assert r.returncode != 0 and "pointer to volatile memory" in r.stderr, r.stderr
    assert f"safety.c:{_line(marker)}" in r.stderr, r.stderr


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_generic_atomics_store_relative_pointers(exe, pool_path, opt):
    r = run([exe("atomic_ptrs", opt), pool_path])
    assert r.returncode == 0 and "bad=0" in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize("opt,flags", [("-O0", ()), ("-O2", ()), ("-O2", ("-D_FORTIFY_SOURCE=2",))])
def test_libc_writes_without_write_set_sizes_are_undone(exe, pool_path, opt, flags):
    """sscanf/fscanf/scanf/v*scanf %-targets, strsep's cut and wide-string
    copies into PM, each aborted: the pool must be as before, and the results
    as libc's into DRAM (the scanf and strsep writes went unlogged)."""
    r = run([exe("libc_undo", opt, *flags), pool_path])
    assert r.returncode == 0 and "15 cases, 0 wrong" in r.stdout, r.stdout + r.stderr


def test_scanf_allocating_into_pm_stops(exe, pool_path):
    # %ms stores a pointer to libc's malloc buffer (DRAM) into a PM slot
    r = run([exe("libc_undo", "-O2"), pool_path, "m"])
    assert r.returncode != 0 and "pointer to volatile memory" in r.stderr, r.stdout + r.stderr
    line = next(no for no, t in enumerate(
        (PROGRAMS / "libc_undo.c").read_text().splitlines(), 1) if "LINE_SCAN_M" in t)
    assert f"libc_undo.c:{line}" in r.stderr, r.stderr


@pytest.mark.skipif("avx2" not in Path("/proc/cpuinfo").read_text(), reason="needs AVX2")
@pytest.mark.parametrize("opt", ["-O2", "-O3"])
def test_masked_vector_loads_and_stores(exe, pool_path, opt):
    """-mavx2 conditional loops over PM arrays: llvm.masked.load of pointers
    translated, llvm.masked.store of pointers converted, every masked store
    logged (this CPU has no AVX-512: gathers and scatters are IR tests)."""
    r = run([exe("vec_masked", opt, "-mavx2"), pool_path])
    assert r.returncode == 0 and r.stdout.strip() == "ok 0", r.stdout + r.stderr


@pytest.mark.parametrize("opt", ["-O0", "-O1", "-O2", "-O3"])
def test_negative_doubles_in_a_pointer_union_stay_numbers(exe, pool_path, opt):
    """jq's jv: clang copies a {pointer, double} union through its pointer
    member, so a negative double (bit 63 set) reached inttoptr and pointer
    loads and stopped the program as a pointer into pool id 4190208."""
    r = run([exe("union_double", opt, "-lm"), pool_path])
    assert r.returncode == 0 and r.stdout.splitlines()[-1] == "ok", r.stdout + r.stderr
    assert r.stdout.splitlines()[0].split() == ["-1", "-2.5", "-0", "-1e+300", "-inf", "3.25", "0"]


def test_pass_leaves_floating_point_bits_alone(cairn_cc, tmp_path):
    r = subprocess.run([str(cairn_cc), "-O2", "-c", "--cairn-stats", "-o", str(tmp_path / "u.o"),
                        str(PROGRAMS / "union_double.c")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    left = re.search(r"(\d+) cairn - inttoptr of a floating-point value's bits left alone", r.stderr)
    assert left and int(left.group(1)) >= 1, r.stderr


@pytest.mark.parametrize("opt", OPTS)
def test_tx_clobber_takes_no_undo_records_under_cairn_cc(exe, pool_path, opt):
    """NVL-C's clobber: the compiler-logged stores into a clobbered range add
    no undo record (without it the 64 KiB row is logged), and the row is
    durable at commit either way."""
    prog = exe("clobber", opt)
    counts = {}
    for mode in ("plain", "clobber"):
        if pool_path.exists():
            pool_path.unlink()
        r = run([prog, "run", pool_path, mode])
        assert r.returncode == 0, r.stderr
        words = r.stdout.split()
        counts[mode] = (int(words[1]), int(words[3]))
        c = run([prog, "check", pool_path])
        assert c.stdout.strip() == "gen 1 sum 16783360.0", c.stdout + c.stderr
    assert counts["plain"][1] >= 8192 * 8          # the whole row was snapshotted
    assert counts["clobber"][1] < 64               # only gen's 8 bytes
