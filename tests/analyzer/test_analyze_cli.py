"""cairn analyze's command line: the compilation database it is given (made
by --make, malformed, stale, hand-written), its option values and its
progress output. Each test starts from a defect a user-style probe found."""
import json
import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from test_analyze import BUILD, HERE, ROOT, TOOL, database, one_file_database, run_tool

pytestmark = pytest.mark.skipif(not TOOL.exists(), reason=f"{TOOL} is not built")

SOURCE = ("#include <stdlib.h>\nstruct rec { int a; int b; };\nstruct rec *root;\n"
          "void load(void) { root = malloc(sizeof *root); root->a = 1; }\n")


def cli(*args: str, cwd=None) -> subprocess.CompletedProcess:
    env = dict(os.environ, CAIRN_BUILD=str(BUILD), PYTHONPATH=str(ROOT / "python"))
    return subprocess.run([sys.executable, "-m", "cairn.cli", "analyze", *args],
                          capture_output=True, text=True, env=env, cwd=cwd)


needs_bear = pytest.mark.skipif(not shutil.which("bear") or not shutil.which("make"),
                                reason="needs bear and make")


def kvsnap_with_makefile(tmp_path: Path, recipe: str = "$(CC) -o $@ $^") -> Path:
    src = tmp_path / "kv"
    shutil.copytree(HERE / "programs" / "kvsnap", src)
    (src / "Makefile").write_text(f"kvsnap: table.o snapshot.o\n\t{recipe}\n")
    return src


@needs_bear
def test_make_twice_keeps_the_database(tmp_path):
    """On an up-to-date build bear saw no compiles and wrote "[]" over the
    database; the analysis then failed. The second run keeps what was there."""
    src = kvsnap_with_makefile(tmp_path)
    args = ("--make", "--load", "kv_load_snapshot", "-p", str(src), "--json")
    assert cli(*args).returncode == 0
    again = cli(*args)
    assert again.returncode == 0, again.stderr
    assert "kept the existing compile_commands.json (2 entries)" in again.stderr
    assert len(json.loads((src / "compile_commands.json").read_text())) == 2
    names = {t["name"] for t in json.loads(again.stdout)["types"] if t["reported"]}
    assert "struct kv_entry" in names


@needs_bear
def test_make_with_nothing_to_compile_and_no_database_says_how(tmp_path):
    src = kvsnap_with_makefile(tmp_path)
    subprocess.run(["make"], cwd=src, capture_output=True, check=True)
    res = cli("--make", "--load", "kv_load_snapshot", "-p", str(src))
    assert res.returncode == 2
    assert "compiled nothing" in res.stderr and "make clean" in res.stderr, res.stderr


@needs_bear
def test_failed_build_has_its_own_exit_code(tmp_path):
    """make exits 2 on a failed build, which read as the tool's own 2 (no
    compilation database). A failed --make build now exits 4 and names the
    build's status."""
    src = kvsnap_with_makefile(tmp_path, recipe="false")
    res = cli("--make", "--load", "kv_load_snapshot", "-p", str(src))
    assert res.returncode == 4, res.stderr
    assert "the build under bear failed (make exited with 2)" in res.stderr


@pytest.mark.parametrize("text,problem", [("[{", "not valid JSON"),
                                          ('{"file": "m.c"}', "not a JSON array"),
                                          ('[{"file": "m.c"}]', 'entry 1 has no "directory"')])
def test_malformed_database_is_one_line(tmp_path, text, problem):
    """It was reported as "no compile_commands.json" followed by LLVM's text."""
    (tmp_path / "compile_commands.json").write_text(text)
    for res in (run_tool(tmp_path, "load"), cli("--load", "load", "-p", str(tmp_path))):
        assert res.returncode == 2
        lines = res.stderr.splitlines()
        assert len(lines) == 1, res.stderr
        assert problem in lines[0] and "compile_commands.json" in lines[0]
        assert "no compile_commands.json" not in lines[0] and "regenerate" in lines[0]


