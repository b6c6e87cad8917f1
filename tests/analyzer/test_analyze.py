"""cairn analyze on small file-persisting C programs with known answers.

Each program under programs/ saves its state to a file and loads it back;
TRUTH lists, per program, its load function and the persistent types (a set
of names is one type with layout variants). The tests check recall (no
false negatives, ever) and precision against these labels; NVMOVE's own
figures on its own subject (Redis 3.2) are compared in test_redis_truth.py.
Run with CAIRN_BUILD set to the build directory (default ./build)."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
BUILD = Path(os.environ.get("CAIRN_BUILD", ROOT / "build"))
TOOL = BUILD / "analyzer" / "cairn-analyze"

TRUTH = {
    "kvsnap": {
        "files": ["table.c", "snapshot.c"],
        "load": "kv_load_snapshot",
        "persistent": [{"struct kv_store"}, {"struct kv_table"}, {"struct kv_entry"}],
    },
    "logstore": {
        "files": ["logstore.c"],
        "load": "replay_log",
        "persistent": [{"struct logstore"}, {"struct index_entry"}, {"struct key_hdr"},
                       {"struct value_blob8", "struct value_blob32"}],
    },
    "callbacks": {
        "files": ["confdb.c", "handlers.c"],
        "load": "confdb_load",
        "persistent": [{"struct confdb"}, {"struct setting"}, {"struct session"},
                       {"struct session_note"}],
    },
}

pytestmark = pytest.mark.skipif(not TOOL.exists(), reason=f"{TOOL} is not built")


# Programs written for one defect each, outside TRUTH's recall and precision sums.
PROBES = {
    "statics": {"files": ["a.c", "b.c"], "load": "table_load"},
    "sametag": {"files": ["a.c", "b.c"], "load": "store_load"},
    "ptrfield": {"files": ["db.c"], "load": "db_load"},
    "ptrchain": {"files": ["snap.c"], "load": "snap_load"},
}


def program(name: str) -> dict:
    return TRUTH.get(name) or PROBES[name]


def database(tmp_path: Path, name: str) -> Path:
    src = HERE / "programs" / name
    entries = [{"directory": str(src), "file": str(src / f),
                "arguments": ["cc", "-std=gnu11", "-c", f]} for f in program(name)["files"]]
    out = tmp_path / name
    out.mkdir()
    (out / "compile_commands.json").write_text(json.dumps(entries))
    return out


def analyze(tmp_path: Path, name: str, *extra: str) -> dict:
    db = database(tmp_path, name)
    res = subprocess.run([str(TOOL), "--load", program(name)["load"], "-p", str(db), "--json", *extra],
                         capture_output=True, text=True, check=True)
    return json.loads(res.stdout)


def score(report: dict, truth: list, min_confidence: float = 0.0) -> dict:
    """Counts as the NVMOVE paper does: each reported entry is a TP if it is
    (a variant of) a persistent type not matched before, else an FP."""
    matched = set()
    tp = fp = 0
    for t in report["types"]:
        if not t["reported"] or t["confidence"] < min_confidence:
            continue
        names = {t["name"], *t["variants"]}
        hit = next((i for i, s in enumerate(truth) if s & names and i not in matched), None)
        if hit is None:
            fp += 1
        else:
            matched.add(hit)
            tp += 1
    return {"tp": tp, "fp": fp, "fn": len(truth) - len(matched)}


@pytest.mark.parametrize("name", sorted(TRUTH))
def test_no_false_negatives(tmp_path, name):
    s = score(analyze(tmp_path, name), TRUTH[name]["persistent"])
    assert s["fn"] == 0, s


@pytest.mark.parametrize("name", sorted(TRUTH))
def test_confident_list_is_exact(tmp_path, name):
    """At confidence >= 0.5 (medium and high) the list is exactly the truth."""
    s = score(analyze(tmp_path, name), TRUTH[name]["persistent"], min_confidence=0.5)
    assert s == {"tp": len(TRUTH[name]["persistent"]), "fp": 0, "fn": 0}


def test_precision_and_recall_totals(tmp_path):
    """Summed over the labelled programs: every persistent type found, and
    at most 2 false positives in the 13 entries reported (both ranked
    below 0.5: test_confident_list_is_exact)."""
    tot = {"tp": 0, "fp": 0, "fn": 0}
    for name in TRUTH:
        s = score(analyze(tmp_path, name), TRUTH[name]["persistent"])
        for k in tot:
            tot[k] += s[k]
    precision = tot["tp"] / (tot["tp"] + tot["fp"])
    recall = tot["tp"] / (tot["tp"] + tot["fn"])
    print(f"\ncairn {tot}: precision {precision:.2f}, recall {recall:.2f}")
    assert recall == 1.0
    assert precision >= 11 / 13


@pytest.mark.parametrize("name", ["kvsnap", "callbacks", "statics", "sametag"])
def test_two_parser_threads_report_what_one_does(tmp_path, name):
    """-j 2 parses the two files on two worker threads (collectFacts), each
    into its own facts, merged after the join: the report is the one -j 1
    makes but for the time taken. scripts/test.sh runs this under TSan."""
    def report(j):
        r = analyze(tmp_path / f"j{j}", name, "-j", j)
        assert r["stats"]["translation_units"] == 2
        del r["stats"]["seconds"]
        return r
    (tmp_path / "j1").mkdir()
    (tmp_path / "j2").mkdir()
    assert report("2") == report("1")


def test_parser_threads_share_many_files(tmp_path):
    """Nine files on two workers (collectFacts deals them out in turn): the
    load reaches a type defined in each of eight, and the -j 2 report is the
    -j 1 one. Enough files that, under TSan, a worker's unguarded shared
    write (the progress count) is reported on every run."""
    src = tmp_path / "many"
    src.mkdir()
    n = 8
    for k in range(n):
        (src / f"part{k}.c").write_text(
            f"void *malloc(unsigned long);\nstruct rec{k} {{ long v; }};\nstruct rec{k} *slot{k};\n"
            f"void fill{k}(long v) {{ slot{k} = malloc(sizeof *slot{k}); slot{k}->v = v; }}\n")
    (src / "load.c").write_text(
        "".join(f"void fill{k}(long v);\n" for k in range(n)) +
        "void load_all(void) {\n" + "".join(f"  fill{k}({k});\n" for k in range(n)) + "}\n")
    files = [f"part{k}.c" for k in range(n)] + ["load.c"]
    (src / "compile_commands.json").write_text(json.dumps(
        [{"directory": str(src), "file": str(src / f), "arguments": ["cc", "-c", f]}
         for f in files]))

    def report(j):
        res = subprocess.run([str(TOOL), "--load", "load_all", "-p", str(src), "--json", "-j", j],
                             capture_output=True, text=True)
        assert res.returncode == 0, res.stderr
        r = json.loads(res.stdout)
        assert r["stats"]["translation_units"] == n + 1
        del r["stats"]["seconds"]
        return r
    two = report("2")
    reported = {t["name"] for t in two["types"] if t["reported"]}
    assert reported == {f"struct rec{k}" for k in range(n)}
    assert two == report("1")


def test_iterators_stack_only_and_variants(tmp_path):
    r = {t["name"]: t for t in analyze(tmp_path, "logstore")["types"]}
    assert "iterator" in r["struct replay_cursor"]["drop_reason"]
    assert "stack-only" in r["struct rec_header"]["drop_reason"]
    folded = [t for t in r.values() if t["reported"] and t["variants"]]
    assert len(folded) == 1
    assert {folded[0]["name"], *folded[0]["variants"]} == {"struct value_blob8", "struct value_blob32"}


def test_function_pointers_followed(tmp_path):
    r = analyze(tmp_path, "callbacks")
    setting = next(t for t in r["types"] if t["name"] == "struct setting")
    chain = [s["function"] for s in setting["evidence"][0]["chain"]]
    assert chain == ["confdb_load", "dispatch", "setting_load"]
    assert r["stats"]["indirect_resolved_by_points_to"] >= 1
    ops = next(t for t in r["types"] if t["name"] == "struct record_ops")
    assert ops["confidence"] < 0.5  # a dispatch table, ranked low


def test_evidence_chain_and_suggest(tmp_path):
    r = analyze(tmp_path, "kvsnap", "--suggest")
    entry = next(t for t in r["types"] if t["name"] == "struct kv_entry")
    ev = entry["evidence"][0]
    assert [s["function"] for s in ev["chain"]] == ["kv_load_snapshot", "kv_put"]
    assert ev["chain"][1]["call_site"]["file"].endswith("snapshot.c")
    assert ev["statement"]["file"].endswith("table.c") and ev["statement"]["line"] > 0
    assert entry["write_back"], "write_blob(f, e->key, ...) reaches fwrite"
    allocs = [a for a in entry["allocation_sites"] if a["kind"] == "alloc" and a["allocator"] == "malloc"]
    assert any("sizeof(struct kv_entry)" in a["text"] for a in allocs)
    assert all("cairn_alloc" in a["change"] for a in allocs)
    store = next(t for t in r["types"] if t["name"] == "struct kv_store")
    assert any(a["allocator"] == "calloc" for a in store["allocation_sites"])


def test_text_report_and_cli(tmp_path):
    db = database(tmp_path, "kvsnap")
    env = dict(os.environ, CAIRN_BUILD=str(BUILD), PYTHONPATH=str(ROOT / "python"))
    out = subprocess.run([sys.executable, "-m", "cairn.cli", "analyze", "--load", "kv_load_snapshot",
                          "-p", str(db)], capture_output=True, text=True, env=env, check=True).stdout
    assert "struct kv_entry" in out and "evidence: kv_load_snapshot -> kv_put" in out
    assert "Dropped candidates" in out and "struct kv_iter: iterator" in out


def test_missing_load_function_is_an_error(tmp_path):
    db = database(tmp_path, "kvsnap")
    res = subprocess.run([str(TOOL), "--load", "no_such_fn", "-p", str(db)], capture_output=True, text=True)
    assert res.returncode == 3 and "no_such_fn" in res.stdout + res.stderr


def test_wide_slots_are_named_not_followed(tmp_path):
    """A slot with more targets than --max-targets (a command table) is cut,
    and the report says so instead of silently losing what lies behind it."""
    r = analyze(tmp_path, "callbacks", "--max-targets", "1")
    assert r["not_followed"] == {"field:struct record_ops::load": 3}
    assert "struct setting" not in {t["name"] for t in r["types"]}


@pytest.mark.skipif(not shutil.which("bear") or not shutil.which("make"), reason="needs bear and make")
def test_one_command_from_a_makefile(tmp_path):
    """`cairn analyze --make` builds under bear, then analyzes: one command."""
    src = tmp_path / "kv"
    shutil.copytree(HERE / "programs" / "kvsnap", src)
    (src / "Makefile").write_text("kvsnap: table.o snapshot.o\n\t$(CC) -o $@ $^\n")
    env = dict(os.environ, CAIRN_BUILD=str(BUILD), PYTHONPATH=str(ROOT / "python"))
    res = subprocess.run([sys.executable, "-m", "cairn.cli", "analyze", "--make", "--load",
                          "kv_load_snapshot", "-p", str(src), "--json"],
                         capture_output=True, text=True, env=env)
    assert res.returncode == 0, res.stderr
    assert (src / "compile_commands.json").exists()
    names = {t["name"] for t in json.loads(res.stdout)["types"] if t["reported"]}
    assert {"struct kv_store", "struct kv_table", "struct kv_entry"} <= names


def test_types_behind_void_pointers_are_not_iterators(tmp_path):
    """session_note points into a persistent type and no typed field holds
    it, but it is stored through void * (Redis' robj->ptr): not an iterator."""
    r = {t["name"]: t for t in analyze(tmp_path, "callbacks")["types"]}
    assert r["struct session_note"]["reported"]
    assert not r["struct line_reader"]["reported"]


def test_translation_units_with_errors_are_reported(tmp_path):
    """A database without the -I a file needs: the TU's facts are partial.
    It was silent (diagnostics ignored, 0 TUs with errors, exit 0); now the
    summary counts it and one warning names the first error and the fix."""
    (tmp_path / "include").mkdir()
    (tmp_path / "include" / "st.h").write_text("struct rec { int a; int b; };\n")
    (tmp_path / "m.c").write_text('#include "st.h"\n#include <stdlib.h>\nstruct rec *root;\n'
                                  "void load(void) { root = malloc(sizeof *root); root->a = 1; }\n")
    (tmp_path / "compile_commands.json").write_text(json.dumps(
        [{"directory": str(tmp_path), "file": "m.c", "arguments": ["cc", "-c", "m.c"]}]))
    r = subprocess.run([str(TOOL), "--load", "load", "-p", str(tmp_path)],
                       capture_output=True, text=True)
    assert "1 with errors" in r.stdout, r.stdout
    warn = [ln for ln in r.stderr.splitlines() if "had compile errors" in ln]
    assert len(warn) == 1 and "'st.h' file not found" in warn[0] and "-I" in warn[0], r.stderr
    assert "error generated" not in r.stderr
    # with the -I the same file is clean and its type is found
    (tmp_path / "compile_commands.json").write_text(json.dumps(
        [{"directory": str(tmp_path), "file": "m.c", "arguments": ["cc", "-Iinclude", "-c", "m.c"]}]))
    r = subprocess.run([str(TOOL), "--load", "load", "-p", str(tmp_path)],
                       capture_output=True, text=True)
    assert "with errors" not in r.stdout and "had compile errors" not in r.stderr
    assert "struct rec" in r.stdout


def test_static_functions_of_the_same_name_stay_apart(tmp_path):
    """a.c and b.c each define a static reset(). They were one entry keyed by
    name, so the load path 'reached' b.c's reset() and reported the struct
    it clears, with an evidence chain into the wrong file."""
    r = analyze(tmp_path, "statics")
    names = {t["name"] for t in r["types"]}
    assert "struct scratch" not in names, names
    table = next(t for t in r["types"] if t["name"] == "struct table")
    chains = [[s["function"] for s in e["chain"]] for e in table["evidence"]]
    assert ["table_load", "reset (a.c)"] in chains, chains
    assert all(e["statement"]["file"] == "a.c" for e in table["evidence"])
    assert "reset (b.c)" not in r["visited"] and "reset (a.c)" in r["visited"]


def test_same_tag_in_two_files_is_two_types(tmp_path):
    """a.c's struct rec (a record list) and b.c's struct rec (a file header in
    a local) are different types; they were merged into one entry."""
    recs = [t for t in analyze(tmp_path, "sametag")["types"] if t["name"].startswith("struct rec")]
    by_file = {t["defined_at"]["file"]: t for t in recs}
    assert sorted(by_file) == ["a.c", "b.c"], [t["name"] for t in recs]
    assert by_file["a.c"]["name"] == "struct rec (a.c:7)"
    assert by_file["a.c"]["reported"] and by_file["a.c"]["confidence"] >= 0.5
    assert not by_file["b.c"]["reported"] and "stack-only" in by_file["b.c"]["drop_reason"]


def test_written_pointer_field_credits_the_pointed_to_type(tmp_path):
    """fwrite(D->r, ...) writes the struct rec that D->r points to, not D."""
    r = {t["name"]: t for t in analyze(tmp_path, "ptrfield")["types"]}
    assert r["struct rec"]["write_back_direct"]
    assert r["struct rec"]["write_back"][0]["sink"] == "fwrite"
    # struct db is the way to the records: it reaches the write as their
    # holder (evidence, +0.20), it is not written itself (no direct credit)
    assert not r["struct db"]["write_back_direct"]
    assert r["struct db"]["write_back"][0]["sink"] == "fwrite"
    assert any("pointer field" in x for x in r["struct db"]["reasons"])


@pytest.mark.parametrize("name", sorted({**TRUTH, **PROBES}))
def test_level_agrees_with_the_printed_confidence(tmp_path, name):
    """The level is the band of the confidence as printed (Redis had 0.5
    printed with level "low": 0.49999999999999994 inside)."""
    for t in analyze(tmp_path, name)["types"]:
        c = t["confidence"]
        if t["level"] == "nvmove" or t.get("drop_reason"):
            continue                                 # no level: not scored
        assert t["level"] == ("high" if c >= 0.75 else "medium" if c >= 0.5 else "low"), t


def test_holders_keep_the_chain_through_locals(tmp_path):
    """ix = S->ix; r = ix->first; put(f, r): the records reach fwrite one
    call away, and the structs they are reached through keep that evidence
    (the scan of `ix->first` still records the local ix it comes from)."""
    r = {t["name"]: t for t in analyze(tmp_path, "ptrchain")["types"]}
    for name in ("struct rec", "struct idx", "struct snap"):
        assert r[name]["write_back"] and r[name]["write_back"][0]["sink"] == "fwrite", name
    assert not r["struct snap"]["write_back_direct"]
    # an anonymous type is named by its place, written as every other path
    anon = [n for n in r if n.startswith("(anonymous struct at ")]
    assert anon == ["(anonymous struct at snap.c:21)"], list(r)
    assert r[anon[0]]["defined_at"]["file"] == "snap.c"


def run_tool(db: Path, load: str, *extra: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([str(TOOL), "--load", load, "-p", str(db), *extra],
                          capture_output=True, text=True, cwd=cwd)


def one_file_database(tmp_path: Path, source: str) -> Path:
    (tmp_path / "m.c").write_text(source)
    (tmp_path / "compile_commands.json").write_text(json.dumps(
        [{"directory": str(tmp_path), "file": "m.c", "arguments": ["cc", "-c", "m.c"]}]))
    return tmp_path


def test_long_evidence_chain_is_marked_where_cut(tmp_path):
    """A chain over 1000 calls was cut at 1000 without a word: the load
    function vanished from its head. The cut now shows how much is left out."""
    depth = 1100
    src = ["struct s { int v; };", f"void f{depth}(struct s *p) {{ p->v = 1; }}"]
    src += [f"void f{i}(struct s *p) {{ f{i + 1}(p); }}" for i in range(depth - 1, -1, -1)]
    src.append("void load(struct s *p) { f0(p); }")
    db = one_file_database(tmp_path, "\n".join(src) + "\n")
    r = json.loads(run_tool(db, "load", "--json").stdout)
    s = next(t for t in r["types"] if t["name"] == "struct s")
    chain = s["evidence"][0]["chain"]
    assert chain[0]["function"] == "load" and chain[-1]["function"] == f"f{depth}"
    cut = [step for step in chain if "omitted_calls" in step]
    assert len(cut) == 1 and cut[0]["omitted_calls"] + len(chain) - 1 == depth + 2, cut
    assert len(chain) <= 1001
    assert any(f"nearest write is {depth + 1} calls" in why for why in s["reasons"]), s["reasons"]
    text = run_tool(db, "load").stdout
    assert f"... {cut[0]['omitted_calls']} calls omitted ..." in text


def test_deep_member_path_is_marked_where_cut(tmp_path):
    """p->in.in...in.v with 40 levels: the walk stops at 32 and says so."""
    levels = 40
    src = ["struct s0 { int v; };"]
    src += [f"struct s{i} {{ struct s{i - 1} in; }};" for i in range(1, levels + 1)]
    src.append(f"void load(struct s{levels} *p) {{ p->{'.'.join(['in'] * levels)}.v = 1; }}")
    db = one_file_database(tmp_path, "\n".join(src) + "\n")
    r = json.loads(run_tool(db, "load", "--json").stdout)
    s0 = next(t for t in r["types"] if t["name"] == "struct s0")
    assert "member path cut" in s0["evidence"][0]["statement"]["truncated"]
    assert "member path cut" in run_tool(db, "load").stdout


def test_suggest_names_the_root_type(tmp_path):
    """The advice for a global named CAIRN_ROOT(pool, T) literally."""
    out = run_tool(database(tmp_path, "logstore"), "replay_log", "--suggest").stdout
    assert "CAIRN_ROOT(pool, T)" not in out
    assert "CAIRN_ROOT(pool, struct logstore)" in out


def test_json_confidences_are_rounded(tmp_path):
    for name in TRUTH:
        r = analyze(tmp_path, name)
        for t in r["types"]:
            assert t["confidence"] == round(t["confidence"], 2), (name, t["name"], t["confidence"])
        assert r["stats"]["seconds"] == round(r["stats"]["seconds"], 3)


def test_unknown_skip_name_is_named_with_close_matches(tmp_path):
    res = run_tool(database(tmp_path, "kvsnap"), "kv_load_snapshot", "--skip", "kv_putt")
    assert res.returncode == 0
    warn = [ln for ln in res.stderr.splitlines() if "kv_putt" in ln]
    assert len(warn) == 1 and "did you mean kv_put" in warn[0], res.stderr
    quiet = run_tool(tmp_path / "kvsnap", "kv_load_snapshot", "--skip", "kv_put")
    assert "warning" not in quiet.stderr


def test_root_option_makes_paths_relative(tmp_path):
    """--root . was compared as the string "." and changed nothing."""
    db = database(tmp_path, "kvsnap")
    res = run_tool(db, "kv_load_snapshot", "--json", "--root", ".", cwd=HERE / "programs")
    entry = next(t for t in json.loads(res.stdout)["types"] if t["name"] == "struct kv_entry")
    assert entry["defined_at"]["file"] == "kvsnap/kv.h"
    bad = run_tool(db, "kv_load_snapshot", "--root", str(tmp_path / "nowhere"))
    assert bad.returncode == 1 and "--root" in bad.stderr and "nowhere" in bad.stderr
