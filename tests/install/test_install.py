"""The front door: cairn installed like a C toolchain.

`cmake --install` puts the built tree into a temporary prefix, which is then
moved (so nothing can depend on where it was installed). Programs are built
there with only what the prefix provides, PATH and PKG_CONFIG_PATH pointing
into it and no CAIRN_BUILD: a plain Makefile, a CMake project with
find_package(cairn), and an autotools project (`CC=cairn-cc ./configure`,
configure generated here by autoreconf). Each program runs twice on its pool,
so the second run shows that the first one's data persisted. The CLI is
tested as installed beside the tools and as a wheel built from python/, and
the Debian package is built with cpack and checked with dpkg-deb, dpkg
--dry-run and apt-get --simulate, and by building from its extracted files."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parents[1]
BUILD = Path(os.environ.get("CAIRN_BUILD", SOURCE / "build")).resolve()
PROJECT = HERE / "project"
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"

pytestmark = pytest.mark.skipif(not (BUILD / "compiler" / "cairn-cc").exists(),
                                reason=f"cairn-cc is not built in {BUILD}")


def run(cmd, cwd=None, env=None, timeout=600):
    r = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True,
                       text=True, timeout=timeout)
    assert r.returncode == 0, f"{' '.join(map(str, cmd))} failed ({r.returncode}):\n" \
                              f"{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r.stdout


def prefix_env(prefix: Path, path_first=True) -> dict:
    """An environment that knows cairn only through PREFIX."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CAIRN", "CMAKE_", "PKG_CONFIG", "LD_LIBRARY", "PYTHON"))
           and k not in ("CC", "CFLAGS", "LDFLAGS", "VIRTUAL_ENV")}
    env["PATH"] = f"{prefix}/bin:{SYSTEM_PATH}" if path_first else SYSTEM_PATH
    env["PKG_CONFIG_PATH"] = str(prefix / "lib" / "pkgconfig")
    env["CAIRN_PMEM_FORCE"] = "1"
    return env


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    base = tmp_path_factory.mktemp("install")
    stage = base / "staged"
    run(["cmake", "--install", BUILD, "--prefix", stage])
    moved = base / "prefix"
    stage.rename(moved)                  # an install must work wherever it lands
    return moved


def test_layout_is_a_c_toolchains(prefix):
    for f in ["bin/cairn-cc", "bin/cairn-analyze", "bin/cairn-pool", "bin/cairn",
              "include/cairn.h", "lib/libcairn.a", "lib/libcairn.so.0.1.0",
              "lib/cairn/CairnPass.so", "lib/cairn/CairnTypeId.so",
              "lib/cairn/libcairn_cc_rt.a", "lib/cairn/libcairn_pheap.a",
              "lib/cairn/wset/libc.wset", "lib/pkgconfig/cairn.pc",
              "lib/cmake/cairn/cairnConfig.cmake", "lib/cmake/cairn/cairnConfigVersion.cmake",
              "share/man/man1/cairn-cc.1", "share/man/man1/cairn.1",
              "share/man/man3/cairn.3", "share/cairn/python/cairn/cli.py",
              "share/cairn/python/cairn/trace_types.h"]:
        assert (prefix / f).is_file(), f"{f} is not installed"
    assert os.readlink(prefix / "lib/libcairn.so") == "libcairn.so.0"
    assert os.readlink(prefix / "lib/libcairn.so.0") == "libcairn.so.0.1.0"
    dyn = run(["readelf", "-d", prefix / "lib/libcairn.so.0.1.0"])
    assert "Library soname: [libcairn.so.0]" in dyn


def test_no_installed_file_names_the_build_or_source_tree(prefix):
    trees = {str(BUILD).encode(), str(SOURCE).encode()}
    named = [str(f.relative_to(prefix)) for f in prefix.rglob("*")
             if f.is_file() and not f.is_symlink()
             and any(t in f.read_bytes() for t in trees)]
    assert not named, f"installed files that name {SOURCE} or {BUILD}: {named}"


def test_cairn_cc_finds_every_part_in_the_prefix(prefix):
    out = run([prefix / "bin/cairn-cc", "--cairn-config"], env=prefix_env(prefix))
    parts = dict(line.split(":", 1) for line in out.splitlines())
    for name, where in parts.items():
        if name != "clang":
            assert Path(where.strip()).resolve().is_relative_to(prefix), f"{name}: {where}"


def test_persistent_heap_mode_builds_from_the_prefix(prefix, tmp_path):
    (tmp_path / "heap.c").write_text(
        '#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n'
        'int main(void) { char *s = malloc(32); strcpy(s, "kept in a pool");\n'
        '  puts(s); free(s); return 0; }\n')
    env = prefix_env(prefix)
    heap = tmp_path / "heap.pool"
    run(["cairn-cc", f"--persistent-heap={heap}", "-O2", "heap.c", "-o", "heap"],
        cwd=tmp_path, env=env)
    assert run([tmp_path / "heap"], env=env) == "kept in a pool\n"


