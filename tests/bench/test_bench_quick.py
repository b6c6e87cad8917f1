"""`cairn bench runtime --quick` end to end: both native programs run, the
instruction counter counts, the open test crashes and reopens its pools.

Speed is the benchmark's output, not a test: nothing here compares times
or checks issue 2's goals."""
import json

import pytest

from cairn import paths
from cairn.cli import main
from cairn.commands.bench import OPS


def _built(name):
    try:
        paths.tool(name)
        return True
    except SystemExit:
        return False


IMPLS = [i for i, tool in (("cairn", "cairn-bench-cairn"), ("pmemobj", "cairn-bench-pmemobj"))
         if _built(tool)]
pytestmark = pytest.mark.skipif(not IMPLS, reason="bench programs are not built")


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "runtime.json"
    rc = main(["bench", "runtime", "--quick", "--threads", "1,2", "--json", str(out)])
    data = json.loads(out.read_text())
    assert rc == 0, data["errors"]
    return data


def test_every_operation_measured_for_each_impl_and_thread_count(report):
    assert report["impls"] == [i for i in ("pmemobj", "cairn") if i in IMPLS]
    for entry in report["micro_summary"]:
        assert entry["op"] in OPS and entry["threads"] in (1, 2)
        for impl in IMPLS:
            assert entry[impl]["ops_per_s"] > 0, (impl, entry)
        if len(IMPLS) == 2:
            assert entry["ratio"] > 0
    assert len(report["micro_summary"]) == 2 * len(OPS)


def test_flushes_and_fences_counted_per_operation(report):
    if not _built("cairn-stepcount"):
        pytest.skip("cairn-stepcount is x86-64 Linux only")
    for op in OPS:
        for impl in IMPLS:
            m = report["counts"][op][impl]["measured"]
            assert m["instructions"] > 0
            assert min(m["fences"], m["flushes"], m["nt_lines"]) >= 0


def test_cairn_counters_agree_with_the_instructions_it_executes(report):
    """cairn_stats_get is only worth publishing if it tells the truth."""
    if "cairn" not in IMPLS or not _built("cairn-stepcount"):
        pytest.skip("needs cairn-bench-cairn and cairn-stepcount")
    for op in OPS:
        c = report["counts"][op]["cairn"]
        m, s = c["measured"], c["self"]
        assert m["flushes"] + m["nt_lines"] == pytest.approx(s["flushes"]), op
        assert m["fences"] == pytest.approx(s["ofences"] + s["dfences"]), op


def test_open_after_clean_close_and_after_sigkill(report):
    for impl in IMPLS:
        e = report["open"][impl]
        assert e["fill"]["objects"] > 0
        for when in ("clean", "after_crash"):
            assert e[when]["objects"] == e["fill"]["objects"], (impl, when)
            assert e[when]["payload_ok"], (impl, when)
            assert e[when]["open_s"] >= 0
