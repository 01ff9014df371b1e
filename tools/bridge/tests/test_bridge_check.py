"""``analytics-acp bridge --check`` and ``--print-config`` (issue 23.2): sources.json checked before a client
starts the bridge. Real commands in subprocesses; the fixture ACP (acps/fixture) and, for --online, ga4 on
a refused port."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "tests"))
from silent import refused_url  # noqa: E402

SECRET = "tok-check-SECRET-4242"


def _bridge(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    import os

    return subprocess.run([sys.executable, "-m", "analytics_acp", "bridge", *args], capture_output=True, text=True,
                          timeout=240, env={**os.environ, **(env or {})})


def _lines(out: str) -> dict[str, str]:
    """Source id -> its line."""
    found = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] in ("ok", "error", "starting"):
            found[parts[1]] = line
    return found


def test_check_offline_one_line_per_source_and_exit_code(tmp_path, fixture_root, write_sources):
    sources = write_sources(fixture_root / "sources.json", {"sources": [
        {"id": "fx", "acp": "fixture", "credentials": {"account": "acct-a", "token": SECRET}},
        {"id": "noschema", "acp": "fixture", "credentials": {"account": "acct-b"}},
        {"id": "noenv", "acp": "fixture", "credentials": {"account": "a", "token": {"env": "BRIDGE_CHECK_UNSET"}}},
        {"id": "nope", "acp": "not_installed"},
    ]})
    done = _bridge("--check", "--sources", str(sources), "--root", str(fixture_root), "--project", str(tmp_path))
    assert done.returncode == 1, done.stdout + done.stderr
    lines = _lines(done.stdout)
    assert set(lines) == {"fx", "noschema", "noenv", "nope"}
    assert lines["fx"].startswith("ok ")
    assert lines["noschema"].startswith("error ") and "missing required field(s) token" in lines["noschema"]
    assert "BRIDGE_CHECK_UNSET is not set" in lines["noenv"] and "ACP_CREDENTIALS_MISSING" in lines["noenv"]
    assert "not installed" in lines["nope"] and str(sources) in lines["nope"]  # the fix names the file
    assert SECRET not in done.stdout + done.stderr
    assert not (tmp_path / "acp-data").exists()  # a check writes nothing into the project

    write_sources(sources, {"sources": [{"id": "fx", "acp": "fixture", "credentials": {"account": "a", "token": SECRET}}]})
    done = _bridge("--check", "--sources", str(sources), "--root", str(fixture_root), "--project", str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert list(_lines(done.stdout)) == ["fx"] and done.stdout.rstrip().endswith("ok: every source is set up")


def test_print_config_checks_first(tmp_path, fixture_root, write_sources):
    sources = write_sources(fixture_root / "sources.json", '{"sources": [ {"id": "fx",, ')
    done = _bridge("--print-config", "--sources", str(sources), "--root", str(fixture_root), "--project", str(tmp_path))
    assert done.returncode == 1 and done.stdout == ""  # no snippet for a file that is not even JSON
    assert "not valid JSON" in done.stderr
    write_sources(sources, {"sources": [{"id": "fx", "acp": "fixture", "credentials": {"account": "a", "token": SECRET}}]})
    done = _bridge("--print-config", "--sources", str(sources), "--root", str(fixture_root), "--project", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "acp-bridge" in json.loads(done.stdout)["mcpServers"] and "ok" in done.stderr


def test_check_online_makes_one_call_per_source(tmp_path, fixture_root, write_sources):
    pytest.importorskip("analytics_acp_ga4")
    sys.path.insert(0, str(REPO / "connectors" / "google" / "tests"))
    from googlefakes import keys

    url = refused_url()
    sources = write_sources(fixture_root / "sources.json", {"sources": [
        {"id": "fx", "acp": "fixture", "credentials": {"account": "acct-a", "token": SECRET}},
        {"id": "down", "acp": "ga4", "credentials": keys.service_account_credentials(url + "/token"),
         "config": {"api_endpoint": url}},
    ]})
    args = ("--check", "--sources", str(sources), "--root", str(fixture_root), "--project", str(tmp_path))
    env = {"ANALYTICS_ACP_GOOGLE_DEADLINE_S": "5", "ANALYTICS_ACP_GOOGLE_TIMEOUT_S": "5", "ACP_CACHE_DIR": str(tmp_path / "c")}
    offline = _bridge(*args, env=env)
    assert offline.returncode == 0, offline.stdout + offline.stderr  # the setup is right: offline says ok
    online = _bridge(*args, "--online", env=env)
    assert online.returncode == 1, online.stdout + online.stderr
    lines = _lines(online.stdout)
    assert lines["fx"].startswith("ok ") and lines["down"].startswith("error ") and "ACP_UPSTREAM_ERROR" in lines["down"]


def test_check_and_print_config_load_no_sql_parser(tmp_path, write_sources):
    """--check/--print-config never parse SQL: sqlglot (0.4 CPU-s to import) stays out of them; the serving bridge
    still loads it at start (acp_query's first call does not pay it)."""
    sources = write_sources(tmp_path / "sources.json", {"sources": []})
    code = ("import sys; from analytics_acp_bridge.cli import main\n"
            f"codes = [main(['--check', '--sources', {str(sources)!r}, '--project', {str(tmp_path)!r}]),\n"
            f"         main(['--print-config', '--sources', {str(sources)!r}, '--project', {str(tmp_path)!r}])]\n"
            "loaded = 'sqlglot' in sys.modules\n"
            "import analytics_acp_bridge.serving.server\n"
            "print(codes, loaded, 'sqlglot' in sys.modules, file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[-1] == "[0, 0] False True", done.stderr
