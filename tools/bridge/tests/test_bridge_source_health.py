"""Source health in the bridge (issues 23.1 and 26.5): a real bridge process and MCP ClientSession.

- A source whose setup fails (credentials failing the ACP's credentials_schema, an unset env variable,
  an ACP that is not installed) publishes no tools; acp_sources shows it as ``error`` with the typed
  error naming the field or variable (never a value) and what to change in sources.json; its calls
  answer ACP_CREDENTIALS_INVALID with the 16.5 note, never ACP_UPSTREAM_ERROR.
- Top-level status: ``ok`` only when every source is, else ``degraded`` with the counts.
- Sources start in the background: acp_sources answers while a source's first call waits on a silent
  upstream (status ``starting``); a source whose upstream refuses keeps its tools, its calls are typed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "tests"))
from silent import SilentListener, refused_url  # noqa: E402

LITERAL = "tok-literal-SECRET-9876"


async def test_setup_errors_publish_no_tools_and_answer_credentials_invalid(tmp_path, fixture_root, bridge, write_sources):
    project = tmp_path / "proj"
    project.mkdir()
    sources_path = write_sources(fixture_root / "sources.json", {"sources": [
        {"id": "fx", "acp": "fixture", "credentials": {"account": "acct-a", "token": "tok-aaaa-1111-secret"}},
        {"id": "noschema", "acp": "fixture", "credentials": {"account": "acct-b"}},  # token missing
        {"id": "badtype", "acp": "fixture", "credentials": {"account": 12345, "token": LITERAL}},
        {"id": "noenv", "acp": "fixture", "credentials": {"account": "a", "token": {"env": "BRIDGE_FX_UNSET_VAR"}}},
        {"id": "nope", "acp": "not_installed"},
    ]})
    async with bridge(project, fixture_root) as client:
        tools = await client.tools()
        assert "fx__whoami" in tools
        assert not [t for t in tools if t.split("__")[0] in ("noschema", "badtype", "noenv", "nope")]
        report = await client.sources_settled()
        by_id = {s["id"]: s for s in report["sources"]}
        assert by_id["fx"]["status"] == "ok" and "error" not in by_id["fx"]
        typed = {"noschema": ("ACP_CREDENTIALS_INVALID", -32012), "badtype": ("ACP_CREDENTIALS_INVALID", -32012),
                 "noenv": ("ACP_CREDENTIALS_MISSING", -32011), "nope": ("ACP_INVALID_ARGUMENTS", -32017)}
        for sid, (name, code) in typed.items():  # issue 34.1: an unknown ACP is a set-up problem, not credentials
            entry = by_id[sid]
            assert entry["status"] == "error" and entry["tools"] == [], sid
            assert entry["error"]["name"] == name and entry["error"]["code"] == code, sid
            assert str(sources_path) in entry["fix"] and "restart" not in entry["fix"], sid
        assert "missing required field(s) token" in by_id["noschema"]["error"]["message"]
        assert "account must be of type string" in by_id["badtype"]["error"]["message"]
        assert '"credentials"' in by_id["badtype"]["fix"]
        assert "BRIDGE_FX_UNSET_VAR is not set" in by_id["noenv"]["error"]["message"]
        assert "not installed" in by_id["nope"]["error"]["message"] and "fixture" in by_id["nope"]["fix"]
        assert report["status"] == "degraded" and report["counts"] == {"ok": 1, "starting": 0, "error": 4}

        for sid in ("noenv", "noschema"):  # before: an unset variable answered ACP_UPSTREAM_ERROR ("retry later")
            is_error, answer, notes = await client.call_json(f"{sid}__whoami")
            assert is_error and answer["error"]["name"] == typed[sid][0], answer
            assert f"«{sid}»" in answer["error"]["message"] and "sources.json" in notes[0] and f"«{sid}»" in notes[0]
        is_error, who, _ = await client.call_json("fx__whoami")
        assert not is_error and who["account"] == "acct-a"
    assert LITERAL not in "\n".join(client.received)


async def test_top_level_ok_only_when_every_source_is(tmp_path, fixture_root, bridge, write_sources):
    project = tmp_path / "proj"
    project.mkdir()
    write_sources(fixture_root / "sources.json", {"sources": [
        {"id": "fx", "acp": "fixture", "credentials": {"account": "acct-a", "token": "tok-aaaa-1111-secret"}}]})
    async with bridge(project, fixture_root) as client:
        report = await client.sources_settled()
    assert report["status"] == "ok" and "counts" not in report and report["sources"][0]["status"] == "ok"


def _ga4_source(sid: str, url: str) -> dict:
    sys.path.insert(0, str(REPO / "connectors" / "google" / "tests"))
    from googlefakes import keys

    return {"id": sid, "acp": "ga4", "default_resource_id": "123456789",
            "credentials": keys.service_account_credentials(url + "/token"), "config": {"api_endpoint": url}}


async def test_acp_sources_answers_while_a_source_waits_on_a_silent_upstream(tmp_path, bridge, write_sources):
    pytest.importorskip("analytics_acp_ga4")
    project = tmp_path / "proj"
    project.mkdir()
    with SilentListener() as listener:
        write_sources(project / "sources.json", {"sources": [_ga4_source("slow", listener.url)]})
        # Google's own bounds and the probe's are minutes here: only an answer that does not wait for them passes.
        env = {"ANALYTICS_ACP_GOOGLE_DEADLINE_S": "600", "ANALYTICS_ACP_GOOGLE_TIMEOUT_S": "600",
               "ACP_BRIDGE_PROBE_TIMEOUT": "600", "ACP_CACHE_DIR": str(tmp_path / "cache")}
        async with bridge(project, env=env) as client:
            tools = await client.tools()  # waits for the ga4 server to start locally, never for Google
            assert "slow__run_report" in tools
            assert listener.wait_for_connection(), "the start-up probe never reached the upstream"
            _, report, _ = await client.call_json("acp_sources")
            [entry] = report["sources"]
            assert entry["status"] == "starting" and "slow__run_report" in entry["tools"]
            assert report["status"] == "degraded" and report["counts"]["starting"] == 1


async def test_a_source_whose_upstream_refuses_keeps_its_tools_and_calls_are_typed(tmp_path, bridge, write_sources):
    pytest.importorskip("analytics_acp_ga4")
    project = tmp_path / "proj"
    project.mkdir()
    write_sources(project / "sources.json", {"sources": [_ga4_source("down", refused_url())]})
    env = {"ANALYTICS_ACP_GOOGLE_DEADLINE_S": "5", "ANALYTICS_ACP_GOOGLE_TIMEOUT_S": "5", "ACP_CACHE_DIR": str(tmp_path / "cache")}
    async with bridge(project, env=env) as client:
        # Called right after initialize: the source may still be starting; the call waits for its server.
        is_error, answer, _ = await client.call_json("down__run_report", {"metrics": ["sessions"], "dimensions": ["date"]})
        assert is_error and answer["error"]["name"] == "ACP_UPSTREAM_ERROR", answer
        assert "down__run_report" in await client.tools()
        report = await client.sources_settled()
    [entry] = report["sources"]
    assert entry["status"] == "error" and entry["error"]["name"] == "ACP_UPSTREAM_ERROR"
    assert "down__run_report" in entry["tools"] and "network" in entry["fix"]
    assert report["status"] == "degraded" and report["counts"] == {"ok": 0, "starting": 0, "error": 1}
