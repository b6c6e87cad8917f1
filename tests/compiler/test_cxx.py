"""cairn-c++: C++ programs and the standard library on persistent objects.

- every standard container, std::string, std::function and smart pointers
  under --persistent-heap print what clang++'s build prints (C++17, C++20,
  -O0 and -O2), and their nodes are in the heap;
- cairn's own copies of libstdc++'s tree and list node functions keep the
  red-black invariants and give libstdc++'s results;
- a std::map and an unordered_map kept in a real pool through
  cairn::allocator survive 200 SIGKILLs, each followed by a reopen that
  must hold exactly the replay of the committed operations;
- exceptions abort transactions; polymorphic objects: heap yes, pools no;
- class type ids follow base classes."""
import random
import subprocess
import time

import pytest

from conftest import BUILD, HERE, build, run

CXX_DIR = HERE / "cxx"
CAIRN_CXX = BUILD / "compiler" / "cairn-c++"
CLANGXX = "/usr/lib/llvm-19/bin/clang++"


@pytest.fixture(scope="session")
def cairn_cxx(runtime):
    if not CAIRN_CXX.exists():
        pytest.fail(f"cairn-c++ is not built in {BUILD} (ninja -C {BUILD} cairn-cc)")
    return CAIRN_CXX


def reference(tmp_path, src, *flags):
    out = tmp_path / (src.stem + "-clang++")
    return build(CLANGXX, src, out, *flags)


@pytest.mark.parametrize("std,opt", [("c++17", "-O0"), ("c++17", "-O2"), ("c++20", "-O2")])
def test_containers_under_persistent_heap_match_clang(cairn_cxx, tmp_path, std, opt):
    src = CXX_DIR / "containers.cpp"
    ref = run([reference(tmp_path, src, f"-std={std}", opt)])
    heap = run([build(cairn_cxx, src, tmp_path / "heap", f"-std={std}", opt,
                      "--persistent-heap")])
    assert ref.returncode == 0 and heap.returncode == 0, heap.stderr
    assert heap.stdout == ref.stdout and heap.stdout.strip()


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_boost_container_and_intrusive_types_under_persistent_heap(cairn_cxx, tmp_path, opt):
    src = CXX_DIR / "boost_types.cpp"
    ref = run([reference(tmp_path, src, "-std=c++17", opt)])
    heap = run([build(cairn_cxx, src, tmp_path / "heap", "-std=c++17", opt,
                      "--persistent-heap", "-Wno-deprecated-declarations")])
    assert ref.returncode == 0 and heap.returncode == 0, heap.stderr
    assert heap.stdout == ref.stdout and "hash" in heap.stdout


def test_heap_objects_are_in_the_heap(cairn_cxx, tmp_path):
    src = tmp_path / "where.cpp"
    src.write_text(
        "#include <cairn.h>\n#include <map>\n#include <string>\n#include <memory>\n"
        "#include <cstdio>\n"
        "int main() { auto *m = new std::map<int, std::string>; (*m)[1] = std::string(50, 'x');\n"
        "  auto sp = std::make_shared<int>(3); auto *a = new (std::align_val_t(64)) double[4];\n"
        "  printf(\"%d %d %d %d %d\\n\", cairn_is_pm(m), cairn_is_pm(&*m->begin()),\n"
        "         cairn_is_pm(m->begin()->second.data()), cairn_is_pm(sp.get()),\n"
        "         cairn_is_pm(a) && ((unsigned long)a % 64 == 0));\n"
        "  ::operator delete[](a, std::align_val_t(64)); delete m; }\n")
    r = run([build(cairn_cxx, src, tmp_path / "where", "-O2", "--persistent-heap")])
    assert r.returncode == 0 and r.stdout.split() == ["1"] * 5, r.stdout + r.stderr


