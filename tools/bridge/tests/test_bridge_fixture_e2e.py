"""The bridge end to end with the test connector (acps/fixture): a real bridge process, a real
MCP ClientSession over stdio, a real ACP server underneath (16.4-16.6, 8.8.1, 8.10)."""

from __future__ import annotations

import csv
import json
import os
import signal
from types import SimpleNamespace

import pytest
import pytest_asyncio

TOKEN_A = "tok-aaaa-1111-secret"
TOKEN_B = "tok-bbbb-2222-secret"
BAD = "bad-token-value"


def sources(**extra):
    base = [
        {"id": "fx", "acp": "fixture", "label": "Fixture A", "credentials": {"account": "acct-a", "token": TOKEN_A}},
        {"id": "fx_b", "acp": "fixture", "label": "Fixture B", "credentials": {"account": "acct-b", "token": {"env": "BRIDGE_FX_TOKEN"}}},
        {"id": "fx_bad", "acp": "fixture", "credentials": {"account": "acct-c", "token": BAD}},
    ]
    return {"defaults": {"row_limit": 5}, "sources": base, **extra}


def datasets_of(project):
    return sorted(p.name for p in (project / "acp-data").glob("*.csv"))


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory, shared_bridge, write_sources):
    """One bridge over ``sources()`` for the tests that only call its tools (a bridge and a fixture server
    start each, about 3 CPU-s, saved per test). Each test reads only what its own calls made."""
    base = tmp_path_factory.mktemp("shared")
    root = shared_bridge.fixture_root(base / "root")
    project = base / "proj"
    (project / "acp-data").mkdir(parents=True)
    # The table_ref test's files, in place before the bridge starts as they were with a bridge of its own.
    (base / "outside.csv").write_text("v\n1000\n", encoding="utf-8")
    (project / "secret.csv").write_text("v\n5\n", encoding="utf-8")
    (project / "acp-data" / "Codigos.csv").write_text("cp,v\n08001,2\n28013,3\n", encoding="utf-8")
    write_sources(root / "sources.json", sources())
    async with shared_bridge.open(project, root, env={"BRIDGE_FX_TOKEN": TOKEN_B}) as client:
        yield SimpleNamespace(client=client, project=project, outside=base / "outside.csv")


