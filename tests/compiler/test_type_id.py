"""CAIRN_TYPE_ID under cairn-cc: a checksum of the type's layout computed by
the CairnTypeId clang plugin (docs/compiler.md, "Type ids").

Layout sensitivity is checked on ids printed by --cairn-print-type-ids
(-fsyntax-only, no link); the programs in programs/typeid check that the
ids compiled into binaries are the printed ones, equal across files and
flags, and that a pool's root refuses a program whose root layout differs."""
import re
import subprocess

import pytest

from conftest import BUILD, CLANG, HERE, ROOT, build, run, sanitize_flags

PROGS = HERE / "programs" / "typeid"
REMARK = re.compile(r"remark: CAIRN_TYPE_ID\((.+?)\) = (0x[0-9a-f]+) from (\S+ .*)$", re.M)
WARNINGS = ["-Wall", "-Wextra", "-Wcomma", "-pedantic", "-Werror"]


def fnv1a_layout_id(text: str) -> int:
    """The id docs/compiler.md defines: FNV-1a 64 of the text, low bits 10."""
    h = 0xcbf29ce484222325
    for b in text.encode():
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return (h & ~3) | 2


def printed_ids(cairn_cc, src, *flags):
    """[(type, id, layout text)] for every CAIRN_TYPE_ID in src, in order."""
    r = subprocess.run([str(cairn_cc), "-fsyntax-only", "--cairn-print-type-ids",
                        *flags, str(src)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return [(t, int(i, 16), text) for t, i, text in REMARK.findall(r.stderr)]


def type_id(cairn_cc, tmp_path, defs, typ="struct t"):
    src = tmp_path / f"t{len(list(tmp_path.iterdir()))}.c"
    src.write_text(f"#include <cairn.h>\n{defs}\n"
                   f"uint64_t id(void) {{ return CAIRN_TYPE_ID({typ}); }}\n")
    (entry,) = printed_ids(cairn_cc, src)
    return entry[1]


BASE = "struct t { int a; unsigned b; char c[4]; struct t *next; };"
CHANGED = {
    "field renamed": "struct t { int x; unsigned b; char c[4]; struct t *next; };",
    "fields swapped": "struct t { unsigned b; int a; char c[4]; struct t *next; };",
    "signedness": "struct t { unsigned a; unsigned b; char c[4]; struct t *next; };",
    "int to float": "struct t { float a; unsigned b; char c[4]; struct t *next; };",
    "array length": "struct t { int a; unsigned b; char c[8]; struct t *next; };",
    "char signedness": "struct t { int a; unsigned b; unsigned char c[4]; struct t *next; };",
    "tag renamed": "struct u { int a; unsigned b; char c[4]; struct u *next; };\n"
                   "typedef struct u t_;",
    "pointer to other type": "struct t { int a; unsigned b; char c[4]; long *next; };",
    "packed": "struct __attribute__((packed)) t { int a; unsigned b; char c[4]; struct t *next; };",
    "aligned field": "struct t { int a; unsigned b; _Alignas(16) char c[4]; struct t *next; };",
    "union": "union t { int a; unsigned b; char c[4]; union t *next; };",
}
NESTED_BASE = ("enum e { A, B = 2 };\nstruct in { short s : 3; unsigned short u : 5; enum e k; };\n"
               "struct far { long v; };\n"
               "struct t { struct in in; union { struct far *f; long l; } u; };")
NESTED_CHANGED = {
    "bit-field width": NESTED_BASE.replace("s : 3", "s : 4"),
    "bit-field signedness": NESTED_BASE.replace("short s", "unsigned short s"),
    "enum value": NESTED_BASE.replace("B = 2", "B = 3"),
    "enumerator renamed": NESTED_BASE.replace("B = 2", "C = 2"),
    "anonymous union member renamed": NESTED_BASE.replace("long l;", "long m;"),
    "pointed-to struct's field": NESTED_BASE.replace("long v;", "unsigned long v;"),
}
SAME = {
    "typedef name for the tag": (BASE + "\ntypedef struct t T;", "T"),
    "qualifiers": ("struct t { const int a; volatile unsigned b; char c[4]; "
                   "struct t *const next; };", "struct t"),
    "cairn_pm pointee": ("struct t { int a; unsigned b; char c[4]; struct t cairn_pm *next; };",
                         "struct t"),
    "spelling of the same integer": ("struct t { signed int a; unsigned int b; char c[4]; "
                                     "struct t *next; };", "struct t"),
    "unrelated declarations around": ("struct other { double d; };\n" + BASE +
                                      "\nenum { X = 7 };\nstatic int unused_v;", "struct t"),
}


@pytest.mark.parametrize("change", sorted(CHANGED))
def test_layout_change_changes_the_id(cairn_cc, tmp_path, change):
    typ = "t_" if change == "tag renamed" else ("union t" if change == "union" else "struct t")
    assert type_id(cairn_cc, tmp_path, BASE) != type_id(cairn_cc, tmp_path, CHANGED[change], typ)


@pytest.mark.parametrize("change", sorted(NESTED_CHANGED))
def test_nested_change_changes_the_id(cairn_cc, tmp_path, change):
    assert (type_id(cairn_cc, tmp_path, NESTED_BASE)
            != type_id(cairn_cc, tmp_path, NESTED_CHANGED[change]))


@pytest.mark.parametrize("case", sorted(SAME))
def test_same_layout_same_id(cairn_cc, tmp_path, case):
    defs, typ = SAME[case]
    assert type_id(cairn_cc, tmp_path, BASE) == type_id(cairn_cc, tmp_path, defs, typ)


def test_long_and_long_long_lay_out_the_same(cairn_cc, tmp_path):
    assert (type_id(cairn_cc, tmp_path, "struct t { long a; unsigned long b; };")
            == type_id(cairn_cc, tmp_path, "struct t { long long a; uint64_t b; };"))


def test_id_is_the_documented_checksum_of_the_layout_text(cairn_cc):
    ids = printed_ids(cairn_cc, PROGS / "ids.c")
    assert len(ids) == 7
    for typ, ident, text in ids:
        assert text.startswith("cairn-layout-1 ")
        assert ident == fnv1a_layout_id(text), typ
        assert ident & 3 == 2, "cairn-cc ids are even, plain-C ids odd"
    texts = {t: x for t, _, x in ids}
    # the self-referential pointers end at a back-reference to the node itself
    assert texts["struct node"] == ("cairn-layout-1 S:node:24:8{next@0=p64#0;prev@64=p64#0;"
                                    "val@128=i64s;}")
    assert "U:value:8:8{" in texts["union value"] and "raw@0=U::8:8{" in texts["union value"]
    assert "depth@64:5=i32u;bias@69:3=i8s;" in texts["struct tree"]
    assert texts["enum colour"] == "cairn-layout-1 E:colour:i32s{RED=0;GREEN=4;BLUE=-1;}"
    assert texts["point_t"].startswith("cairn-layout-1 S:point_t:8:4{")


def parse_ids(out):
    main, other = {}, {}
    for line in out.splitlines():
        *name, ident = line.split()
        if name[0] == "other":
            other[" ".join(name[1:])] = int(ident, 16)
        else:
            main[" ".join(name)] = int(ident, 16)
    return main, other


@pytest.mark.parametrize("flags_main,flags_other", [
    (["-O0", "-g"], ["-O2"]),
    (["-O3"], ["-O1", "-g"]),
    (["-O2", "-fno-cairn"], ["-O0", "-fno-cairn"]),
], ids=["O0g+O2", "O3+O1g", "no-cairn"])
def test_same_types_same_ids_across_files_and_flags(cairn_cc, runtime, tmp_path,
                                                    flags_main, flags_other):
    def obj(name, flags):
        out = tmp_path / f"{name}.o"
        r = subprocess.run([str(cairn_cc), *flags, *WARNINGS, "-c", str(PROGS / f"{name}.c"),
                            "-o", str(out)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        return out
    prog = tmp_path / "ids"
    build(cairn_cc, obj("ids", flags_main), prog, obj("ids_other", flags_other))
    r = run([prog])
    assert r.returncode == 0, r.stderr
    main, other = parse_ids(r.stdout)
    printed = {t: i for t, i, _ in printed_ids(cairn_cc, PROGS / "ids.c")}
    assert main == printed                              # what the binary holds
    assert {k: other[k] for k in main} == main           # the other file agrees
    assert other["static struct node"] == main["struct node"]
    assert 0 not in main.values()


def build_root(compiler, tmp_path, variant):
    return build(compiler, PROGS / "root.c", tmp_path / f"root{variant}", "-O2", *WARNINGS,
                 f"-DVARIANT={variant}")


def build_root_plain(runtime, tmp_path, variant):
    """root.c by plain clang, linked with libcairn (libraries after the source)."""
    out = tmp_path / f"root{variant}-clang"
    r = subprocess.run([str(CLANG), "-std=c11", "-O2", *sanitize_flags(), *WARNINGS,
                        f"-DVARIANT={variant}",
                        f"-I{ROOT / 'include'}", str(PROGS / "root.c"), "-o", str(out),
                        f"-L{runtime}", "-lcairn", f"-Wl,-rpath,{runtime}", "-lpthread"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return out


def id_and_size(out):
    m = re.fullmatch(r"id=(0x[0-9a-f]+) size=(\d+)\n", out)
    assert m, out
    return int(m.group(1), 16), int(m.group(2))


@pytest.mark.parametrize("variant,what", [
    (1, "a field renamed"), (2, "two fields swapped"), (3, "a field's signedness"),
    (4, "a field of the pointed-to struct"),
])
def test_root_with_other_layout_is_refused(cairn_cc, runtime, tmp_path, pool_path,
                                           variant, what):
    original = build_root(cairn_cc, tmp_path, 0)
    changed = build_root(cairn_cc, tmp_path, variant)
    made = run([original, pool_path, "create"])
    assert made.returncode == 0, made.stderr
    again = run([original, pool_path, "open"])
    assert again.returncode == 0, again.stderr
    assert again.stdout == made.stdout
    refused = run([changed, pool_path, "open"])
    assert refused.returncode == 3, (what, refused.stdout, refused.stderr)
    assert "the root's type changed since the pool was made" in refused.stderr
    assert "plain C compiler" not in refused.stderr
    # same name and size: only the layout tells them apart
    made_id, made_size = id_and_size(made.stdout)
    probe = run([changed, tmp_path / "fresh.pool", "create"])
    assert probe.returncode == 0, probe.stderr
    changed_id, changed_size = id_and_size(probe.stdout)
    (tmp_path / "fresh.pool").unlink()
    assert made_size == changed_size and made_id != changed_id
    assert f"{made_id:#x}" in refused.stderr and f"{changed_id:#x}" in refused.stderr


def test_plain_clang_keeps_the_basic_id(cairn_cc, runtime, tmp_path, pool_path):
    plain = build_root_plain(runtime, tmp_path, 0)
    made = run([plain, pool_path, "create"])
    assert made.returncode == 0, made.stderr
    again = run([plain, pool_path, "open"])
    assert again.returncode == 0, again.stderr
    ident, _ = id_and_size(made.stdout)
    assert ident & 1, "plain-C ids are odd"
    # the plain-C id sees only the name, size and alignment (its known limit)
    renamed = build_root_plain(runtime, tmp_path, 1)
    assert run([renamed, pool_path, "open"]).returncode == 0
    # a cairn-cc build of the same source has a layout id: refused, and told why
    refused = run([build_root(cairn_cc, tmp_path, 0), pool_path, "open"])
    assert refused.returncode == 3
    assert "the root's type changed since the pool was made" in refused.stderr
    assert "built by cairn-cc and the other by a plain C compiler" in refused.stderr


def compile_errors(cairn_cc, tmp_path, text, *flags):
    src = tmp_path / "bad.c"
    src.write_text(text)
    return subprocess.run([str(cairn_cc), "-fsyntax-only", *flags, str(src)],
                          capture_output=True, text=True)


@pytest.mark.parametrize("use", [
    "enum { E = CAIRN_TYPE_ID(struct s) & 1 };",
    "_Static_assert(CAIRN_TYPE_ID(struct s) != 1, \"\");",
    "int f(uint64_t x) { switch (x) { case CAIRN_TYPE_ID(struct s): return 1; } return 0; }",
    "int f(void) { char b[(CAIRN_TYPE_ID(struct s) & 1) + 1]; return (int)sizeof b; }",
    "struct bf { int x : (CAIRN_TYPE_ID(struct s) & 3) + 1; };",
    "int al __attribute__((aligned((CAIRN_TYPE_ID(struct s) & 8) + 8)));",
], ids=["enum", "static_assert", "case", "array size", "bit-field", "aligned"])
def test_use_while_parsing_is_an_error(cairn_cc, tmp_path, use):
    r = compile_errors(cairn_cc, tmp_path, f"#include <cairn.h>\nstruct s {{ int a; }};\n{use}\n")
    assert r.returncode != 0
    assert "CAIRN_TYPE_ID(struct s) is used where C needs its value while parsing" in r.stderr


def test_incomplete_type_is_an_error(cairn_cc, tmp_path):
    r = compile_errors(cairn_cc, tmp_path, "#include <cairn.h>\nstruct fwd;\n"
                       "uint64_t f(void) { return CAIRN_TYPE_ID(struct fwd); }\n")
    assert r.returncode != 0
    assert "CAIRN_TYPE_ID(struct fwd): the type is incomplete" in r.stderr


def test_incomplete_pointee_warns(cairn_cc, tmp_path):
    text = ("#include <cairn.h>\nstruct later;\nstruct r { struct later *p; };\n"
            "uint64_t f(void) { return CAIRN_TYPE_ID(struct r); }\n"
            "struct later { int x; };\n")
    r = compile_errors(cairn_cc, tmp_path, text)
    assert r.returncode == 0, r.stderr
    assert "struct later is not defined at this point" in r.stderr
    # what the warning says: a file that defines it first gets another id
    late = type_id(cairn_cc, tmp_path, "struct later;\nstruct r { struct later *p; };", "struct r")
    early = type_id(cairn_cc, tmp_path, "struct later { int x; };\nstruct r { struct later *p; };",
                    "struct r")
    assert late != early


def test_marker_without_the_plugin_stops_the_build(tmp_path):
    r = subprocess.run([str(CLANG), "-D__CAIRN_CC__", f"-I{ROOT / 'include'}", "-fsyntax-only",
                        str(PROGS / "ids.c")], capture_output=True, text=True)
    assert r.returncode != 0
    assert "unknown attribute 'cairn_layout_id'" in r.stderr
    assert "CairnTypeId.so is not loaded" in r.stderr     # the header line, shown


def test_preprocessed_file_keeps_the_marker(cairn_cc, tmp_path):
    pre = tmp_path / "ids.i"
    r = subprocess.run([str(cairn_cc), "-E", str(PROGS / "ids.c"), "-o", str(pre)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "_Generic((__typeof__(struct node) *)0" in pre.read_text()
    assert "cairn__type_id_basic(\"" not in pre.read_text()
    assert ([i for _, i, _ in printed_ids(cairn_cc, pre)]
            == [i for _, i, _ in printed_ids(cairn_cc, PROGS / "ids.c")])
    plain = subprocess.run([str(CLANG), "-fsyntax-only", str(pre)], capture_output=True, text=True)
    assert plain.returncode != 0 and "unknown attribute 'cairn_layout_id'" in plain.stderr


def test_file_preprocessed_by_plain_clang_warns(cairn_cc, tmp_path):
    pre = tmp_path / "ids.i"
    r = subprocess.run([str(CLANG), "-E", f"-I{ROOT / 'include'}", str(PROGS / "ids.c"),
                        "-o", str(pre)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([str(cairn_cc), "-fsyntax-only", str(pre)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "plain-C type id (cairn__type_id_basic) in a cairn-cc build" in r.stderr


def test_config_names_the_type_id_plugin(cairn_cc):
    out = subprocess.run([str(cairn_cc), "--cairn-config"], capture_output=True,
                         text=True).stdout
    assert f"type ids: {BUILD / 'compiler' / 'CairnTypeId.so'}" in out


@pytest.mark.parametrize("flag,want", [("-Werror", "error: CAIRN_TYPE_ID"), ("-w", None)])
def test_plugin_warnings_follow_werror_and_w(cairn_cc, tmp_path, flag, want):
    """clang 19 does not map a plugin's own diagnostics; the plugin applies
    -Werror and -w itself (the incomplete-pointee warning predicts a root
    refused later, so -Werror builds must stop on it)."""
    text = ("#include <cairn.h>\nstruct later;\nstruct r { struct later *p; };\n"
            "uint64_t f(void) { return CAIRN_TYPE_ID(struct r); }\n")
    r = compile_errors(cairn_cc, tmp_path, text, flag)
    if want:
        assert r.returncode != 0 and want in r.stderr, r.stderr
    else:
        assert r.returncode == 0 and r.stderr == "", r.stderr


@pytest.mark.parametrize("flags", [
    ["-std=c89", "-pedantic", "-Werror"],
    ["-ansi", "-pedantic", "-Werror"],
    ["-std=c99", "-pedantic", "-Werror"],
    ["-Weverything", "-Werror"],
])
@pytest.mark.parametrize("compiler", ["clang", "cairn-cc"])
def test_header_is_quiet_under_strict_flags(cairn_cc, tmp_path, flags, compiler):
    """cairn.h is a library's header: a user's strict flags are for the
    user's code (it was: `inline` unknown in C89, _Generic and _Alignof
    flagged by -Weverything, C99 for-declarations)."""
    src = tmp_path / "strict.c"
    src.write_text("#include <cairn.h>\nstruct s { int a; };\n"
                   "uint64_t f(void);\nvoid *g(cairn_pool *p);\n"
                   "uint64_t f(void) { return CAIRN_TYPE_ID(struct s); }\n"
                   "void *g(cairn_pool *p) { return cairn_alloc(p, 8); }\n")
    cmd = ([str(CLANG), f"-I{ROOT / 'include'}"] if compiler == "clang" else [str(cairn_cc)])
    r = subprocess.run([*cmd, *flags, "-c", str(src), "-o", str(tmp_path / "s.o")],
                       capture_output=True, text=True)
    assert r.returncode == 0 and r.stderr == "", r.stderr
