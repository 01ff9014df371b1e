"""4.3 in the bridge: a server in acps/ whose initialize has no experimental.acp, or announces another
major version, is used as plain MCP. Its tools work with the model's arguments, but it never receives
_meta.acp, the source's credentials or acp/configure, and acp_sources shows it as MCP with the reason.
The servers are the bare-SDK fixture server of the build tests, which records every request."""

import json
import shutil
from pathlib import Path

import pytest

RAW_SERVER = Path(__file__).resolve().parents[3] / "tests" / "build_fixtures" / "raw_acp_server.py"
SECRET = "HUNTER2-c0ffee42"

pytestmark = pytest.mark.asyncio


def _server(root: Path, ident: str, flags: list[str]) -> None:
    folder = root / "acps" / ident
    folder.mkdir(parents=True)
    shutil.copy(RAW_SERVER, folder / "server.py")
    (folder / "acp.json").write_text(json.dumps({
        "acp_version": "1.0", "id": ident, "name": f"Raw {ident}", "version": "0.1.0",
        "transport": {"type": "stdio", "command": "python", "args": ["server.py", *flags]},
    }))


async def test_plain_mcp_and_other_major_servers_get_nothing_of_acp(tmp_path, write_sources, fixture_root, bridge):
    _server(fixture_root, "plainmcp", ["--no-acp"])
    _server(fixture_root, "future", ["--acp-version", "2.0"])
    _server(fixture_root, "minor", ["--acp-version", "1.4"])  # control: an ACP 1.x server does get _meta.acp
    project = tmp_path / "project"
    creds = {"type": "url", "url": f"postgresql://u:{SECRET}@127.0.0.1/db"}
    write_sources(project / "sources.json", {"sources": [
        {"id": sid, "acp": sid, "label": sid.title(), "credentials": creds, "config": {"region": "eu"}, "row_limit": 7}
        for sid in ("plainmcp", "future", "minor")
    ]})
    record = tmp_path / "requests.jsonl"
    async with bridge(project, root=fixture_root, sources=project / "sources.json", env={"RAW_ACP_RECORD": str(record)}) as client:
        tools = await client.tools()
        _, report, _ = await client.call_json("acp_sources", {})
        assert {"plainmcp__hello", "future__hello", "minor__hello"} <= set(tools), report
        for sid in ("plainmcp", "future", "minor"):
            is_error, response, _ = await client.call_json(f"{sid}__hello", {})
            assert not is_error and response == {"hello": "world"}, sid
        report = await client.sources_settled()  # the start-up probe has answered
    by_id = {s["id"]: s for s in report["sources"]}
    assert by_id["plainmcp"]["protocol"] == "mcp" and by_id["plainmcp"]["status"] == "ok"
    assert "does not announce capabilities.experimental.acp" in by_id["plainmcp"]["protocol_reason"]
    assert by_id["future"]["protocol"] == "mcp" and "announces ACP 2.0" in by_id["future"]["protocol_reason"]
    assert any("never sent" in w for w in by_id["future"]["warnings"])
    assert by_id["minor"]["protocol"] == "acp" and "protocol_reason" not in by_id["minor"]
    calls = [json.loads(line) for line in record.read_text().splitlines()]
    metas = {c["params"]["_meta"].get("acp") is not None for c in calls
             if c["method"] == "tools/call" and c["params"].get("_meta")}
    assert metas == {True}  # only the control server got _meta.acp ...
    sent_to_acp = [c for c in calls if c["method"] == "tools/call" and (c["params"].get("_meta") or {}).get("acp")]
    # the start-up probe of the ACP source (autocontext, issue 15.7) and the model's call; none to the plain ones
    assert sorted(c["params"]["name"] for c in sent_to_acp) == ["autocontext", "hello"]
    assert all(c["params"]["_meta"]["acp"]["row_limit"] == 7 for c in sent_to_acp)
    # ... and no request at all reached the two plain servers with a credential or acp/configure in it.
    plain = [c for c in calls if c not in sent_to_acp and c["method"] != "initialize"]
    assert not any(c["method"] == "acp/configure" for c in calls)
    assert SECRET not in json.dumps(plain) and "credentials" not in json.dumps(plain)