@pytest.mark.asyncio(loop_scope="module")
async def test_bridge_fixture_multitable_one_dataset_per_table(shared):
    client, project = shared.client, shared.project
    before = set(datasets_of(project))  # the shared project: what other tests' calls saved is not this call's
    tools = await client.tools()
    assert tools["fx__multi"]["description"].startswith("[Fixture A · Bridge fixture] Three tables.")
    assert "acp-data" in tools["fx__multi"]["description"]
    is_error, response, notes = await client.call_json("fx__multi", {"big": 800})
    assert not is_error
    assert set(response["tables"]) == {"hits", "cookies", "network"} and "manifest" in response
    files = sorted(set(datasets_of(project)) - before)
    assert len(files) == 2  # cookies is empty, the manifest is not data (11.3)
    hits = next(f for f in files if f.startswith("fx_multi_hits_"))
    network = next(f for f in files if f.startswith("fx_multi_network_"))
    hits_id, network_id = hits[:-4], network[:-4]
    note = notes[0]
    assert f"Table «hits»: the full table was saved as dataset «{hits_id}» in acp-data/{hits_id}.csv. You saw 3 of 3 rows." in note
    assert f"dataset «{network_id}» in acp-data/{network_id}.csv." in note and "of 800 rows." in note
    assert "No data: cookies." in note
    data = project / "acp-data"
    assert (data / hits).read_bytes() == b"en,n\r\npage_view,1\r\nclick,2\r\nscroll,\r\n"
    with open(data / network, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 800 and rows[1] == {"n": "1", "label": "row-1-" + "x" * 400, "flag": "false", "obj": '{"i":1}'}
    meta = json.loads((data / f"{network_id}.meta.json").read_text(encoding="utf-8"))
    assert meta["title"] == "Fixture capture · Network" and meta["description"] == "Requests of the fixture."
    assert meta["source"] == "fx" and meta["acp"] == "fixture" and meta["tool"] == "multi" and meta["row_count"] == 800
    assert meta["headers"] == [{"name": "n", "type": "integer"}, {"name": "label", "type": "string"},
                               {"name": "flag", "type": "boolean"}, {"name": "obj", "type": "json"}]
    assert not list(data.glob(".*"))  # no temp files left behind


@pytest.mark.asyncio(loop_scope="module")
async def test_bridge_fixture_sources_share_one_process_and_secrets_never_leak(shared):
    client = shared.client
    await client.tools()
    _, a, _ = await client.call_json("fx__whoami")
    _, b, _ = await client.call_json("fx_b__whoami")
    assert a["pid"] == b["pid"]  # one server process for the ACP (16.4)
    assert (a["account"], b["account"]) == ("acct-a", "acct-b")  # credentials travel per call (5.2)
    assert (a["token_chars"], b["token_chars"]) == (len(TOKEN_A), len(TOKEN_B))
    # 16.5: session_id = conversation_id = bridge-<uuid>:<source>, one uuid per bridge start
    assert a["session_id"] == a["conversation_id"] and a["session_id"].endswith(":fx")
    assert b["session_id"] == b["session_id"].split(":")[0] + ":fx_b" and b["session_id"].startswith("bridge-")
    assert a["session_id"].split(":")[0] == b["session_id"].split(":")[0]
    assert a["call_id"] and a["call_id"] != b["call_id"]
    assert a["row_limit"] == 5 and a["host_tables"] is True and a["multi_table"] is True  # 4.1 capability, 5.2 limits
    is_error, bad, notes = await client.call_json("fx_bad__whoami")
    assert is_error and bad["error"]["name"] == "ACP_CREDENTIALS_INVALID"
    assert BAD not in bad["error"]["message"]
    _, leaked, _ = await client.call_json("fx__leak")
    assert leaked["debug"] == "called with token [redacted]"  # a careless server echoed it; the bridge scrubbed it
    assert "sources.json" in notes[0] and "fx_bad" in notes[0]
    is_error, cost, notes = await client.call_json("fx__priced")
    assert is_error and cost["error"]["name"] == "ACP_COST_LIMIT_EXCEEDED"  # cost_limit_usd 0 by default (9.2)
    assert "cost_limit_usd" in notes[0] and "sources.json" in notes[0]
    report = await client.sources_settled()
    entry = {s["id"]: s for s in report["sources"]}
    assert entry["fx"]["status"] == "ok" and entry["fx"]["has_credentials"] is True
    assert "fx__multi" in entry["fx"]["tools"] and entry["fx"]["limits"] == {"row_limit": 5}
    await client.call("fx__numbers", {"count": 12})
    await client.call("acp_datasets", {})
    everything = "\n".join(client.received)  # the shared client's: every test's answers so far, this one's included
    for secret in (TOKEN_A, TOKEN_B, BAD):
        assert secret not in everything


@pytest.mark.asyncio(loop_scope="module")
async def test_bridge_fixture_table_ref_resolution_and_traversal(shared):
    # The shared fixture wrote ../outside.csv, ../secret.csv (project) and acp-data/Codigos.csv before starting the bridge.
    client = shared.client
    await client.tools()
    is_error, response, notes = await client.call_json("fx__numbers", {"count": 30000})
    assert not is_error and response["total_rows"] == 30000 and response["returned_rows"] == 5
    dataset_id = notes[0].split("«")[1].split("»")[0]
    assert notes[0].startswith(f"The full extraction was saved as dataset «{dataset_id}» in acp-data/{dataset_id}.csv. You saw 5 of 30000 rows.")
    want = sum(i * i for i in range(30000))
    for ref in (dataset_id, f"{dataset_id}.csv", f"acp-data/{dataset_id}.csv"):  # 8.8.1 forms
        is_error, summed, _ = await client.call_json("fx__table_sum", {"table_ref": ref, "column": "sq"})
        assert not is_error and summed["rows"] == 30000 and summed["sum"] == want
    is_error, summed, _ = await client.call_json("fx__table_sum", {"table_ref": "Codigos.csv", "column": "v"})
    assert not is_error and summed["sum"] == 5 and summed["types"] == {"cp": "string", "v": "integer"}
    for ref in ("../outside.csv", "../secret.csv", str(shared.outside), "acp-data/../secret.csv",
                "../../outside", "/etc/passwd"):
        is_error, err, _ = await client.call_json("fx__table_sum", {"table_ref": ref, "column": "v"})
        assert is_error and err["error"]["code"] == -32021 and err["error"]["name"] == "ACP_TABLE_NOT_FOUND", ref
    _, listing, _ = await client.call_json("acp_datasets", {"filter": "codigos"})
    assert [d["id"] for d in listing["datasets"]] == ["codigos"] and listing["datasets"][0]["origin"] == "csv"
    _, q, _ = await client.call_json("acp_query", {"sql": f"SELECT COUNT(*) AS n, SUM(sq) AS s FROM {dataset_id}"})
    assert q["rows"] == [{"n": 30000, "s": want}]
    is_error, ro, _ = await client.call_json("acp_query", {"sql": f"DELETE FROM {dataset_id}"})
    assert is_error and ro["error"]["name"] == "ACP_READ_ONLY_VIOLATION"


async def test_bridge_fixture_dead_server_restarts(tmp_path, fixture_root, bridge, write_sources):
    project = tmp_path / "proj"
    project.mkdir()
    write_sources(fixture_root / "sources.json", sources())
    async with bridge(project, fixture_root, env={"BRIDGE_FX_TOKEN": TOKEN_B}) as client:
        await client.tools()
        _, first, _ = await client.call_json("fx__whoami")
        os.kill(first["pid"], signal.SIGKILL)
        is_error, failed, _ = await client.call_json("fx__whoami")
        assert is_error and failed["error"]["name"] == "ACP_UPSTREAM_ERROR"
        assert "stopped during this call" in failed["error"]["message"] and "retry" in failed["error"]["message"]
        is_error, second, _ = await client.call_json("fx__whoami")
        assert not is_error and second["pid"] != first["pid"]
        is_error, crashed, _ = await client.call_json("fx__crash")  # dies in the middle of a call
        assert is_error and "stopped during this call" in crashed["error"]["message"]
        is_error, third, _ = await client.call_json("fx_b__whoami")
        assert not is_error and third["pid"] not in (first["pid"], second["pid"]) and third["account"] == "acct-b"


@pytest.mark.asyncio(loop_scope="module")
async def test_bridge_fixture_artifacts(shared):
    client, project = shared.client, shared.project
    await client.tools()
    is_error, texts, raw = await client.call("fx__artifacts")
    assert not is_error
    images = [c for c in raw["content"] if c["type"] == "image"]
    assert len(images) == 1 and images[0]["mimeType"] == "image/png"
    response = json.loads(texts[0])
    assert response["pdf_path"] == "acp-data/files/deck.pdf" and response["saved"] is True
    assert (project / "acp-data" / "files" / "deck.pdf").read_bytes() == b"%PDF-1.4\n% fixture\n"
    assert (project / "acp-data" / "files" / "shot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert response["screenshot_path"].endswith("shot.png")  # 8.10: the JSON keeps the server's path
    assert "acp-data/files/shot.png" in texts[-1] and "acp-data/files/deck.pdf" in texts[-1]


async def test_bridge_fixture_sources_errors_are_reported(tmp_path, fixture_root, bridge, write_sources):
    project = tmp_path / "proj"
    project.mkdir()
    write_sources(fixture_root / "broken.json", '{"sources": [ {"id": "fx",, ')
    async with bridge(project, fixture_root, sources=fixture_root / "broken.json") as client:
        tools = await client.tools()
        assert set(tools) == {"acp_sources", "acp_datasets", "acp_query"}  # the bridge still starts
        _, report, _ = await client.call_json("acp_sources")
        assert report["status"] == "error" and "not valid JSON" in report["error"]
        assert "fixture" in report["installed_without_source"]
    write_sources(fixture_root / "mixed.json", {"sources": [
        {"id": "fx", "acp": "fixture", "credentials": {"account": "a", "token": TOKEN_A}},
        {"id": "nope", "acp": "not_installed"},
        {"id": "noenv", "acp": "fixture", "credentials": {"account": "a", "token": {"env": "BRIDGE_FX_UNSET"}}},
    ]})
    async with bridge(project, fixture_root, sources=fixture_root / "mixed.json") as client:
        tools = await client.tools()
        assert "fx__whoami" in tools and not any(t.startswith(("nope__", "noenv__")) for t in tools)
        report = await client.sources_settled()
        by_id = {s["id"]: s for s in report["sources"]}
        assert by_id["fx"]["status"] == "ok"
        assert by_id["nope"]["status"] == "error" and "not installed" in by_id["nope"]["error"]["message"]
        assert by_id["noenv"]["status"] == "error" and "BRIDGE_FX_UNSET is not set" in by_id["noenv"]["error"]["message"]


async def test_bridge_fixture_servers_that_fail_to_start(tmp_path, fixture_root, bridge, write_sources):
    project = tmp_path / "proj"
    project.mkdir()
    for name, code in (("dies", "import sys; sys.exit(1)"), ("hangs", "import time; time.sleep(600)")):
        (fixture_root / "acps" / name).mkdir()
        (fixture_root / "acps" / name / "acp.json").write_text(json.dumps({
            "acp_version": "1.0", "id": name, "name": name, "version": "0.1.0", "description": "broken",
            "transport": {"type": "stdio", "command": "python", "args": ["-c", code]},
        }), encoding="utf-8")
    write_sources(fixture_root / "sources.json", {"sources": [
        {"id": "a", "acp": "dies"}, {"id": "b", "acp": "hangs"},
        {"id": "fx", "acp": "fixture", "credentials": {"account": "a", "token": TOKEN_A}},
    ]})
    # The hanging server holds the tool list for the whole start bound: short here (was 15 s), yet roomy
    # for the fixture server, which must start within the same bound (about 1 CPU-s, several s under load).
    async with bridge(project, fixture_root, env={"ACP_BRIDGE_START_TIMEOUT": "8"}) as client:
        tools = await client.tools()
        assert "fx__whoami" in tools and not any(t.startswith(("a__", "b__")) for t in tools)
        report = await client.sources_settled()
        by_id = {s["id"]: s for s in report["sources"]}
        assert by_id["a"]["status"] == "error" and "did not start" in by_id["a"]["error"]["message"]
        assert by_id["b"]["status"] == "error" and "within 8 s" in by_id["b"]["error"]["message"]
        is_error, who, _ = await client.call_json("fx__whoami")
        assert not is_error and who["account"] == "a"


async def test_bridge_fixture_modern_mcp_client(tmp_path, fixture_root, write_sources):
    """The bridge is plain MCP upward: the SDK's high-level Client (2026-07-28 era, no initialize) works too."""
    import sys

    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    project = tmp_path / "proj"
    project.mkdir()
    write_sources(fixture_root / "sources.json", sources())
    params = StdioServerParameters(command=sys.executable, args=["-m", "analytics_acp_bridge", "--project", str(project),
                                                                 "--root", str(fixture_root)],
                                   env={**os.environ, "BRIDGE_FX_TOKEN": TOKEN_B})
    async with Client(params) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert "fx__numbers" in names and "acp_query" in names
        result = await client.call_tool("fx__numbers", {"count": 7})
        assert not result.is_error
        assert "You saw 5 of 7 rows." in result.content[1].text


async def test_bridge_fixture_logs_never_carry_a_secret(tmp_path, fixture_root, bridge, write_sources):
    """16.8: the bridge's stderr (a desktop client keeps it as a log) is scrubbed, including what servers print."""
    import anyio

    project = tmp_path / "proj"
    project.mkdir()
    write_sources(fixture_root / "sources.json", sources())
    log_path = tmp_path / "bridge.stderr"
    with open(log_path, "w", encoding="utf-8") as errlog:
        env = {"BRIDGE_FX_TOKEN": TOKEN_B, "ACP_BRIDGE_LOG": "DEBUG"}  # DEBUG: the libraries log requests too
        async with bridge(project, fixture_root, env=env, errlog=errlog) as client:
            await client.tools()
            for tool in ("fx__noisy", "fx_b__noisy", "fx_bad__whoami", "fx__numbers"):
                await client.call(tool, {})
            # Readiness wait for the relayed lines (the relay is a thread), not a timing assertion.
            with anyio.move_on_after(60):
                while log_path.read_text(encoding="utf-8").count("fixture debug: token=") < 2:
                    await anyio.sleep(0.05)
    log = log_path.read_text(encoding="utf-8")
    assert log.count("fixture debug: token=[redacted]") == 2, log[-3000:]
    for secret in (TOKEN_A, TOKEN_B, BAD, "acct-a"):  # logs also hide literal credential values
        assert secret not in log
