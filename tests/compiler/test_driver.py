"""cairn-cc as a drop-in CC: options, separate compilation, shared
libraries, make, per-optimization switches."""
import subprocess

import pytest

from conftest import HERE, run

MULTI = HERE / "programs" / "multi"


def cc(cairn_cc, *args, cwd=None):
    r = subprocess.run([str(cairn_cc), *map(str, args)], capture_output=True, text=True, cwd=cwd)
    assert r.returncode == 0, r.stderr
    return r


def test_help_lists_every_optimization(cairn_cc):
    out = cc(cairn_cc, "--help").stdout
    for opt in ("skip-volatile", "merge-logs", "inline-ra2va", "scan-wide-stores"):
        assert opt in out


def test_config_finds_its_parts(cairn_cc, runtime):
    out = cc(cairn_cc, "--cairn-config").stdout
    assert "CairnPass.so" in out and "libcairn" in out and "wset" in out


def test_unknown_optimization_is_refused(cairn_cc):
    r = subprocess.run([str(cairn_cc), "-fno-cairn-bogus", "-c", "x.c"],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "unknown optimization" in r.stderr


@pytest.mark.parametrize("arg,message", [
    ("--persistent-heap=", "--persistent-heap= names no file"),
    ("--cairn-wset=", "--cairn-wset= names no file"),
    ("--cairn-wset=/nonexistent/x.wset", "cannot read write-set file /nonexistent/x.wset"),
    ("--cairn-wset={bad}", "bad.wset:2: expected '(' after the function name"),
])
def test_bad_option_values_get_one_line(cairn_cc, tmp_path, arg, message):
    """A bad write-set file or an empty option value: one line naming the
    problem and the fix (a write-set's syntax error is a compile error, not
    a compiler crash with a stack dump), and no object file."""
    bad = tmp_path / "bad.wset"
    bad.write_text("# comment\nstrcpy dst\n")
    src = tmp_path / "x.c"
    src.write_text("int x;\n")
    out = tmp_path / "x.o"
    r = subprocess.run([str(cairn_cc), arg.format(bad=bad), "-c", src, "-o", out],
                       capture_output=True, text=True)
    assert r.returncode != 0
    assert message in r.stderr, r.stderr
    assert "Stack dump" not in r.stderr and "PLEASE submit" not in r.stderr, r.stderr
    lines = [x for x in r.stderr.splitlines() if x and x != "1 error generated."]
    assert len(lines) == 1, r.stderr
    assert not out.exists()


@pytest.mark.parametrize("lang", [["-x", "c"], ["-xc"]])
def test_source_from_stdin_links(cairn_cc, runtime, tmp_path, lang):
    """`cc -x c - -o prog` (configure scripts' probes): the runtime libraries
    cairn-cc appends are not read as C because of the user's -x."""
    out = tmp_path / "prog"
    r = subprocess.run([str(cairn_cc), *lang, "-", "-o", str(out)], input="int main(void){return 7;}\n",
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[:2000]
    assert subprocess.run([str(out)]).returncode == 7


def test_version_passes_through(cairn_cc):
    assert "clang version 19" in cc(cairn_cc, "--version").stdout


def test_separate_compile_and_link(cairn_cc, runtime, tmp_path, pool_path):
    cc(cairn_cc, "-O2", "-g", "-c", MULTI / "store.c", "-o", tmp_path / "store.o")
    cc(cairn_cc, "-O2", "-c", MULTI / "main.c", "-o", tmp_path / "main.o")
    cc(cairn_cc, tmp_path / "store.o", tmp_path / "main.o", "-o", tmp_path / "prog")
    r = run([tmp_path / "prog", pool_path])
    assert r.returncode == 0, r.stderr
    assert r.stdout == "sum=10\nreopened sum=10\n"


def test_shared_library(cairn_cc, runtime, tmp_path, pool_path):
    cc(cairn_cc, "-O2", "-fPIC", "-shared", MULTI / "store.c", "-o", tmp_path / "libstore.so")
    cc(cairn_cc, "-O2", MULTI / "main.c", "-L", tmp_path, "-lstore",
       f"-Wl,-rpath,{tmp_path}", "-o", tmp_path / "prog")
    r = run([tmp_path / "prog", pool_path])
    assert r.returncode == 0, r.stderr
    assert r.stdout == "sum=10\nreopened sum=10\n"


def test_make_cc(cairn_cc, runtime, tmp_path, pool_path):
    (tmp_path / "Makefile").write_text(
        f"VPATH = {MULTI}\nprog: main.o store.o\n\t$(CC) $^ -o $@\n"
        "%.o: %.c\n\t$(CC) $(CFLAGS) -c $< -o $@\n")
    r = subprocess.run(["make", f"CC={cairn_cc}", "CFLAGS=-O1 -Wall -Werror"],
                       cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert run([tmp_path / "prog", pool_path]).stdout.startswith("sum=10")


def test_no_cairn_builds_uninstrumented(cairn_cc, tmp_path):
    ir = cc(cairn_cc, "-O2", "-fno-cairn", "-S", "-emit-llvm", "-o", "-",
            MULTI / "store.c").stdout
    assert "cairn__log_store" not in ir


@pytest.mark.parametrize("opt,counter,prog,extra", [
    ("merge-logs", "log calls removed by merging", "legacy_stress", ()),
    ("skip-volatile", "stores skipped: target proven volatile", "legacy_stress", ()),
    ("skip-null-convert", "NULL pointer stores needing no conversion", "legacy_stress", ()),
    ("inline-ra2va", "relative->virtual translations inlined", "legacy_stress", ()),
    ("hoist-loop-logs", "loop stores logged once before the loop", "loops", ()),
    ("elim-dominated-logs", "range logged by a dominating store", "legacy_stress", ()),
    ("readonly-calls-keep-cache", "calls that only read memory: register cache kept",
     "legacy_stress", ()),
    ("known-callees", "calls proven not to run cairn's runtime", "legacy_stress", ()),
    # threading applies to the unfolded form only (folded: NULL tests test the base)
    ("thread-null-tests", "NULL tests skipped after converting a relative load",
     "legacy_stress", ("-fno-cairn-fold-translation",)),
    ("fold-translation", "pointer loads translated as v + d", "legacy_stress", ()),
    ("plain-loop-chains", "loop-carried pointer loads left unfolded", "legacy_stress", ()),
    ("split-translated-phis", "pointer phis of translated values kept", "legacy_stress", ()),
])
def test_each_optimization_can_be_turned_off(cairn_cc, opt, counter, prog, extra):
    src = HERE / "programs" / f"{prog}.c"
    def stat(*flags):
        err = cc(cairn_cc, "-O2", "-c", src, "-o", "/dev/null", "--cairn-stats", *extra,
                 *flags).stderr
        line = next(ln for ln in err.splitlines() if counter in ln)
        return int(line.split()[0])
    assert stat() > 0
    assert stat(f"-fno-cairn-{opt}") == 0


def test_lto_is_refused_with_a_reason(cairn_cc):
    r = subprocess.run([str(cairn_cc), "-flto", "-c", "x.c"], capture_output=True, text=True)
    assert r.returncode != 0 and "without cairn's pass" in r.stderr
