"""docs/RESULTS.md's figures come from the committed JSON (scripts/results.py)."""
import os
import shutil
import subprocess
import sys

import pytest

from cairn.results import lint, regenerate, verdict

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(*args):
    return subprocess.run([sys.executable, "-m", "cairn.results", *args], capture_output=True,
                          text=True)


def test_results_doc_matches_its_data():
    r = run()
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_changed_number_in_a_block_is_caught(tmp_path):
    doc = tmp_path / "RESULTS.md"
    text = open(os.path.join(ROOT, "docs", "RESULTS.md")).read()
    start = text.index("<!-- results: runtime bench/")
    i = text.index("| tx_update_8B | 1 |", start)
    j = text.index(" | ", i + len("| tx_update_8B | 1 |"))   # the pmemobj ns/op cell
    doc.write_text(text[:j] + "9" + text[j:])
    r = run("--doc", str(doc))
    assert r.returncode == 1 and "block 'runtime bench/runtime/results/runtime.json' differs" \
        in r.stdout, r.stdout


def test_a_hand_written_figure_is_caught(tmp_path):
    doc = tmp_path / "RESULTS.md"
    shutil.copy(os.path.join(ROOT, "docs", "RESULTS.md"), doc)
    with open(doc, "a") as f:
        f.write("\ncairn's 8-byte transaction runs within 0-20% of the floor.\n")
    r = run("--doc", str(doc))
    assert r.returncode == 1 and "written by hand" in r.stdout, r.stdout


@pytest.mark.parametrize("line,flagged", [
    ("uthash read 1.052x against clang", True),
    ("clean open 68 ms after close", True),
    ("within 0-20% of the floor", True),
    ("took 1.4 s on 650,021 events", True),
    ("goal <= 1.05x on DRAM data", False),
    ("a 4 GiB pool of 1 KiB nodes, 8 ranges of 64 B", False),
    ("run `cairn bench --seconds 0.5` first", False),
    ("    indented code 3.5x", False),
])
def test_lint_rule(line, flagged):
    assert bool(lint(line + "\n")) == flagged


def test_verdict_within_noise_is_not_shown():
    # the example: 1.052x median, spread 0.97-1.16, goal <= 1.05x
    assert verdict(0.97, 1.16, 1.05, better="lower") == "not shown"
    assert verdict(0.86, 1.03, 1.05, better="lower") == "met"
    assert verdict(1.10, 1.30, 1.05, better="lower") == "NOT met"
    assert verdict(2.13, 2.78, 2.5) == "not shown"
    assert verdict(2.6, 2.9, 2.5) == "met"
    assert verdict(1.9, 2.4, 2.5) == "NOT met"


def test_value_and_table_blocks(tmp_path):
    import json
    (tmp_path / "d.json").write_text(json.dumps(
        {"runs": [{"name": "a", "ratio": 1.2345, "n": 3}, {"name": "b", "ratio": 2.5, "n": 4}]}))
    doc = tmp_path / "R.md"
    doc.write_text("b ran at <!-- results: value d.json runs.[name=b].ratio .2f -->?<!-- /results -->"
                   " the speed.\n\n<!-- results: table d.json runs name ratio:.1f -->\n<!-- /results -->\n")
    text, changed = regenerate(doc.read_text(), str(tmp_path))
    assert "value d.json runs.[name=b].ratio .2f -->2.50<!--" in text
    assert "| a | 1.2 |\n| b | 2.5 |\n" in text
    assert len(changed) == 2
    assert regenerate(text, str(tmp_path))[1] == []
    assert lint(text) == []