def test_cairn_cxx_builds_from_the_prefix(prefix, tmp_path):
    """cairn-c++ (a link to cairn-cc in bin/) finds clang++, the prelude and
    its libraries in the prefix: a std::map in the heap, and one in a pool
    through cairn::allocator that a second run finds again."""
    (tmp_path / "m.cpp").write_text(
        '#include <cairn.h>\n#include <cstdio>\n#include <map>\n'
        'using M = std::map<int, int, std::less<int>, cairn::allocator<std::pair<const int, int>>>;\n'
        'int main(int argc, char **argv) {\n'
        '  std::map<int, int> h; for (int i = 0; i < 100; i++) h[i] = i * i;\n'
        '  cairn_pool *p = argc > 1 ? cairn_pool_open(argv[1], "m") : nullptr;\n'
        '  if (!p && argc > 1) p = cairn_pool_create(argv[1], "m", 16 << 20);\n'
        '  if (!p) { std::printf("%zu %d\\n", h.size(), h[9]); return 0; }\n'
        '  M **root = (M **)cairn_root(p, sizeof(M *), 7);\n'
        '  CAIRN_TX(p) { if (!*root) *root = cairn::make<M>(p, cairn::allocator<char>(p));\n'
        '                (**root)[(int)(*root)->size()] = 1; }\n'
        '  std::printf("%zu\\n", (*root)->size()); return cairn_pool_close(p); }\n')
    env = prefix_env(prefix)
    run(["cairn-c++", "-std=c++17", "-O2", "--persistent-heap", "m.cpp", "-o", "heap"],
        cwd=tmp_path, env=env)
    assert run([tmp_path / "heap"], env=env) == "100 81\n"
    run(["cairn-c++", "-std=c++17", "-O2", "m.cpp", "-o", "pool"], cwd=tmp_path, env=env)
    pool = tmp_path / "m.pool"
    assert run([tmp_path / "pool", pool], env=env) == "1\n"
    assert run([tmp_path / "pool", pool], env=env) == "2\n"


def build_make(work, env):
    run(["make"], cwd=work, env=env)
    return work


def build_cmake(work, env):
    run(["cmake", "-S", work, "-B", work / "b", f"-DCMAKE_PREFIX_PATH={env['PREFIX']}"],
        env={**env, "CC": "cairn-cc"})
    cache = (work / "b" / "CMakeCache.txt").read_text()
    assert f"CMAKE_C_COMPILER:FILEPATH={env['PREFIX']}/bin/cairn-cc" in cache
    assert f"cairn_DIR:PATH={env['PREFIX']}/lib/cmake/cairn" in cache
    run(["cmake", "--build", work / "b"], env=env)
    return work / "b"


def build_autotools(work, env):
    run(["autoreconf", "-i"], cwd=work, env=env)
    run(["./configure"], cwd=work, env={**env, "CC": "cairn-cc"})
    run(["make"], cwd=work, env=env)
    return work


@pytest.mark.parametrize("way, build", [("make", build_make), ("cmake", build_cmake),
                                        ("autotools", build_autotools)])
def test_example_builds_and_runs_from_the_prefix_alone(prefix, tmp_path, way, build):
    work = tmp_path / way
    shutil.copytree(PROJECT / way, work)
    for src in PROJECT.glob("*.c"):
        shutil.copy(src, work)
    env = {**prefix_env(prefix), "PREFIX": str(prefix)}
    out_dir = build(work, env)
    env.pop("PREFIX")
    for prog in ("legacy", "hand"):
        exe = out_dir / prog
        libs = run(["ldd", exe], env=env)
        assert re.search(rf"libcairn\.so\.0 => {re.escape(str(prefix))}/lib", libs), libs
        pool = tmp_path / f"{prog}.pool"
        first = run([exe, pool], env=env)
        second = run([exe, pool], env=env)
        assert f"{prog} runs=1 sum=1" in first
        assert f"{prog} runs=2 sum=3" in second      # the first run's entry persisted
        if prog == "legacy":
            assert "head=run 2" in second           # and its string, through cairn-cc


def test_installed_cli_runs_the_tools_beside_it(prefix, tmp_path):
    env = prefix_env(prefix, path_first=False)      # found beside bin/cairn, not on PATH
    pool = tmp_path / "cli.pool"
    run([prefix / "bin/cairn", "pool", "create", pool, "cli", "8M"], cwd=tmp_path, env=env)
    out = run([prefix / "bin/cairn", "pool", "check", pool], cwd=tmp_path, env=env)
    assert "error" not in out.lower(), out
    out = run([prefix / "bin/cairn", "cc", "config"], cwd=tmp_path, env=env)
    assert f"{prefix}/bin/../lib/cairn/CairnPass.so" in out


