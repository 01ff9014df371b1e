"""Case 10 (issue 23.3): bytes of the bridge's tools/list for the five-source set, before and after; 10b the
same for a client that negotiates MCP Apps (issue 36.3: the dataset view's ``_meta.ui`` and app-only tools).

The bridge runs as an MCP stdio server with one source per ACP (databases on a SQLite file, ga4, gsc and
bigquery with a throwaway service-account key and an unreachable loopback endpoint, prediction), as a client
would start it; a raw JSON-RPC client sends initialize and tools/list and measures the response line (the
bytes a client reads and a model is given). The upstream never has to answer: the list comes from each ACP
server's own tools/list. "Before" is the same measurement on main at f5865f9 (2026-12-04), kept here as
figures. Tokens are approximated as bytes / 4.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ..runner import Case

ROOT = Path(__file__).resolve().parents[5]
LIMIT_BYTES = 28_000  # issue 23.3's target for the five-source set
APPS_LIMIT_BYTES = 30_000  # issue 36.3: the same list for a client that negotiates MCP Apps
APPS = {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}  # its initialize capability
TOOL_LIMIT_BYTES = 2048  # no single published tool above 2 KB (tests/test_tool_list_size.py)
BEFORE: dict[str, Any] = {
    "commit": "f5865f9",
    "total_bytes": 41_681,
    "tools": 32,
    "per_source_bytes": {"bridge": 1_498, "db": 6_442, "ga": 12_164, "sc": 10_072, "bq": 5_758, "fc": 5_669},
    "largest_tool": ["ga__run_report", 3_279],
}
# Source id -> (ACP, label); the labels are short on purpose: a user's longer labels add ~1 byte per character per tool.
SOURCES = {"db": ("databases", "Shop"), "ga": ("ga4", "GA4"), "sc": ("gsc", "GSC"), "bq": ("bigquery", "BQ"),
           "fc": ("prediction", "Forecast")}
DEAD_ENDPOINT = "http://127.0.0.1:9"  # discard port: nothing answers, and tools/list never calls it


def sources_file(workdir: Path) -> Path:
    """sources.json of the five-source set, with credentials that validate (a throwaway RSA key)."""
    sys.path.insert(0, str(ROOT / "connectors" / "google" / "tests"))
    from googlefakes import keys

    db = workdir / "shop.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS orders (day TEXT, total REAL)")
    google = keys.service_account_credentials(f"{DEAD_ENDPOINT}/token")
    entries: list[dict[str, Any]] = []
    for source_id, (acp, label) in SOURCES.items():
        entry: dict[str, Any] = {"id": source_id, "acp": acp, "label": label}
        if acp == "databases":
            entry.update(credentials={"type": "sqlite", "path": str(db)}, default_resource_id="shop")
        elif acp != "prediction":
            entry.update(credentials=google, config={"api_endpoint": DEAD_ENDPOINT},
                         default_resource_id={"ga4": "123456789", "gsc": "sc-domain:example.com", "bigquery": "p.d"}[acp])
        entries.append(entry)
    path = workdir / "sources.json"
    path.write_text(json.dumps({"sources": entries}, indent=2))
    return path


def _read_line(proc: subprocess.Popen[bytes], deadline: float) -> bytes:
    assert proc.stdout is not None
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    chunks: list[bytes] = []
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not sel.select(left):
                raise TimeoutError("the bridge did not answer within the bound")
            chunk = os.read(proc.stdout.fileno(), 1 << 16)
            if not chunk:
                raise RuntimeError("the bridge closed stdout")
            chunks.append(chunk)
            if chunk.endswith(b"\n"):
                return b"".join(chunks)
    finally:
        sel.close()


def measure_tools_list(timeout_s: float = 120.0, apps: bool = False) -> dict[str, Any]:
    """Start the bridge on the five-source set and measure its tools/list response (bounded by ``timeout_s``);
    ``apps``: the client negotiates MCP Apps (the dataset view's ``_meta.ui`` and app-only tools are listed)."""
    workdir = Path(tempfile.mkdtemp(prefix="acp-bench-toolslist-"))
    project = workdir / "project"
    project.mkdir()
    command = [sys.executable, "-m", "analytics_acp_bridge", "--project", str(project),
               "--sources", str(sources_file(workdir)), "--root", str(workdir)]
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=project)
    deadline = time.monotonic() + timeout_s
    try:
        assert proc.stdin is not None
        messages = [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {"extensions": APPS} if apps else {},
                "clientInfo": {"name": "bench", "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
        ]
        proc.stdin.write((json.dumps(messages[0]) + "\n").encode())
        proc.stdin.flush()
        _read_line(proc, deadline)
        proc.stdin.write(("\n".join(json.dumps(m) for m in messages[1:]) + "\n").encode())
        proc.stdin.flush()
        line = _read_line(proc, deadline)
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(workdir, ignore_errors=True)
    tools = json.loads(line)["result"]["tools"]
    return summarize(len(line.rstrip(b"\n")), tools)


def summarize(total_bytes: int, tools: list[dict[str, Any]]) -> dict[str, Any]:
    """Total, approximate tokens, bytes per source (the bridge's own tools under "bridge") and the largest tool."""
    per_source: dict[str, int] = {}
    largest = ("", 0)
    for tool in tools:
        size = len(json.dumps(tool, ensure_ascii=False, separators=(",", ":")).encode())
        source = tool["name"].split("__", 1)[0] if "__" in tool["name"] else "bridge"
        per_source[source] = per_source.get(source, 0) + size
        largest = max(largest, (tool["name"], size), key=lambda item: item[1])
    return {"total_bytes": total_bytes, "approx_tokens": total_bytes // 4, "tools": len(tools),
            "per_source_bytes": per_source, "largest_tool": list(largest)}


class ToolsList:
    """Measured once in setup (the figure is deterministic); every round reports it."""

    def __init__(self, apps: bool = False) -> None:
        self.apps = apps
        self.after: dict[str, Any] = {}

    def setup(self) -> None:
        self.after = measure_tools_list(apps=self.apps)

    def ours(self) -> float:
        return float(self.after["total_bytes"])

    def baseline(self) -> float:
        return float(BEFORE["total_bytes"])

    def extra(self) -> dict[str, Any]:
        before = {**BEFORE, "approx_tokens": BEFORE["total_bytes"] // 4}
        limit = APPS_LIMIT_BYTES if self.apps else LIMIT_BYTES
        return {"before": before, "after": self.after, "limit_bytes": limit, "mcp_apps": self.apps,
                "within_limit": self.after["total_bytes"] <= limit,
                "largest_within_2kb": self.after["largest_tool"][1] <= TOOL_LIMIT_BYTES}


def cases(quick: bool) -> list[Case]:
    """tools/list bytes of the bridge with databases, ga4, gsc, bigquery and prediction sources, for a plain
    client and for one that negotiates MCP Apps."""
    s, a = ToolsList(), ToolsList(apps=True)
    return [Case(
        key="tools_list", title="10. tools/list size (bridge, five sources)", target=f"<= {LIMIT_BYTES:,} B",
        target_value=LIMIT_BYTES / BEFORE["total_bytes"], ours=s.ours, baseline=s.baseline, setup=s.setup,
        extra=s.extra, ours_label="this tree", baseline_label=f"main at {BEFORE['commit']}", unit="bytes",
    ), Case(
        key="tools_list_apps", title="10b. tools/list size with MCP Apps (bridge, five sources)",
        target=f"<= {APPS_LIMIT_BYTES:,} B", target_value=APPS_LIMIT_BYTES / BEFORE["total_bytes"], ours=a.ours,
        baseline=a.baseline, setup=a.setup, extra=a.extra, ours_label="this tree, MCP Apps client",
        baseline_label=f"main at {BEFORE['commit']}", unit="bytes",
    )]
