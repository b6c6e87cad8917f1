#!/usr/bin/env python3
"""Summarize libFuzzer logs of `scripts/fuzz.sh --coverage` as JSON (for
docs/RESULTS.md's generated blocks).

    tests/fuzz/coverage_json.py OUT.json COMMAND NAME=LOG [NAME=LOG ...]
"""
import json
import re
import subprocess
import sys

STATUS = re.compile(r"^#(\d+)\s+(INITED|DONE)\s+cov: (\d+) ft: (\d+) corp: (\d+)/")


def parse(log):
    row = {}
    for line in open(log, errors="replace"):
        m = STATUS.match(line)
        if m:
            key = "seeds" if m.group(2) == "INITED" else "end"
            row[f"{key}_edges"], row[f"{key}_features"], row[f"{key}_corpus"] = \
                int(m.group(3)), int(m.group(4)), int(m.group(5))
            if key == "end":
                row["inputs"] = int(m.group(1))
        m = re.match(r"^Done (\d+) runs in (\d+) second", line)
        if m:
            row["seconds"] = int(m.group(2))
    if "end_edges" not in row:
        sys.exit(f"coverage_json: {log} has no DONE line; the run did not finish")
    return row


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    out, command = sys.argv[1], sys.argv[2]
    rows = []
    for arg in sys.argv[3:]:
        name, _, log = arg.partition("=")
        rows.append({"build": name, **parse(log)})
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    json.dump({"command": command, "source": {"commit": commit}, "runs": rows},
              open(out, "w"), indent=1)


if __name__ == "__main__":
    main()