def test_missing_source_files_are_named_one_line_each(tmp_path):
    """A stale database printed clang's raw lines and exited 1 (undocumented)."""
    db = one_file_database(tmp_path, SOURCE)
    entries = json.loads((db / "compile_commands.json").read_text())
    gone = [dict(entries[0], file=f"gone{i}.c") for i in range(2)]
    (db / "compile_commands.json").write_text(json.dumps(entries + gone))
    res = run_tool(db, "load", "--json")
    assert res.returncode == 0
    lines = res.stderr.splitlines()
    assert len(lines) == 2, res.stderr
    for i, line in enumerate(lines):
        assert f"gone{i}.c" in line and "does not exist" in line and "stale" in line
    assert "struct rec" in {t["name"] for t in json.loads(res.stdout)["types"]}
    # nothing left to analyze: no usable database
    (db / "compile_commands.json").write_text(json.dumps(gone))
    res = run_tool(db, "load")
    assert res.returncode == 2 and "none of the 2 C files" in res.stderr, res.stderr
    assert "error:" not in res.stderr


def test_relative_directory_is_resolved_against_the_database(tmp_path):
    """"directory": "." means the database's directory, not the caller's."""
    (tmp_path / "proj").mkdir()
    db = one_file_database(tmp_path / "proj", SOURCE)
    (db / "compile_commands.json").write_text(json.dumps(
        [{"directory": ".", "file": "m.c", "arguments": ["cc", "-c", "m.c"]}]))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    res = run_tool(db, "load", "--json", cwd=elsewhere)
    assert res.returncode == 0, res.stderr
    rec = next(t for t in json.loads(res.stdout)["types"] if t["name"] == "struct rec")
    assert rec["reported"] and rec["defined_at"]["file"] == "m.c"


@pytest.mark.parametrize("args,message", [(("-j", "x"), "argument -j: 'x' is not a whole number"),
                                          (("-j", "0"), "argument -j: 0 must be at least 1"),
                                          (("--max-targets", "-1"),
                                           "argument --max-targets: -1 must be 0 or more")])
def test_bad_option_values_get_the_cli_message(tmp_path, args, message):
    res = cli("--load", "load", "-p", str(tmp_path), *args)
    assert res.returncode == 2 and message in res.stderr, res.stderr
    assert "value invalid" not in res.stderr and "for the" not in res.stderr


def test_progress_lines_when_stderr_is_not_a_terminal(tmp_path):
    """1500 TUs took 32 s without a word. Not on a terminal, a line every
    100 TUs goes to stderr; stdout still carries only the JSON."""
    n = 250
    entries = []
    for i in range(n):
        (tmp_path / f"u{i}.c").write_text(f"struct s{i} {{ int v; }};\nvoid f{i}(struct s{i} *p) {{ p->v = 1; }}\n")
        entries.append({"directory": str(tmp_path), "file": f"u{i}.c", "arguments": ["cc", "-c", f"u{i}.c"]})
    (tmp_path / "compile_commands.json").write_text(json.dumps(entries))
    res = run_tool(tmp_path, "f0", "--json", "-j", "1")
    assert res.returncode == 0
    json.loads(res.stdout)
    progress = [ln for ln in res.stderr.splitlines() if "translation units" in ln]
    assert [ln.split()[2] for ln in progress] == ["100/250", "200/250"], res.stderr


def test_progress_in_place_on_a_terminal(tmp_path):
    db = database(tmp_path, "kvsnap")
    master, slave = pty.openpty()
    res = subprocess.run([str(TOOL), "--load", "kv_load_snapshot", "-p", str(db), "--json"],
                         stdout=subprocess.PIPE, stderr=slave, text=True)
    os.close(slave)
    err = os.read(master, 65536).decode()
    os.close(master)
    assert res.returncode == 0
    json.loads(res.stdout)
    assert "\rcairn-analyze: parsed 2/2 translation units" in err, repr(err)
    assert err.endswith("\r\x1b[K"), repr(err)  # the line is cleared for what follows
