#!/usr/bin/env bash
# ctest with the skip gate: runs `ctest --no-tests=error "$@"` and fails when
# any test was skipped (a test that exits with its SKIP_RETURN_CODE, 77 for
# the unit tests) or did not run, since ctest itself counts those as passes.
#   scripts/ctest-gated.sh --test-dir build -j2 -R 'unit\.'
set -uo pipefail
log=$(mktemp)
trap 'rm -f "$log"' EXIT
ctest --no-tests=error --output-on-failure "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] || exit "$rc"
if grep -q "The following tests did not run" "$log"; then
  echo "ctest-gated: $(grep -c '(Skipped)\|(Not Run)\|(Disabled)' "$log") test(s) did not run" \
       "(listed above); install or build what they need: a skipped test is not a pass" >&2
  exit 1
fi
