"""Score cairn analyze's JSON against a labelled truth set (Redis 3.2.6:
tests/analyzer/redis-3.2.6/truth.json), counting as the NVMOVE paper does:
a reported entry is a true positive if it (or a layout variant folded into
it) is a persistent type not matched before, else a false positive (so a
second variant reported on its own is one); a persistent type no entry
matches is a false negative. A reported name the truth set does not label
is an error: precision needs every entry labelled.

    python3 tests/analyzer/redis_truth.py REPORT.json [--min-confidence 0.5] [--truth FILE]
"""
import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TRUTH = HERE / "redis-3.2.6" / "truth.json"


class Unlabelled(Exception):
    """A reported entry the truth set has no label for."""


def load_truth(path=TRUTH):
    """[(unit name, persistent, names)]: one unit per labelled type, a
    family (sds) holding every name of its members."""
    data = json.loads(Path(path).read_text())
    return [(e["name"], e["persistent"], {e["name"], *e.get("members", [])}) for e in data["types"]]


def unit_of(truth, names):
    """The truth unit a reported entry belongs to: a persistent one if any
    of its names (its own and its folded variants') is persistent."""
    hits = [u for u in truth if u[2] & names]
    if not hits:
        raise Unlabelled(f"no label for {sorted(names)}; add it to the truth set with a reason")
    return next((u for u in hits if u[1]), hits[0])


def score(report, truth, min_confidence=0.0):
    matched, fp_names = set(), []
    tp = fp = 0
    for t in report["types"]:
        if not t.get("reported") or t["confidence"] < min_confidence:
            continue
        name, persistent, _ = unit_of(truth, {t["name"], *t.get("variants", [])})
        if persistent and name not in matched:
            matched.add(name)
            tp += 1
        else:
            fp += 1
            fp_names.append(t["name"])
    fn = sorted(u[0] for u in truth if u[1] and u[0] not in matched)
    n = tp + fp
    return {"reported": n, "tp": tp, "fp": fp, "fn": len(fn), "missed": fn,
            "precision": round(tp / n, 2) if n else None,
            "recall": round(tp / (tp + len(fn)), 2) if tp + len(fn) else None,
            "false_positives": fp_names}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report", nargs="+")
    ap.add_argument("--min-confidence", type=float, default=0.0)
    ap.add_argument("--truth", default=str(TRUTH))
    ap.add_argument("--json", metavar="OUT", help="also write the scores (docs/RESULTS.md's table)")
    a = ap.parse_args()
    truth = load_truth(a.truth)
    rows = []
    for r in a.report:
        try:
            rep = json.loads(Path(r).read_text())
            s = score(rep, truth, a.min_confidence)
        except Unlabelled as e:
            sys.exit(f"redis_truth: {r}: {e}")
        rows.append({"report": Path(r).name, "mode": rep.get("mode"),
                     "min_confidence": a.min_confidence,
                     **{k: s[k] for k in ("reported", "tp", "fp", "fn", "precision", "recall")},
                     "seconds": (rep.get("stats") or {}).get("seconds")})
        print(f"{r}: reported {s['reported']}, TP {s['tp']}, FP {s['fp']}, FN {s['fn']}, "
              f"precision {s['precision']}, recall {s['recall']}"
              + (f"; missed {', '.join(s['missed'])}" if s["missed"] else ""))
    if a.json:
        Path(a.json).write_text(json.dumps(
            {"command": "python3 tests/analyzer/redis_truth.py " + " ".join(sys.argv[1:]),
             "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
