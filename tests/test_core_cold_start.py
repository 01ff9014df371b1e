"""Cold start (tools/bench case 4: spawn, initialize, tools/list) loads only what those two answers need.

What a server does not need before its first call is imported at that call (the bench's call cases make an
untimed first call); these tests pin it without timing anything: the modules a served process holds once it
has answered initialize and tools/list, and how often ``serve`` reads the installed entry points.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from analytics_acp import cli, plugins
from analytics_acp.plugins import available_connectors, load_connector

# Run the real `analytics-acp serve <id>`; at exit, write the modules it imported to stderr.
SERVE = """
import atexit, json, os, runpy, sys
atexit.register(lambda: os.write(2, ("\\nMODULES " + json.dumps(sorted(sys.modules)) + "\\n").encode()))
sys.argv = ["analytics-acp", "serve", sys.argv[1]]
runpy.run_module("analytics_acp", run_name="__main__", alter_sys=True)
"""
# The call path of the core: results, table files, set-up checks, autocontext, HTTP, worker-thread hops.
CALL_PATH = ("analytics_acp.calls", "analytics_acp.results", "analytics_acp.tablefile", "analytics_acp.setup_check",
             "analytics_acp.schemas", "analytics_acp.autocontext", "analytics_acp.resources", "analytics_acp.http_app",
             "anyio.from_thread")
# What each connector needs only to run its tools and blocks (clients, drivers, its own working modules).
HEAVY = {
    "databases": ("sqlalchemy", "sqlglot", "duckdb", "analytics_acp_databases.query"),
    "ga4": ("google.analytics", "googleapiclient", "analytics_acp_google.retry", "analytics_acp_google.errors"),
    "gsc": ("googleapiclient", "analytics_acp_google.retry", "analytics_acp_google.errors"),
    "bigquery": ("google.cloud.bigquery", "analytics_acp_google.retry", "analytics_acp_google.errors"),
    "browser": ("playwright", "analytics_acp_browser.sessions", "analytics_acp_browser.capture",
                "analytics_acp_browser.blocks", "xml.etree.ElementTree"),
    "prediction": ("numpy", "pandas", "statsmodels", "matplotlib"),
}


def _served_modules(connector: str) -> set[str]:
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {"experimental": {"acp": {"version": "1.0"}}},
            "clientInfo": {"name": "cold-start-test", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    # Each answer is read before stdin closes, as a client does (at the end of stdin the server stops).
    proc = subprocess.Popen([sys.executable, "-c", SERVE, connector], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    answers = []
    try:
        for message in lines:
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()
            if "id" in message:
                answers.append(json.loads(proc.stdout.readline()))
        proc.stdin.close()
        stderr = proc.stderr.read()  # until the process exits (its atexit line is the last)
        proc.wait(timeout=120)
    finally:
        proc.kill()
    assert [a.get("id") for a in answers] == [1, 2] and answers[1]["result"]["tools"], (answers, stderr)
    assert "MODULES " in stderr, stderr
    return set(json.loads(stderr.rsplit("MODULES ", 1)[1].splitlines()[0]))


@pytest.mark.parametrize("connector", ["example", *sorted(HEAVY)])
def test_initialize_and_tools_list_load_no_call_path(connector):
    if connector != "example" and connector not in available_connectors():
        pytest.skip(f"{connector} is not installed")
    modules = _served_modules(connector)
    early = [m for m in (*CALL_PATH, *HEAVY.get(connector, ())) if m in modules]
    assert early == [], f"serve {connector} imported before its first call: {early}"


def test_serve_reads_the_installed_entry_points_once(monkeypatch):
    reads = []
    real = plugins.entry_points

    def counted():
        reads.append(1)
        return real()

    monkeypatch.setattr(plugins, "entry_points", counted)
    loaded = load_connector("example")  # the connector's group, the test connectors' and the extensions'
    assert loaded.info.id == "example" and len(reads) == 1


def test_serve_does_not_list_the_installed_commands(monkeypatch, capsys):
    def refused():
        raise AssertionError("serve read the installed commands")

    monkeypatch.setattr(cli, "installed_commands", refused)
    assert cli.main(["serve", "no_such_connector"]) == 2  # ConnectorNotFound, said on one line
    assert "No connector named 'no_such_connector'" in capsys.readouterr().err
