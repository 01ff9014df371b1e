"""One validator (issue 34.1) and paths people can predict (34.2): the set-ups a new user's trial found answered
``ok`` by ``bridge --check`` and then failing in the chat, now refused offline with the spec's codes, by the
command, by ``--print-config`` and by the serving bridge alike (its failing sources publish no tools).

One sources.json for the module, in a folder of its own; every command runs with the current folder elsewhere
(a desktop client starts the bridge who knows where). The databases and ga4 ACPs say what they know through
validate-only acp/configure; the bridge knows neither. No network: no Google endpoint is ever reached.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("analytics_acp_databases")
pytest.importorskip("analytics_acp_ga4")

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "connectors" / "google" / "tests"))
from googlefakes import keys  # noqa: E402

SECRET = "SETUP-CHECK-SECRET-7c1e"
TOKEN_URI = "http://127.0.0.1:9/token"  # never called: every check here is offline


def _db(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (n INTEGER)")
        conn.executemany("INSERT INTO t VALUES (?)", [(1,), (2,), (3,)])


def _sqlite(path) -> dict:
    return {"type": "sqlite", "path": path}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    base = tmp_path_factory.mktemp("setup")
    conf, start, project = base / "conf", base / "start", base / "project"
    project.mkdir()
    _db(conf / "data" / "shop.sqlite")  # relative to sources.json: found wherever the bridge starts
    _db(start / "data" / "old.sqlite")  # relative to the start folder only: the old rule found it
    key = keys.service_account_info(TOKEN_URI)
    (conf / "no-private-key.json").write_text(json.dumps({k: v for k, v in key.items() if k != "private_key"}))
    (conf / "client_secret.json").write_text(json.dumps({"installed": {
        "client_id": "1.apps.googleusercontent.com", "client_secret": SECRET,
        "auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": "https://oauth2.googleapis.com/token"}}))
    garbage = {**key, "private_key": f"-----BEGIN PRIVATE KEY-----\n{SECRET}\n-----END PRIVATE KEY-----\n"}
    sources = conf / "sources.json"
    sources.write_text(json.dumps({"mcpServers": {"kept": "keys beside sources are left alone"}, "sources": [
        {"id": "shop", "acp": "databases", "credentials": _sqlite("data/shop.sqlite")},
        {"id": "old", "acp": "databases", "credentials": _sqlite("data/old.sqlite")},
        {"id": "gone", "acp": "databases", "credentials": _sqlite({"projectPath": "data/missing.sqlite"})},
        {"id": "nocreds", "acp": "ga4"},
        {"id": "typo", "acp": "ga4", "credentails": {"file": "no-private-key.json"}},
        {"id": "badkey", "acp": "ga4", "credentials": {"type": "service_account", "service_account": json.dumps(garbage)}},
        {"id": "oauthfile", "acp": "ga4",
         "credentials": {"type": "service_account", "service_account": {"file": "client_secret.json"}}},
        {"id": "nopk", "acp": "ga4", "credentials": {"file": "no-private-key.json"}},
        {"id": "ga5", "acp": "ga5"},
        {"id": "rows", "acp": "databases", "row_limit": 9000, "credentials": _sqlite("data/shop.sqlite")},
    ]}), encoding="utf-8")
    env = {**os.environ, "ACP_CACHE_DIR": str(base / "cache")}
    return {"conf": conf, "start": start, "project": project, "sources": sources, "env": env}


def _bridge(world, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "analytics_acp", "bridge", *args, "--sources", str(world["sources"]),
                           "--project", str(world["project"]), "--root", str(world["conf"])],
                          capture_output=True, text=True, timeout=240, env=world["env"], cwd=world["start"])


def _lines(out: str) -> dict[str, str]:
    return {line.split()[1]: line for line in out.splitlines() if line.split()[:1] in (["ok"], ["error"])}


EXPECTED = {  # source -> (status, error name, words its line must hold)
    "shop": ("ok", None, []),
    "old": ("error", "ACP_CREDENTIALS_INVALID", ["data/old.sqlite", "now start at its folder"]),
    "gone": ("error", "ACP_CREDENTIALS_INVALID", ["does not exist"]),
    "nocreds": ("error", "ACP_CREDENTIALS_MISSING", ["needs credentials"]),
    "typo": ("error", "ACP_INVALID_ARGUMENTS", ["unknown field 'credentails' (did you mean 'credentials'?)"]),
    "badkey": ("error", "ACP_CREDENTIALS_INVALID", ["private_key is not a valid RSA key"]),
    "oauthfile": ("error", "ACP_CREDENTIALS_INVALID", ["OAuth client-secrets file, not a service account key"]),
    "nopk": ("error", "ACP_CREDENTIALS_INVALID", ["lacks private_key"]),
    "ga5": ("error", "ACP_INVALID_ARGUMENTS", ["'ga5' is not installed", "Installed:", "databases"]),
    "rows": ("error", "ACP_INVALID_LIMIT", ["row_limit must be an integer from 0 to 5000"]),
}


def test_check_refuses_the_trial_set_ups_offline_with_typed_codes(world):
    done = _bridge(world, "--check")
    assert done.returncode == 1, done.stdout + done.stderr
    lines = _lines(done.stdout)
    assert list(lines) == list(EXPECTED), done.stdout
    for sid, (status, name, words) in EXPECTED.items():
        line = lines[sid]
        assert line.startswith(f"{status} "), line
        if name:
            assert f": {name}: " in line and "Fix: " in line and "ask the user" not in line.lower(), line
        for word in words:
            assert word in line, (word, line)
    conf, start, project = world["conf"], world["start"], world["project"]
    # Every message shows the full path it tried; the start folder's rule is explained, with the path to write.
    assert str(conf / "data" / "old.sqlite") in lines["old"] and str(start / "data" / "old.sqlite") in lines["old"]
    assert str(project / "data" / "missing.sqlite") in lines["gone"]  # projectPath stays relative to the project
    assert done.stdout.rstrip().endswith(f"error: fix the sources above in {world['sources']} (a running bridge applies the saved file)")
    assert SECRET not in done.stdout + done.stderr and "BEGIN PRIVATE" not in done.stdout + done.stderr
    assert "ok: every source is set up" not in done.stdout
    assert not (project / "acp-data").exists()


def test_print_config_refuses_a_set_up_that_fails(world, tmp_path):
    # The entries alone fail here (no ACP server needs to start): the refusal is the check's, not a parse error's.
    sources = tmp_path / "sources.json"
    entries = json.loads(world["sources"].read_text(encoding="utf-8"))["sources"]
    sources.write_text(json.dumps({"sources": [e for e in entries if e["id"] in ("typo", "rows")]}), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "analytics_acp", "bridge", "--print-config", "--sources", str(sources),
                           "--project", str(world["project"]), "--root", str(tmp_path)],
                          capture_output=True, text=True, timeout=240, env=world["env"], cwd=world["start"])
    assert done.returncode == 1 and done.stdout == "", done.stdout  # no mcpServers snippet
    assert "did you mean 'credentials'?" in done.stderr and "ACP_INVALID_LIMIT" in done.stderr


async def test_the_serving_bridge_gives_the_same_verdicts_and_publishes_only_what_works(world, bridge):
    async with bridge(world["project"], world["conf"], sources=world["sources"], env={"ACP_CACHE_DIR": world["env"]["ACP_CACHE_DIR"]},
                      cwd=world["start"]) as client:
        tools = await client.tools()
        published = {name.split("__")[0] for name in tools if "__" in name}
        assert published == {"shop"}  # nopk's key has no private_key: none of its tools (the trial saw them published)
        report = await client.sources_settled()
        by_id = {s["id"]: s for s in report["sources"]}
        for sid, (status, name, _) in EXPECTED.items():
            assert by_id[sid]["status"] == status, (sid, by_id[sid])
            assert (by_id[sid].get("error") or {}).get("name") == name, (sid, by_id[sid])
        # A relative SQLite path works from the sources.json folder, whatever folder the bridge started in.
        is_error, answer, _ = await client.call_json("shop__execute_sql", {"sql": "SELECT SUM(n) AS total FROM t"})
        assert not is_error and answer["rows"] == [{"total": 6}], answer
    assert SECRET not in "\n".join(client.received)
