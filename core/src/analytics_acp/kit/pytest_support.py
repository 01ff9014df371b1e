"""``conformance_tests``: the checklist as one pytest test a connector gets with one line."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from .model import CheckResult


def format_table(results: list[CheckResult]) -> str:
    """The checklist as a plain-text table (status, item, section, evidence)."""
    width = max(len(r.item) for r in results) if results else 10
    lines = [f"{'status':6} {'item':{width}} {'spec':6} evidence"]
    for r in results:
        lines.append(f"{r.status:6} {r.item:{width}} {r.section:6} {r.evidence}")
    counts = {s: sum(r.status == s for r in results) for s in ("pass", "fail", "n/a")}
    lines.append(f"checklist: {counts['pass']} pass, {counts['fail']} fail, {counts['n/a']} n/a")
    return "\n".join(lines)


def serve_command(connector_id: str) -> list[str]:
    """``python -m analytics_acp serve <id>`` with this interpreter (the connector must be installed)."""
    return [sys.executable, "-m", "analytics_acp", "serve", connector_id]


def _package_dir(connector_id: str) -> Any:
    try:
        from ..plugins import load_connector

        return load_connector(connector_id, extensions=False).info.package_dir
    except Exception:  # the checklist itself reports a server that cannot start
        return None


def conformance_tests(connector_id: str, *, allow_fail: tuple[str, ...] = (), **kwargs: Any) -> Callable[[], None]:
    """A pytest test function running ``run_checklist`` on ``analytics-acp serve <connector_id>``.

    ``kwargs`` go to ``run_checklist`` (credentials, config, resource_id, sample_calls, env, host_tables...).
    The test fails listing every failed item (items in ``allow_fail`` are reported but tolerated) and
    prints the whole table, visible with ``pytest -s`` or on failure.
    """

    def test_conformance() -> None:
        from .checklist import run_checklist

        options = dict(kwargs)
        options.setdefault("package_dir", _package_dir(connector_id))
        command = options.pop("command", None) or serve_command(connector_id)
        results = run_checklist(command, **options)
        print(format_table(results))
        failed = [r for r in results if r.status == "fail" and r.item not in allow_fail]
        assert not failed, "ACP conformance failures (14.2):\n" + "\n".join(str(r) for r in failed)

    test_conformance.__name__ = f"test_conformance_{connector_id.replace('-', '_')}"
    test_conformance.__doc__ = f"Spec 14.2 server checklist against the {connector_id!r} connector."
    return test_conformance
