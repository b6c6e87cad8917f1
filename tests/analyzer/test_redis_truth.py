"""The labelled truth set for NVMOVE's subject (Redis 3.2.6, rdbLoad) and
its scorer. The full run (fetch, build, analyze) is tests/analyzer/redis32.sh,
outside the default suite (about 4 minutes); here the reports it last
wrote (tests/analyzer/redis-3.2.6/{cairn,nvmove}.json, trimmed) are scored
against the labels, and the scorer is checked on reports made to order."""
import json
from pathlib import Path

import pytest

import redis_truth as rt

HERE = Path(__file__).resolve().parent
DATA = HERE / "redis-3.2.6"


def report(*entries):
    return {"types": [{"name": n, "confidence": c, "reported": True, "variants": list(v)}
                      for n, c, v in entries]}


def test_truth_set_is_labelled_with_reasons():
    data = json.loads((DATA / "truth.json").read_text())
    names = [e["name"] for e in data["types"]]
    assert len(names) == len(set(names))
    for e in data["types"]:
        assert isinstance(e["persistent"], bool), e
        assert e["why"].strip() and "\n" not in e["why"], e
    # the data set rdbLoadObject builds: every value encoding of Redis 3.2
    persistent = {e["name"] for e in data["types"] if e["persistent"]}
    for must in ("struct redisObject", "sds", "struct dictEntry (src/dict.h:47)", "struct redisDb",
                 "struct intset", "struct quicklist", "struct zset", "struct zskiplistNode"):
        assert must in persistent
    assert "struct redisServer" not in persistent and "hashTypeIterator" not in persistent


@pytest.mark.parametrize("mode", ["cairn", "nvmove"])
def test_every_reported_entry_is_labelled(mode):
    r = json.loads((DATA / f"{mode}.json").read_text())
    truth = rt.load_truth()
    for t in r["types"]:
        if t["reported"]:
            rt.unit_of(truth, {t["name"], *t["variants"]})     # raises Unlabelled


def test_redis_scores():
    """The figures docs/RESULTS.md gives beside NVMOVE's published 25/14/11/0."""
    truth = rt.load_truth()
    cairn = rt.score(json.loads((DATA / "cairn.json").read_text()), truth)
    high = rt.score(json.loads((DATA / "cairn.json").read_text()), truth, min_confidence=0.5)
    nvmove = rt.score(json.loads((DATA / "nvmove.json").read_text()), truth)
    assert (cairn["reported"], cairn["tp"], cairn["fp"], cairn["fn"]) == (45, 15, 30, 0)
    assert (high["reported"], high["tp"], high["fp"], high["fn"]) == (28, 15, 13, 0)
    assert (nvmove["reported"], nvmove["tp"], nvmove["fp"], nvmove["fn"]) == (34, 15, 19, 0)


def test_scorer_counts_variants_misses_and_unlabelled():
    truth = rt.load_truth()
    # the sds family once through a folded variant, then a member on its own: FP
    s = rt.score(report(("struct sdshdr16 (deps/hiredis/sds.h:56)", 0.6,
                         ["struct sdshdr8 (src/sds.h:50)"]),
                        ("struct sdshdr32 (src/sds.h:62)", 0.6, []),
                        ("struct client", 0.9, [])), truth)
    assert (s["tp"], s["fp"], s["fn"]) == (1, 2, 14)
    assert s["precision"] == 0.33 and s["recall"] == 0.07
    # below the cut an entry does not count
    s = rt.score(report(("struct redisObject", 0.3, [])), truth, min_confidence=0.5)
    assert (s["tp"], s["fp"]) == (0, 0)
    with pytest.raises(rt.Unlabelled):
        rt.score(report(("struct nosuch", 0.9, [])), truth)
