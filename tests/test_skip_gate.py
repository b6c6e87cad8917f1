"""The skip gate in tests/conftest.py works: a pytest run over a directory
holding that conftest and a test that skips (by call, by mark, or a whole
module at collection) exits non-zero and says why, unless the test is named
in CAIRN_ALLOW_SKIPS."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CONFTEST = Path(__file__).resolve().parent / "conftest.py"

SKIPPERS = {
    "call": "import pytest\n\ndef test_needs_a_tool():\n    pytest.skip('tool X is not built')\n",
    "mark": "import pytest\n\n@pytest.mark.skipif(True, reason='tool X is not built')\n"
            "def test_needs_a_tool():\n    pass\n",
    "module": "import pytest\npytest.skip('tool X is not built', allow_module_level=True)\n\n"
              "def test_needs_a_tool():\n    pass\n",
}


def _pytest(tmp_path, body, allow=None):
    shutil.copy(CONFTEST, tmp_path / "conftest.py")
    (tmp_path / "test_skipper.py").write_text(body)
    (tmp_path / "test_plain.py").write_text("def test_plain():\n    pass\n")
    env = {k: v for k, v in os.environ.items() if k != "CAIRN_ALLOW_SKIPS"}
    if allow is not None:
        env["CAIRN_ALLOW_SKIPS"] = allow
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "--rootdir", str(tmp_path), str(tmp_path)],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)


@pytest.mark.parametrize("how", sorted(SKIPPERS))
def test_a_skip_fails_the_run(tmp_path, how):
    r = _pytest(tmp_path, SKIPPERS[how])
    out = r.stdout + r.stderr
    assert r.returncode != 0, out
    assert "skip gate:" in out and "tool X is not built" in out, out


@pytest.mark.parametrize("how", sorted(SKIPPERS))
def test_a_skip_named_in_the_allow_list_passes(tmp_path, how):
    r = _pytest(tmp_path, SKIPPERS[how], allow="*other_test*, *test_skipper.py*")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 passed, 1 skipped" in r.stdout, r.stdout


def test_an_allow_list_naming_other_tests_still_fails(tmp_path):
    r = _pytest(tmp_path, SKIPPERS["call"], allow="*test_something_else*")
    assert r.returncode != 0, r.stdout + r.stderr


def test_passing_and_failing_tests_are_left_alone(tmp_path):
    ok = _pytest(tmp_path, "def test_ok():\n    assert 1 + 1 == 2\n")
    assert ok.returncode == 0 and "2 passed" in ok.stdout, ok.stdout + ok.stderr
    bad = _pytest(tmp_path, "def test_bad():\n    assert 1 + 1 == 3\n")
    assert bad.returncode == 1 and "1 failed, 1 passed" in bad.stdout, bad.stdout + bad.stderr


CTEST_PROJECT = """cmake_minimum_required(VERSION 3.20)
project(gate NONE)
enable_testing()
add_test(NAME passes COMMAND true)
add_test(NAME skips COMMAND sh -c "exit 77")
set_tests_properties(skips PROPERTIES SKIP_RETURN_CODE 77)
"""


def test_ctest_gate_fails_on_a_skipped_c_test(tmp_path):
    """scripts/ctest-gated.sh (scripts/test.sh's ctest): ctest itself exits 0
    when a test returns its SKIP_RETURN_CODE; the gate does not."""
    (tmp_path / "CMakeLists.txt").write_text(CTEST_PROJECT)
    subprocess.run(["cmake", "-S", tmp_path, "-B", tmp_path / "b"], check=True,
                   capture_output=True)
    gate = Path(__file__).resolve().parents[1] / "scripts" / "ctest-gated.sh"
    plain = subprocess.run(["ctest", "--test-dir", tmp_path / "b"], capture_output=True, text=True)
    assert plain.returncode == 0 and "Skipped" in plain.stdout, plain.stdout
    r = subprocess.run([gate, "--test-dir", tmp_path / "b"], capture_output=True, text=True)
    assert r.returncode != 0 and "did not run" in r.stderr, r.stdout + r.stderr
    ok = subprocess.run([gate, "--test-dir", tmp_path / "b", "-R", "passes"],
                        capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    none = subprocess.run([gate, "--test-dir", tmp_path / "b", "-R", "no_such_test"],
                          capture_output=True, text=True)
    assert none.returncode != 0, none.stdout + none.stderr
