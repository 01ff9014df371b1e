#!/usr/bin/env bash
# npm packages of the third-party client tests, installed from the committed lock file.
set -euo pipefail
cd "$(dirname "$0")/../../tests/external"
if [ -f package-lock.json ] && [ ! -d node_modules ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
