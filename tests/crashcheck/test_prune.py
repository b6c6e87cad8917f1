"""`cairn crashcheck` pruning to the lines the check reads
(docs/crashcheck.md, "Pruning"): a fence with more lines in play than
--max-states allows, none of them read, explored exhaustively; without
pruning the same fence is not; and pruning at every crash point still
catches every bug of the seeded corpus."""
import json
import subprocess

import pytest
from test_corpus import CORPUS, HERE, LIBDIR, ROOT, build, crashcheck, pool, summary  # noqa: F401


def unlinked_lines(tmp_path):
    prog = tmp_path / "unlinked_lines"
    r = subprocess.run(["cc", "-O1", "-g", f"-I{ROOT / 'include'}", str(HERE / "unlinked_lines.c"),
                        "-o", str(prog), f"-L{LIBDIR}", "-lcairn", f"-Wl,-rpath,{LIBDIR}"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return prog


def test_unread_lines_pruned_to_exhaustive(tmp_path, pool):
    """unlinked_lines.c: 16 lines of an object not yet linked, persisted at
    one fence (2^16 > 4096 combinations). Recovery and the check read none
    of them: pruned, the fence is exhaustive; unpruned it is not."""
    prog = unlinked_lines(tmp_path)
    out = tmp_path / "r.json"
    check = f"{prog} check {{pool}}"
    r = crashcheck("--quiet", "--json", out, "--check", check, "--", prog, "run", pool, pool=pool)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    j = json.loads(out.read_text())
    big = [p for p in j["points"] if p["lines"] >= 16]
    assert len(big) == 1, j["points"]
    p = big[0]
    assert p["read_lines"] is not None and p["read_lines"] <= 20 and p["exhaustive"], p
    assert p["combinations"] <= 4096
    assert j["exhaustive_points"] == j["crash_points"] and j["skipped"] == 0
    assert "exhaustive: yes at" in r.stdout.strip().splitlines()[-1]

    r = crashcheck("--quiet", "--json", out, "--prune", "never", "--max-states", "64", "--check",
                   check, "--", prog, "run", pool, pool=pool)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    j = json.loads(out.read_text())
    p = [p for p in j["points"] if p["lines"] >= 16][0]
    assert p["read_lines"] is None and not p["exhaustive"] and p["combinations"] >= 65536, p
    assert j["exhaustive_points"] < j["crash_points"] and j["skipped"] > 0


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_pruning_hides_no_bug(name, tmp_path, pool):
    """every bug of the corpus is still caught with every crash point pruned
    to the lines its check reads"""
    prog = build(name, True, tmp_path)
    out = tmp_path / "r.json"
    r = crashcheck("--quiet", "--prune", "always", "--json", out, "--check",
                   f"{prog} check {{pool}}", "--", prog, "run", pool, pool=pool)
    s = summary(r.stdout)
    assert r.returncode == 1 and s["failed"] > 0, r.stdout + r.stderr[-3000:]
    j = json.loads(out.read_text())
    assert j["pruned_points"] > 0, "no crash point was pruned (the tracker did not run)"
