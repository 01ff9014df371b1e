#!/usr/bin/env bash
# `make mutation`: mutmut over the read-only fence, the 8.6/16.6 inference rule and the bridge's URL keys
# (issue 38.9), each against the tests that cover it. Outside `make test`: it runs the tests once per mutant.
#
# The checkout is never mutated: the modules and tests are copied to $MUTATION_DIR (default
# build/work/mutation) and the copy's packages come first on PYTHONPATH, ahead of the editable installs.
# The results stay there (.mutmut-cache): `cd build/work/mutation && ../../../.venv-mutation/bin/mutmut show <id>`.
# MUTATION_ONLY=fence|inference|urlkeys runs one module; MUTATION_QUICK=1 runs the first stage only where a module
# has one (a lower bound on the score, minutes instead of an hour for the fence on a busy machine).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
WORK="${MUTATION_DIR:-$ROOT/build/work/mutation}"
MUTMUT="$ROOT/.venv-mutation/bin/mutmut"
PY="$ROOT/.venv/bin/python"

# Each mutant is one or two pytest processes: start them light. A first stage of tests that need no conftest
# fixture kills most mutants in about a second of CPU; the mutants it leaves meet the whole covering set.
LIGHT="--noconftest -p no:xdist -p no:asyncio -p no:timeout"
DB=connectors/databases/tests
# name | module to mutate | first stage (pytest args, LIGHT) | the covering tests (pytest args; paths from the root)
MODULES=(
  "fence|connectors/databases/src/analytics_acp_databases/readonly.py|$DB/test_databases_denylist.py $DB/test_databases_readonly.py -k 'test_guard or test_the_deny_list or test_referenced'|-p no:xdist $DB/test_databases_denylist.py $DB/test_databases_readonly.py"
  "inference|core/src/analytics_acp/results/inference.py||$LIGHT tests/test_core_results_inference.py tools/bridge/tests/test_bridge_csvtypes.py"
  "urlkeys|$(cd "$ROOT" && git ls-files | grep '/urlkeys\.py$')||$LIGHT tools/bridge/tests/test_bridge_urlkeys.py"
)

mkdir -p "$WORK"
# Tracked and new files as they are now (uncommitted changes included), without the venvs and build output.
# Copied over the last run's copy: mutmut's cache stays, and a changed module or test file is tested again.
(cd "$ROOT" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) | tar -xf - -C "$WORK"
cd "$WORK"
export PYTHONPATH="$WORK/core/src:$WORK/connectors/databases/src:$WORK/tools/bridge/src"
for entry in "${MODULES[@]}"; do
  IFS='|' read -r name module first tests <<<"$entry"
  if [[ -n "${MUTATION_ONLY:-}" && "$MUTATION_ONLY" != "$name" ]]; then continue; fi
  echo "== $name: $module"
  if [[ -n "${MUTATION_QUICK:-}" && -n "$first" ]]; then tests="$LIGHT $first" first=""; fi
  # -x: a killed mutant stops at its first failing test; exit codes 2/4/8 (survivors, timeouts) are results.
  tests_dir=$(for word in $tests; do [[ $word == *.py ]] && { dirname "$word"; break; }; done)
  "$MUTMUT" run --paths-to-mutate "$module" --tests-dir "$tests_dir" --simple-output --no-progress \
    --test-time-multiplier 3 --test-time-base 30 \
    --runner "bash -c \"set -e; ${first:+$PY -m pytest -x -q -p no:randomly $LIGHT $first; }$PY -m pytest -x -q -p no:randomly $tests\"" \
    || [[ $? -ge 2 ]]
done
"$PY" "$ROOT/tests/mutation/score.py" "$WORK/.mutmut-cache"
