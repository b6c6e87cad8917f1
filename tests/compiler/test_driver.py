"""cairn-cc as a drop-in CC: options, separate compilation, shared
libraries, make, per-optimization switches."""
import re
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
    ("--cairn-wset={bad2}", "bad2.wset:1: 'pointer' needs a region of 8 bytes ([8])"),
])
def test_bad_option_values_get_one_line(cairn_cc, tmp_path, arg, message):
    """A bad write-set file or an empty option value: one line naming the
    problem and the fix (a write-set's syntax error is a compile error, not
    a compiler crash with a stack dump), and no object file."""
    bad = tmp_path / "bad.wset"
    bad.write_text("# comment\nstrcpy dst\n")
    (tmp_path / "bad2.wset").write_text("f(p, n) writes p[n] pointer\n")
    src = tmp_path / "x.c"
    src.write_text("int x;\n")
    out = tmp_path / "x.o"
    r = subprocess.run([str(cairn_cc), arg.format(bad=bad, bad2=tmp_path / "bad2.wset"),
                        "-c", src, "-o", out],
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


def pass_options():
    """compiler/pass/CairnOptions.def, the one list of the pass's options and
    counters, as {optimization name: its counter's description}."""
    text = re.sub(r"//[^\n]*", "", (HERE.parents[1] / "compiler" / "pass" /
                                    "CairnOptions.def").read_text())
    rows = []
    for m in re.finditer(r"^(CAIRN_\w+)\(", text, re.M):   # not the #define lines
        args, cur = [], ""
        for tok in re.finditer(r'\s*("(?:[^"\\]|\\.)*"|[^",()\s]+|[,)])', text[m.end():]):
            t = tok.group(1)
            if t in (",", ")"):
                args.append(cur)
                cur = ""
                if t == ")":
                    break
            else:   # adjacent string literals join, as in C
                cur += t[1:-1] if t.startswith('"') else t
        rows.append((m.group(1), args))
    counters = {a[0]: a[1] for macro, a in rows if macro == "CAIRN_COUNTER"}
    return {a[1]: counters[a[3]] for macro, a in rows if macro == "CAIRN_OPTIMIZATION"}


OPTIMIZATIONS = pass_options()

# The program each optimization is seen at work in (legacy_stress unless
# named here) and the flags it needs to act at all.
SEEN_IN = {
    "hoist-loop-logs": ("loops", ()),
    "hoist-conversions": ("hoist_ptr", ()),
    # folding is off by default (docs/compiler.md); the two options that
    # refine it count only when it is on
    "fold-translation": ("legacy_stress", ("-fcairn-fold-translation",)),
    "plain-loop-chains": ("legacy_stress", ("-fcairn-fold-translation",)),
    "split-translated-phis": ("legacy_stress", ("-fcairn-fold-translation",)),
}


def test_options_file_lists_every_optimization_once(cairn_cc):
    assert len(OPTIMIZATIONS) >= 20
    assert set(SEEN_IN) <= set(OPTIMIZATIONS)
    helptext = subprocess.run([str(cairn_cc), "--help"], capture_output=True, text=True).stdout
    listed = helptext.split("turn an optimization off / on:\n")[1].split("  --")[0].split()
    assert listed == list(OPTIMIZATIONS)


@pytest.mark.parametrize("opt", list(OPTIMIZATIONS))
def test_each_optimization_can_be_turned_off(cairn_cc, opt):
    prog, extra = SEEN_IN.get(opt, ("legacy_stress", ()))
    counter = OPTIMIZATIONS[opt]
    src = HERE / "programs" / f"{prog}.c"
    def stat(*flags):
        err = cc(cairn_cc, "-O2", "-c", src, "-o", "/dev/null", "--cairn-stats", *extra,
                 *flags).stderr
        line = next(ln for ln in err.splitlines() if ln.endswith(" cairn - " + counter))
        return int(line.split()[0])
    assert stat() > 0
    assert stat(f"-fno-cairn-{opt}") == 0


def test_lto_is_refused_with_a_reason(cairn_cc):
    r = subprocess.run([str(cairn_cc), "-flto", "-c", "x.c"], capture_output=True, text=True)
    assert r.returncode != 0 and "without cairn's pass" in r.stderr


@pytest.mark.parametrize("how", ["dlopen", "linked"])
def test_pool_close_empties_a_librarys_own_cache(cairn_cc, runtime, tmp_path, how):
    """A shared library built by cairn-cc carries its own copy of compiler/rt
    when dlopen'ed or linked with its symbols hidden; the program's
    cairn_pool_close must still empty that copy's translation cache, or the
    library reads whatever pool is mapped in the closed pool's slot next."""
    src = HERE / "programs" / "slot_reuse"
    lib = tmp_path / "libsum.so"
    hide = ["-Wl,--exclude-libs,ALL"] if how == "linked" else []
    cc(cairn_cc, "-O2", "-fPIC", "-shared", src / "lib.c", *hide, "-o", lib)
    link = (["-DLINKED", "-L", tmp_path, "-lsum", f"-Wl,-rpath,{tmp_path}"]
            if how == "linked" else ["-ldl"])
    cc(cairn_cc, "-O2", src / "main.c", *link, "-o", tmp_path / "prog")
    r = run([tmp_path / "prog", tmp_path, how])
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout == "A=406\nA=406\n", r.stdout + r.stderr


def test_static_runtime_with_a_shared_library(cairn_cc, runtime, tmp_path, pool_path):
    """--cairn-static on both sides: the library leaves the runtime's
    symbols to the program (no --wrap hides cairn_pool_close any more)."""
    cc(cairn_cc, "-O2", "-fPIC", "-shared", "--cairn-static", MULTI / "store.c",
       "-o", tmp_path / "libstore.so")
    cc(cairn_cc, "-O2", "--cairn-static", MULTI / "main.c", "-L", tmp_path, "-lstore",
       f"-Wl,-rpath,{tmp_path}", "-o", tmp_path / "prog")
    r = run([tmp_path / "prog", pool_path])
    assert r.returncode == 0, r.stderr
    assert r.stdout == "sum=10\nreopened sum=10\n"


def _syms(path):
    return subprocess.run(["nm", str(path)], capture_output=True, text=True).stdout


def test_response_file_is_read(cairn_cc, runtime, tmp_path, pool_path):
    """@FILE (CMake, ninja and libtool use them): cairn-cc reads it, so a
    source named there is instrumented and a -c there means no runtime
    libraries appended (was: compiled with plain clang, silently)."""
    (tmp_path / "c.rsp").write_text(f"-O2 -c '{MULTI / 'store.c'}' -o \"{tmp_path / 'store.o'}\"\n")
    (tmp_path / "l.rsp").write_text(f"{MULTI / 'main.c'} {tmp_path / 'store.o'}\n"
                                    f"-o {tmp_path / 'prog'}\n")
    r = cc(cairn_cc, "-Werror", f"@{tmp_path / 'c.rsp'}")
    assert "warning" not in r.stderr
    assert "cairn__log_store" in _syms(tmp_path / "store.o")
    cc(cairn_cc, "-O2", f"@{tmp_path / 'l.rsp'}")
    r = run([tmp_path / "prog", pool_path])
    assert r.returncode == 0 and r.stdout == "sum=10\nreopened sum=10\n", r.stderr


def test_c_and_assembly_in_one_command(cairn_cc, runtime, tmp_path):
    """A .S among the inputs: the assembler job never sees cairn's pass
    options (they go to the compile jobs only)."""
    (tmp_path / "f.S").write_text(".text\n.globl seven\nseven:\n movl $7, %eax\n ret\n"
                                  ".section .note.GNU-stack,\"\",@progbits\n")
    (tmp_path / "m.c").write_text("int seven(void);\nint main(void) { return seven(); }\n")
    cc(cairn_cc, "-O2", tmp_path / "m.c", tmp_path / "f.S", "-o", tmp_path / "prog")
    assert subprocess.run([str(tmp_path / "prog")]).returncode == 7


def test_ir_inputs_are_not_instrumented_twice(cairn_cc, tmp_path):
    """A .bc/.ll made by cairn-cc and compiled again (-save-temps, llvm-link
    flows) keeps one instrumentation."""
    src = HERE / "programs" / "list.c"
    direct = cc(cairn_cc, "-O2", "-S", "-emit-llvm", src, "-o", "-").stdout
    cc(cairn_cc, "-O2", "-c", "-emit-llvm", src, "-o", tmp_path / "l.bc")
    again = cc(cairn_cc, "-O2", "-S", "-emit-llvm", tmp_path / "l.bc", "-o", "-").stdout
    n = direct.count("call void @cairn__log_store(")
    assert n > 0 and again.count("call void @cairn__log_store(") == n
    cc(cairn_cc, "-O2", "-save-temps=obj", "-c", src, "-o", tmp_path / "st.o")
    asm = (tmp_path / "st.s").read_text() if (tmp_path / "st.s").exists() else \
        next(tmp_path.glob("*.s")).read_text()
    want = cc(cairn_cc, "-O2", "-S", src, "-o", "-").stdout.count("callq\tcairn__log_store")
    assert want > 0 and asm.count("callq\tcairn__log_store") == want


@pytest.mark.parametrize("args,message", [
    (["-m32"], "-m32 is not supported"),
    (["--target=aarch64-linux-gnu"], "target aarch64-linux-gnu is not supported"),
    (["-target", "i686-linux-gnu"], "target i686-linux-gnu is not supported"),
])
def test_other_targets_are_refused(cairn_cc, tmp_path, args, message):
    (tmp_path / "x.c").write_text("int x;\n")
    r = subprocess.run([str(cairn_cc), *args, "-c", str(tmp_path / "x.c"), "-o",
                        str(tmp_path / "x.o")], capture_output=True, text=True)
    assert r.returncode != 0 and message in r.stderr and len(r.stderr.splitlines()) == 1
    assert not (tmp_path / "x.o").exists()


@pytest.mark.parametrize("name", ["x.cpp", "x.cc"])
def test_cplusplus_under_cairn_cc_points_to_cairn_cxx(cairn_cc, tmp_path, name):
    (tmp_path / name).write_text("int main() { return 0; }\n")
    r = subprocess.run([str(cairn_cc), str(tmp_path / name), "-o", str(tmp_path / "x")],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "compile it with cairn-c++" in r.stderr
    assert len(r.stderr.splitlines()) == 1


@pytest.mark.parametrize("args", [
    ["-Werror", "-c", "{i}"],                        # a .i alone: no unused -I
    ["-Werror", "--compile", "{c}", "-o", "{o}"],    # long form of -c: no runtime libs
    ["-Werror", "-x", "c-header", "{h}", "-o", "{pch}"],   # a precompiled header
    ["-Werror", "-r", "{obj}", "-o", "{o}"],         # ld -r: no runtime in it
])
def test_build_modes_without_stray_warnings(cairn_cc, tmp_path, args):
    c = tmp_path / "x.c"
    c.write_text("#include <cairn.h>\nint f(int *p) { return *p = 1; }\n")
    (tmp_path / "x.h").write_text("struct s { int a; };\n")
    cc(cairn_cc, "-E", c, "-o", tmp_path / "x.i")
    cc(cairn_cc, "-c", c, "-o", tmp_path / "obj.o")
    names = {"i": tmp_path / "x.i", "c": c, "o": tmp_path / "out.o", "h": tmp_path / "x.h",
             "pch": tmp_path / "x.h.pch", "obj": tmp_path / "obj.o"}
    r = cc(cairn_cc, *[a.format(**names) for a in args], cwd=tmp_path)
    assert "warning" not in r.stderr, r.stderr


def test_fcairn_turns_instrumentation_back_on(cairn_cc, tmp_path):
    src = MULTI / "store.c"
    cc(cairn_cc, "-O2", "-fno-cairn", "-fcairn", "-c", src, "-o", tmp_path / "on.o")
    cc(cairn_cc, "-O2", "-fcairn", "-fno-cairn", "-c", src, "-o", tmp_path / "off.o")
    assert "cairn__log_store" in _syms(tmp_path / "on.o")
    assert "cairn__log_store" not in _syms(tmp_path / "off.o")


def test_heap_file_name_ignores_the_users_warnings(cairn_cc, runtime, tmp_path):
    """--persistent-heap=FILE compiles the file name on its own: the user's
    -Weverything -Werror does not reach a file the user never wrote."""
    (tmp_path / "m.c").write_text("int main(void) { return 0; }\n")
    cc(cairn_cc, "-Weverything", "-Werror", "-Wno-unsafe-buffer-usage",
       f"--persistent-heap={tmp_path}/h.pool", tmp_path / "m.c", "-o", tmp_path / "prog")
    assert run([tmp_path / "prog"]).returncode == 0


def test_static_link(cairn_cc, runtime, tmp_path, pool_path):
    """-static links libcairn.a (a fully static program cannot use libcairn.so)."""
    cc(cairn_cc, "-O2", "-static", MULTI / "main.c", MULTI / "store.c", "-o", tmp_path / "prog")
    r = run([tmp_path / "prog", pool_path])
    assert r.returncode == 0 and r.stdout == "sum=10\nreopened sum=10\n", r.stderr
