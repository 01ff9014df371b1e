"""A bridge that notices (issue 34.3): sources.json edited while a real bridge runs, seen by an MCP ClientSession.

One bridge for the module (the test connector in acps/fixture, and the same connector as a second ACP in
acps/fixture2 so that a server can be seen to stop), watching its sources.json every 0.2 s. A good edit starts
what it needs, stops what is no longer used and sends notifications/tools/list_changed (the capability says
listChanged); a broken edit keeps the running sources and says why in acp_sources and the log. Each test writes
the whole file it needs, so they do not depend on their order.
"""

from __future__ import annotations

import json
import os
import shutil
import threading

import anyio
import mcp_types as types
import pytest
import pytest_asyncio

SECRET_A = "tok-reload-AAAA-5150"
SECRET_B = "tok-reload-BBBB-6160"
BOUND_S = 120.0  # generous: CI runs under load; no assertion is about time


def _fx(label: str = "X", token: str = SECRET_A) -> dict:
    return {"id": "fx", "acp": "fixture", "label": label, "credentials": {"account": "acct-a", "token": token}}


class Watcher:
    """The client side: list_changed notifications counted as they arrive."""

    def __init__(self) -> None:
        self.changed = 0
        self.lock = threading.Lock()

    async def handler(self, message) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            with self.lock:
                self.changed += 1


@pytest.fixture(scope="module")
def world(tmp_path_factory, shared_bridge, write_sources):
    base = tmp_path_factory.mktemp("reload")
    root = shared_bridge.fixture_root(base / "root")
    shutil.copytree(root / "acps" / "fixture", root / "acps" / "fixture2")
    project = base / "project"
    project.mkdir()
    sources = write_sources(root / "sources.json", {"sources": [_fx()]})
    return {"root": root, "project": project, "sources": sources, "log": base / "bridge.stderr", "watcher": Watcher()}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def client(world, shared_bridge):
    with open(world["log"], "w", encoding="utf-8") as errlog:
        async with shared_bridge.open(world["project"], world["root"], sources=world["sources"], errlog=errlog,
                                      env={"ACP_BRIDGE_WATCH_S": "0.2"}, message_handler=world["watcher"].handler) as opened:
            assert "fx__whoami" in await opened.tools()
            initialized = opened.session.initialize_result
            assert initialized is not None and initialized.capabilities.tools.list_changed is True
            yield opened


async def _edit(world, data, *, changes: bool):
    """Write sources.json; with ``changes`` wait for the list_changed it causes (bounded)."""
    watcher = world["watcher"]
    before = watcher.changed
    text = data if isinstance(data, str) else json.dumps(data)
    tmp = world["sources"].with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, world["sources"])  # as editors save: a new file in place
    if changes:
        with anyio.fail_after(BOUND_S):
            while watcher.changed == before:
                await anyio.sleep(0.05)


async def _sources_when(client, check, what: str) -> dict:
    """acp_sources once ``check(report)`` holds (polled, bounded)."""
    with anyio.fail_after(BOUND_S):
        while True:
            _, report, _ = await client.call_json("acp_sources")
            if check(report):
                return report
            await anyio.sleep(0.05)
    raise AssertionError(what)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.asyncio(loop_scope="module")
async def test_a_good_edit_starts_and_stops_servers_and_tells_the_client(world, client):
    await _edit(world, {"sources": [_fx("X1"), {"id": "fy", "acp": "fixture2", "label": "Y",
                                                "credentials": {"account": "acct-b", "token": SECRET_B}}]}, changes=True)
    tools = await client.tools()  # a client that does not listen gets the same on its next tools/list
    assert {"fx__whoami", "fy__whoami"} <= set(tools) and tools["fy__whoami"]["description"].startswith("[Y · ")
    is_error, fy, _ = await client.call_json("fy__whoami")
    assert not is_error and fy["account"] == "acct-b" and fy["token_chars"] == len(SECRET_B)
    _, fx, _ = await client.call_json("fx__whoami")
    assert fx["pid"] != fy["pid"]  # fixture2 is a server of its own, started by the edit

    await _edit(world, {"sources": [_fx("X2")]}, changes=True)  # fy removed: its tools go, its server stops
    tools = await client.tools()
    assert "fy__whoami" not in tools and tools["fx__whoami"]["description"].startswith("[X2 · ")
    with anyio.fail_after(BOUND_S):
        while _alive(fy["pid"]):
            await anyio.sleep(0.05)
    _, fx_again, _ = await client.call_json("fx__whoami")
    assert fx_again["pid"] == fx["pid"]  # an unchanged ACP keeps its server
    is_error, answer, _ = await client.call_json("fy__whoami")
    assert is_error and "Unknown tool" in answer["error"]["message"]
    report = await _sources_when(client, lambda r: r["status"] == "ok", "fx ok")
    assert [s["id"] for s in report["sources"]] == ["fx"] and "reload" not in report
    assert SECRET_A not in "\n".join(client.received) and SECRET_B not in "\n".join(client.received)


@pytest.mark.asyncio(loop_scope="module")
async def test_a_broken_edit_keeps_the_running_sources_and_says_why(world, client):
    await _edit(world, {"sources": [_fx("B1")]}, changes=True)
    listed = await client.tools()
    changed = world["watcher"].changed

    await _edit(world, '{"sources": [ {"id": "fx",, ', changes=False)
    report = await _sources_when(client, lambda r: "not valid JSON" in json.dumps(r.get("reload")), "refused: JSON")
    assert report["reload"]["status"] == "refused" and report["reload"]["error"]["name"] == "ACP_INVALID_ARGUMENTS"
    assert "the running sources are unchanged" in report["reload"]["error"]["message"]
    assert report["sources"][0]["status"] == "ok" and "fx__whoami" in report["sources"][0]["tools"]
    assert "without restarting" in report["applies"]

    # A working source whose new entry fails the ACP's schema: not applied, the source keeps working as it was.
    await _edit(world, {"sources": [{"id": "fx", "acp": "fixture", "label": "B2", "credentials": {"account": "acct-a"}}]},
                changes=False)
    report = await _sources_when(client, lambda r: "would stop working" in json.dumps(r.get("reload")), "refused: fx")
    refused = report["reload"]
    assert refused["error"]["name"] == "ACP_CREDENTIALS_INVALID" and "«fx»" in refused["error"]["message"]
    assert "missing required field(s) token" in refused["error"]["message"] and str(world["sources"]) in refused["fix"]
    assert [v["id"] for v in refused["sources"]] == ["fx"]
    is_error, fx, _ = await client.call_json("fx__whoami")
    assert not is_error and fx["token_chars"] == len(SECRET_A)  # still the running entry's credentials
    assert await client.tools() == listed and world["watcher"].changed == changed  # nothing changed: no list_changed

    await _edit(world, {"sources": [_fx("B1")]}, changes=False)  # back to what runs: applied, nothing to announce
    await _sources_when(client, lambda r: "reload" not in r, "the refusal cleared")
    log = world["log"].read_text(encoding="utf-8")
    assert log.count("was not applied; the running sources are unchanged") >= 2
    assert SECRET_A not in log and SECRET_A not in "\n".join(client.received)
