"""Case 4: cold start (spawn -> initialize -> tools/list) per connector, source and frozen, vs a bare SDK server."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import anyio

from ..runner import Case
from .percall import BARE

ROOT = Path(__file__).resolve().parents[5]


async def _start_list(command: list[str], cwd: str | None = None) -> float:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    start = time.perf_counter()
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ), cwd=cwd)
    with open(os.devnull, "w") as devnull:
        async with stdio_client(params, errlog=devnull) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                await session.list_tools()
    return time.perf_counter() - start


def _timer(command: list[str], cwd: str | None = None):
    return lambda: anyio.run(_start_list, command, cwd)


def cases(quick: bool) -> list[Case]:
    """One case per installed connector (from source), plus frozen builds found in dist/."""
    from analytics_acp.plugins import available_connectors

    out = []
    for cid in available_connectors():
        out.append(Case(
            key=f"cold_start_{cid}", title=f"4. cold start: {cid} (source)", target="<= 1.1", target_value=1.1,
            ours=_timer([sys.executable, "-m", "analytics_acp", "serve", cid]), baseline=_timer(BARE),
            ours_label=f"analytics-acp serve {cid}", baseline_label="bare SDK server, one tool",
        ))
        manifest = ROOT / "dist" / cid / "acp.json"
        if manifest.exists():
            spec = json.loads(manifest.read_text(encoding="utf-8-sig"))["transport"]
            command = [str((manifest.parent / spec["command"]).resolve()), *spec.get("args", [])]
            out.append(Case(
                key=f"cold_start_{cid}_frozen", title=f"4. cold start: {cid} (frozen)", target="<= 1.1",
                target_value=1.1, ours=_timer(command, str(manifest.parent)), baseline=_timer(BARE),
                ours_label=f"dist/{cid}", baseline_label="bare SDK server, one tool",
            ))
    return out[:1] if quick else out
