#!/usr/bin/env bash
# Debian packages the suite needs: Chromium (browser connector tests), sqlite3 CLI (benchmarks).
set -euo pipefail
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v sqlite3 >/dev/null 2>&1 || need+=(sqlite3)
if [ ${#need[@]} -eq 0 ]; then exit 0; fi
if [ "$(id -u)" -ne 0 ]; then
  echo "system-deps: missing ${need[*]}; run 'sudo apt-get install ${need[*]}' (tests that need them will skip)" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