def test_wheel_from_the_tree_installs_the_cli_and_finds_tools_on_path(prefix, tmp_path):
    # built from a copy: setuptools writes build/ and *.egg-info beside the sources
    src = tmp_path / "python"
    shutil.copytree(SOURCE / "python", src,
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build"))
    env = prefix_env(prefix)
    # offline, with Debian's setuptools and wheel, which the pins must name
    run(["/usr/bin/python3", "-m", "pip", "wheel", "-q", "--no-deps", "--no-index",
         "--no-build-isolation", "--check-build-dependencies", "-w", tmp_path / "dist", src],
        env=env)
    wheels = list((tmp_path / "dist").glob("cairn-*.whl"))
    assert [w.name for w in wheels] == ["cairn-0.1.0-py3-none-any.whl"]
    venv = tmp_path / "venv"
    run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", venv], env=env)
    run([venv / "bin/python", "-m", "pip", "install", "-q", "--no-deps", "--no-index",
         wheels[0]], env=env)
    env["PATH"] = f"{venv}/bin:{env['PATH']}"
    pool = tmp_path / "wheel.pool"
    run(["cairn", "pool", "create", pool, "wheel", "8M"], cwd=tmp_path, env=env)
    out = run(["cairn", "pool", "info", pool], cwd=tmp_path, env=env)
    assert "wheel" in out
    # without the prefix on PATH the wheel's CLI says where it looked
    env["PATH"] = f"{venv}/bin:{SYSTEM_PATH}"
    r = subprocess.run(["cairn", "pool", "info", str(pool)], cwd=tmp_path, env=env,
                       capture_output=True, text=True)
    assert r.returncode != 0
    assert "cairn-pool not found beside the cairn command or on PATH" in r.stderr


def test_man_pages_hold_the_facts_of_the_docs(prefix):
    pages = {p: (prefix / "share/man" / p).read_text()
             for p in ("man1/cairn-cc.1", "man1/cairn.1", "man3/cairn.3")}
    for name, text in pages.items():
        assert text.startswith(".nh\n.TH "), name
        assert "<!--" not in text, f"{name}: an include line was not expanded"
    assert "--cairn-config" in pages["man1/cairn-cc.1"]        # docs/compiler.md, Options
    assert "cairn pool check" in pages["man1/cairn.1"]          # the CLI's parser
    assert "cairn_pool_open" in pages["man3/cairn.3"]           # docs/runtime.md, API
    assert "CAIRN_PMEM_FORCE" in pages["man3/cairn.3"]          # docs/runtime.md, Environment


def test_manpage_names_a_missing_section(tmp_path):
    page = tmp_path / "x.1.md"
    page.write_text('# NAME\n\n<!-- include docs/runtime.md "No such heading" -->\n')
    r = subprocess.run([sys.executable, SOURCE / "packaging/manpage.py", "--markdown", page],
                       cwd=SOURCE, capture_output=True, text=True)
    assert r.returncode != 0
    assert 'no heading "No such heading" in' in r.stderr


def test_debian_package_declares_its_dependencies_and_works_unpacked(tmp_path):
    if not shutil.which("dpkg-deb"):
        pytest.skip("dpkg-deb is not installed (Debian only)")
    run(["cpack", "--config", BUILD / "CPackConfig.cmake", "-G", "DEB", "-B", tmp_path / "deb"],
        timeout=900)
    debs = list((tmp_path / "deb").glob("cairn_*_amd64.deb"))
    assert len(debs) == 1, list((tmp_path / "deb").iterdir())
    deb = debs[0]
    info = run(["dpkg-deb", "-I", deb])
    depends = re.search(r"^ Depends: (.*)$", info, re.M).group(1)
    for dep in ("clang-19", "libllvm19", "libclang-cpp19", "libc6", "python3"):
        assert re.search(rf"(^|, ){dep}( |,|$)", depends), f"{dep} not in Depends: {depends}"
    listing = run(["dpkg-deb", "-c", deb])
    for f in ("./usr/bin/cairn-cc", "./usr/lib/libcairn.so.0.1.0", "./usr/include/cairn.h",
              "./usr/lib/pkgconfig/cairn.pc", "./usr/lib/cairn/CairnPass.so",
              "./usr/share/man/man1/cairn-cc.1"):
        assert re.search(rf" {re.escape(f)}( |$)", listing, re.M), f"{f} not in the .deb"
    run(["dpkg", "--dry-run", "-i", deb])
    sim = run(["apt-get", "install", "--simulate", "-q", deb])
    assert "Inst cairn " in sim
    # its files work where they are unpacked: cairn-cc builds and links there
    root = tmp_path / "unpacked"
    run(["dpkg-deb", "-x", deb, root])
    usr = root / "usr"
    work = tmp_path / "make"
    shutil.copytree(PROJECT / "make", work)
    for src in PROJECT.glob("*.c"):
        shutil.copy(src, work)
    env = prefix_env(usr)
    run(["make", "legacy"], cwd=work, env=env)
    assert "legacy runs=1 sum=1" in run([work / "legacy", tmp_path / "deb.pool"], env=env)
