"""Bridge test harness: a real bridge process driven by the MCP Python SDK's ClientSession over stdio."""

from __future__ import annotations

import json
import os
import shutil
import sys
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

FIXTURE_ACP = Path(__file__).resolve().parent / "fixture_acp"


class BridgeClient:
    """A ClientSession on a bridge, recording every text the client receives (for the secret checks)."""

    def __init__(self, session: ClientSession):
        self.session = session
        self.received: list[str] = []

    async def tools(self) -> dict[str, dict]:
        listing = await self.session.list_tools()
        tools = {t.name: t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in listing.tools}
        self.received.append(json.dumps(tools, ensure_ascii=False))
        return tools

    async def call(self, name: str, arguments: dict | None = None):
        """Call a tool; returns (is_error, texts, raw result dict)."""
        result = await self.session.call_tool(name, arguments or {})
        raw = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        self.received.append(json.dumps(raw, ensure_ascii=False))
        texts = [c["text"] for c in raw["content"] if c["type"] == "text"]
        return bool(raw.get("isError")), texts, raw

    async def call_json(self, name: str, arguments: dict | None = None):
        """Call a tool; returns (is_error, parsed content[0], the other text blocks)."""
        is_error, texts, _ = await self.call(name, arguments)
        return is_error, json.loads(texts[0]), texts[1:]

    async def sources_settled(self, bound_s: float = 120.0) -> dict:
        """acp_sources once no source is ``starting`` any more (it answers at once; polled, bounded)."""
        import anyio

        with anyio.fail_after(bound_s):
            while True:
                _, report, _ = await self.call_json("acp_sources")
                if all(s["status"] != "starting" for s in report["sources"]):
                    return report
                await anyio.sleep(0.1)


@asynccontextmanager
async def open_bridge(project: Path, root: Path | None = None, sources: Path | None = None, env: dict | None = None,
                      errlog=None, extensions: dict | None = None, message_handler=None, cwd: Path | None = None):
    """Start ``python -m analytics_acp_bridge`` as an MCP stdio server and initialize a ClientSession.

    ``errlog``: a file that receives the bridge's stderr (default: the test's stderr). ``extensions``: the
    client's extension capabilities (MCP Apps: ``{"io.modelcontextprotocol/ui": {"mimeTypes": [...]}}``).
    ``message_handler``: the ClientSession's handler of server notifications; ``cwd``: the folder it starts in
    (default: the project).
    """
    args = ["-m", "analytics_acp_bridge", "--project", str(project)]
    if root is not None:
        args += ["--root", str(root)]
    if sources is not None:
        args += ["--sources", str(sources)]
    params = StdioServerParameters(command=sys.executable, args=args, env={**os.environ, **(env or {})},
                                   cwd=str(cwd or project))
    async with stdio_client(params, errlog=errlog or sys.stderr) as (read, write):
        async with ClientSession(read, write, extensions=extensions, message_handler=message_handler) as session:
            await session.initialize()
            yield BridgeClient(session)


@asynccontextmanager
async def held_bridge(*args, bound_s: float = 240.0, **kwargs):
    """``open_bridge`` kept open by a task of its own, for a module-scoped fixture: pytest-asyncio sets a
    fixture up and tears it down in different tasks, and anyio's scopes (the stdio client's) must be
    left in the task that entered them. Calls on the client work from any task of the same loop."""
    import asyncio

    opened: asyncio.Future = asyncio.get_running_loop().create_future()
    stop = asyncio.Event()

    async def hold() -> None:
        async with open_bridge(*args, **kwargs) as client:
            opened.set_result(client)
            await stop.wait()

    task = asyncio.create_task(hold())
    await asyncio.wait({opened, task}, timeout=bound_s, return_when=asyncio.FIRST_COMPLETED)
    if not opened.done():
        if task.done():
            task.result()  # the bridge failed to open: its own exception says why
        task.cancel()
        raise AssertionError(f"the shared bridge did not open within {bound_s:g} s")
    try:
        yield opened.result()
    finally:
        stop.set()
        await asyncio.wait_for(task, bound_s)


def copy_fixture_acp(root: Path) -> Path:
    """``root``/acps/fixture: the test connector folder (13.1); returns ``root``."""
    shutil.copytree(FIXTURE_ACP, root / "acps" / "fixture", ignore=shutil.ignore_patterns("__pycache__"))
    return root


@pytest.fixture
def fixture_root(tmp_path):
    """A bridge root whose acps/ holds the test connector folder (13.1)."""
    return copy_fixture_acp(tmp_path / "root")


def _write_sources(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.fixture(scope="session")  # a plain function: module-scoped fixtures (a shared bridge) use it too
def write_sources():
    """``write_sources(path, data)`` writes a sources.json (data: dict, or raw text for broken files)."""
    return _write_sources


@pytest.fixture(scope="session")  # a plain function: module-scoped fixtures (a shared bridge) use it too
def bridge():
    """``bridge(project, root=None, sources=None, env=None, errlog=None)``: async context manager yielding a BridgeClient."""
    return open_bridge


@pytest.fixture(scope="session")
def shared_bridge():
    """For a module-scoped fixture: ``.open(project, root=None, ...)`` is ``held_bridge`` (``open_bridge`` kept
    by a task of its own), ``.fixture_root(root)`` copies the test connector under ``root``."""
    from types import SimpleNamespace

    return SimpleNamespace(open=held_bridge, fixture_root=copy_fixture_acp)


@pytest.fixture
def until():
    """``until(check, what, tries=2400)``: the kit's bounded poll (every 50 ms), generous here: CI runs under load."""
    from analytics_acp.kit.wire import until as poll

    return lambda check, what, tries=2400: poll(check, what, tries=tries)