@pytest.mark.parametrize("flags", [[], ["--persistent-heap"]])
def test_tree_and_list_node_functions(cairn_cxx, tmp_path, flags):
    """rbstress checks the red-black invariants after every few changes and
    hashes every walk; it must agree with libstdc++'s own functions."""
    src = CXX_DIR / "rbstress.cpp"
    ref = reference(tmp_path, src, "-O2")
    ours = build(cairn_cxx, src, tmp_path / "ours", "-O2", *flags)
    for seed in ("1", "7", "42"):
        a, b = run([ref, seed, "20000"]), run([ours, seed, "20000"])
        assert a.returncode == 0 and b.returncode == 0, b.stdout + b.stderr
        assert a.stdout == b.stdout


def test_node_functions_are_cairns_not_libstdcxx(cairn_cxx, tmp_path):
    """The program binds std::_Rb_tree_insert_and_rebalance and
    _List_node_base::_M_hook to cairn's instrumented copies."""
    exe = build(cairn_cxx, CXX_DIR / "rbstress.cpp", tmp_path / "rb", "-O2")
    syms = subprocess.run(["nm", "-C", str(exe)], capture_output=True, text=True).stdout
    for name in ("std::_Rb_tree_insert_and_rebalance", "std::_Rb_tree_rebalance_for_erase",
                 "std::_Rb_tree_increment", "std::__detail::_List_node_base::_M_hook"):
        assert any(name in line and " T " in line for line in syms.splitlines()), name


def test_map_in_a_pool_survives_200_kills(cairn_cxx, tmp_path, pool_path):
    exe = build(cairn_cxx, CXX_DIR / "pool_map.cpp", tmp_path / "pool_map",
                "-std=c++17", "-O2", "-g")
    assert run([exe, "create", pool_path]).returncode == 0
    rng = random.Random(2026)
    recovered = 0
    for kill in range(200):
        p = subprocess.Popen([str(exe), "run", str(pool_path)], stdout=subprocess.PIPE,
                             text=True, env={"CAIRN_PMEM_FORCE": "1", "PATH": "/usr/bin"})
        time.sleep(rng.uniform(0.002, 0.015))
        p.kill()
        out, _ = p.communicate()
        said = [int(line.split()[1]) for line in out.splitlines() if line.startswith("committed")]
        v = run([exe, "verify", pool_path])
        assert v.returncode == 0, f"kill {kill}: {v.stdout}{v.stderr}"
        # nothing the program was told is committed may be lost; at most the
        # one transaction in flight may have committed without being printed
        last = said[-1] if said else recovered      # killed before its first commit
        recovered = int(v.stdout.split()[1])
        assert last <= recovered <= last + 1, f"kill {kill}: said {last}, pool has {recovered}"
    check = run([BUILD / "runtime" / "cairn-pool", "check", pool_path])
    assert check.returncode == 0, check.stdout + check.stderr


def test_exceptions_abort_transactions(cairn_cxx, tmp_path, pool_path):
    exe = build(cairn_cxx, CXX_DIR / "tx_except.cpp", tmp_path / "txx", "-std=c++17", "-O2")
    r = run([exe, "create", pool_path])
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "after throw out of CAIRN_TX: a=1 map=1 active=0",
        "caught inside: b=5 map=2",
        "nested throw: c=0 active=0",
        "cairn::transaction: b=6 map=3 active=0",
    ]
    r = run([exe, "open", pool_path])
    assert r.stdout.strip() == "reopened: a=1 b=6 c=0 map=3 sum=88", r.stdout + r.stderr


def test_polymorphic_objects(cairn_cxx, tmp_path, pool_path):
    src = CXX_DIR / "poly.cpp"
    ref = run([reference(tmp_path, src, "-O2", f"-I{BUILD / 'compiler' / 'include'}",
                         f"-L{BUILD / 'runtime'}", "-lcairn",
                         f"-Wl,-rpath,{BUILD / 'runtime'}")])
    heap = run([build(cairn_cxx, src, tmp_path / "heap", "-O2", "--persistent-heap")])
    assert heap.returncode == 0 and heap.stdout.split()[0] == ref.stdout.split()[0]
    assert heap.stdout.split()[1] == "1"          # the objects are in the heap
    r = subprocess.run([str(cairn_cxx), "-DMAKE", "-c", str(src), "-o",
                        str(tmp_path / "m.o")], capture_output=True, text=True)
    assert r.returncode != 0 and "cairn::make<T>: T has virtual functions" in r.stderr
    placed = build(cairn_cxx, src, tmp_path / "placed", "-O2", "-g", "-DPLACE")
    r = run([placed, pool_path])
    assert r.returncode != 0 and "safety violation" in r.stderr and "poly.cpp" in r.stderr


