#!/usr/bin/env bash
# The whole suite, as `make test` and CI run it. pytest exit 5 (no tests collected) is a failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
.venv/bin/pytest -q -p no:cacheprovider --timeout=900 "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
  echo "pytest collected no tests: failing" >&2
  exit 1
fi
exit "$rc"
