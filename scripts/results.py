#!/usr/bin/env bash
# Regenerate or check the measured numbers in docs/RESULTS.md:
#     scripts/results.py            check: exit 1 naming each block that differs
#                                   from its JSON, or each hand-written figure
#     scripts/results.py --write    rewrite every generated block from its JSON
# The blocks and the rule for hand-written figures: python/cairn/results.py.
root=$(cd "$(dirname "$0")/.." && pwd)
exec "$root/.venv/bin/python" -m cairn.results "$@"
