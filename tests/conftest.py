"""Settings for every pytest test, and the skip gate.

Tests find the built tools through $CAIRN_BUILD (default ./build).

The skip gate: a skipped test is a check that did not run, so it fails the
run. A test whose prerequisite is missing (a tool not built, a package not
installed, a CPU feature absent) fails with the skip's reason. To accept a
skip on purpose, name the test in CAIRN_ALLOW_SKIPS: a comma-separated list
of fnmatch patterns matched against the test's node id, e.g.
CAIRN_ALLOW_SKIPS='*test_masked_vector_loads_and_stores*'. scripts/test.sh
never sets it. docs/testing.md describes the gates."""
import fnmatch
import os
from pathlib import Path

import pytest

os.environ.setdefault("CAIRN_BUILD", str(Path(__file__).resolve().parents[1] / "build"))
os.environ.setdefault("CAIRN_PMEM_FORCE", "1")

ALLOW_VAR = "CAIRN_ALLOW_SKIPS"


def _allowed(nodeid: str) -> bool:
    patterns = [p.strip() for p in os.environ.get(ALLOW_VAR, "").split(",") if p.strip()]
    return any(fnmatch.fnmatchcase(nodeid, p) for p in patterns)


def _reason(report) -> str:
    lr = report.longrepr
    if isinstance(lr, tuple) and len(lr) == 3:          # (file, line, "Skipped: why")
        return str(lr[2])
    return str(lr)


def _gate(report):
    """Turn an unpermitted skip into a failure that says what to do."""
    if not report.skipped or hasattr(report, "wasxfail") or _allowed(report.nodeid):
        return
    report.outcome = "failed"
    report.longrepr = (f"skip gate: {report.nodeid} was skipped ({_reason(report)}); "
                       f"install or build what it needs, or name it in {ALLOW_VAR} "
                       f"to accept the skip")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    _gate(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    _gate(outcome.get_result())
