#!/usr/bin/env python3
"""Regenerate or check the measured numbers in docs/RESULTS.md.

    scripts/results.py            # check: exit 1 naming each block that differs
                                  # from its JSON, or each hand-written figure
    scripts/results.py --write    # rewrite every generated block from its JSON

The blocks and the rule for hand-written figures: python/cairn/results.py.
"""
import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
from cairn.results import ResultsError, lint, regenerate  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--write", action="store_true", help="rewrite the generated blocks")
    p.add_argument("--doc", default=os.path.join(ROOT, "docs", "RESULTS.md"),
                   help="the document (default: docs/RESULTS.md)")
    args = p.parse_args()
    try:
        with open(args.doc) as f:
            text = f.read()
    except OSError as e:
        sys.exit(f"results: cannot read {args.doc}: {e.strerror}")
    try:
        new, changed = regenerate(text, ROOT)
    except ResultsError as e:
        sys.exit(f"results: {e}")
    problems = 0
    if args.write:
        if changed:
            with open(args.doc, "w") as f:
                f.write(new)
        print(f"results: {len(changed)} block(s) rewritten")
    else:
        for spec in changed:
            print(f"results: block '{spec}' differs from its data; run scripts/results.py --write")
            problems += 1
    for no, line in lint(new):
        print(f"{os.path.relpath(args.doc, ROOT)}:{no}: a measured figure written by hand "
              f"(put it in a generated block): {line.strip()[:120]}")
        problems += 1
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
