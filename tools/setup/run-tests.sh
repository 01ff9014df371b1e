#!/usr/bin/env bash
# The whole suite, as `make test` and CI run it. pytest exit 5 (no tests collected) is a failure.
# Parallel with pytest-xdist: TEST_WORKERS workers (default: twice the cores, at most 8: many tests wait
# on subprocesses, browsers and databases, so a second worker per core keeps the cores busy);
# --dist loadfile keeps the tests that share a module-scoped fixture (a frozen build, one server) on
# one worker. TEST_WORKERS=0 runs in one process. See tests/README.md.
set -uo pipefail
cd "$(dirname "$0")/../.."
cores=$(nproc 2>/dev/null || echo 2)
workers="${TEST_WORKERS:-$(( cores * 2 > 8 ? 8 : cores * 2 ))}"
.venv/bin/pytest -q -p no:cacheprovider --timeout=900 -n "$workers" --dist loadfile --no-loadscope-reorder "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
  echo "pytest collected no tests: failing" >&2
  exit 1
fi
exit "$rc"