def test_class_type_ids_follow_bases(cairn_cxx, tmp_path):
    src = tmp_path / "ids.cpp"
    src.write_text(
        "#include <cairn.h>\n#include <cstdio>\n"
        "struct A { int x; long y;\n#ifdef BIG\n int w;\n#endif\n};\n"
        "struct B : A { double z; };\nstruct VB : virtual A { int r; };\n"
        "template <class T> struct Box { T v; Box *next; };\n"
        "int main() { printf(\"%llx %llx %llx %llx\\n\",\n"
        "  (unsigned long long)CAIRN_TYPE_ID(B), (unsigned long long)CAIRN_TYPE_ID(VB),\n"
        "  (unsigned long long)CAIRN_TYPE_ID(Box<int>), (unsigned long long)CAIRN_TYPE_ID(Box<long>)); }\n")
    a = run([build(cairn_cxx, src, tmp_path / "a")]).stdout.split()
    b = run([build(cairn_cxx, src, tmp_path / "b", "-DBIG")]).stdout.split()
    assert len(a) == 4 and a[0] != b[0] and a[1] != b[1]      # a base changed
    assert a[2] == b[2] and a[2] != a[3]                      # templates by their layout


def test_cairn_cxx_help_and_c_driver_hint(cairn_cxx):
    r = subprocess.run([str(cairn_cxx), "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith("usage: cairn-c++")


def test_atomics_static_initializers_and_thread_local(cairn_cxx, tmp_path, pool_path):
    """std::atomic<long> and std::atomic<Node *> in a pool from two threads
    (fetch_add, compare_exchange of a relative pointer), aborted by an
    exception, then reopened; a static std::map and a thread_local vector."""
    exe = build(cairn_cxx, CXX_DIR / "atomics.cpp", tmp_path / "atom", "-std=c++17", "-O2",
                "-pthread")
    want = "count 1000 nodes 1000 sum 249500 table 3 scratch 0"
    for mode in ("create", "open"):
        r = run([exe, mode, pool_path])
        assert r.returncode == 0 and r.stdout.strip() == want, r.stdout + r.stderr
    heap = build(cairn_cxx, CXX_DIR / "atomics.cpp", tmp_path / "atomh", "-std=c++17", "-O2",
                 "-pthread", "--persistent-heap")
    r = run([heap, "create", str(pool_path) + ".2"])
    assert r.returncode == 0 and r.stdout.strip() == want, r.stdout + r.stderr


@pytest.mark.parametrize("what,args", [
    ("boost", ["--records", "300", "--ops", "2000", "--only", "ll,hash,splay,sg"]),
    ("knn", ["--repeat", "2"]),
])
def test_seed002_workloads_run_and_agree(cairn_cxx, tmp_path, what, args):
    """bench/cxx/run.py builds the original and its pool port, runs them and
    stops if any build's result differs from the volatile program's."""
    import json
    import sys
    out = tmp_path / "r.json"
    r = subprocess.run([sys.executable, str(HERE.parents[1] / "bench" / "cxx" / "run.py"), what,
                        "--rounds", "1", "--json", str(out), *args,
                        "--build", str(BUILD)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    d = json.loads(out.read_text())
    assert d["rows"] and all(row["cairn-c++ PM s"] > 0 for row in d["rows"])
    assert 0 < d["changed_lines"] <= (24 if what == "boost" else 8)
