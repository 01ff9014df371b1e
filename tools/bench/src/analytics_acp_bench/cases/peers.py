"""Case 3: peers on the same database and query (100k rows x 6): our bridge + databases connector vs
mcp-alchemy (full-result file on, ``CLAUDE_LOCAL_FILES_PATH``) and DBHub (its defaults).

Both sides are warm MCP stdio servers (one untimed call first, so lazy imports are not counted:
cold start is case 4); each timed call runs from request to answer. "Bytes in the model's
context" are the UTF-8 bytes of the answer's text blocks, which is what a client shows the
model. Ours also states the total row count; whether theirs does is checked on the text.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..fixtures.benchdb import TABLE, shared_db
from ..fixtures.bridgehost import SOURCE, BridgeHost
from ..fixtures.peers import alchemy_command, dbhub_command
from ..fixtures.stdio import StdioHost, sdk_session, text_blocks
from ..runner import Case

SQL = f"SELECT * FROM {TABLE}"


def _bytes(texts: list[str]) -> int:
    return sum(len(t.encode("utf-8")) for t in texts)


def _states_total(texts: list[str], n: int) -> bool:
    """Does the answer tell the model how many rows the query returned in all?"""
    joined = " ".join(texts)
    return any(form in joined for form in (f"{n} rows", f"{n:,} rows", f'"total_rows":{n}', f'"total_rows": {n}'))


class PeerCase:
    """Our bridge and one peer server, both kept up for the whole case."""

    def __init__(self, rows: int, peer: str, command: Callable[[], list[str]], call: tuple[str, str]):
        self.rows, self.peer, self.command = rows, peer, command
        self.tool, self.arg = call
        self.host: StdioHost | None = None
        self.facts: dict[str, Any] = {"rows": rows}

    def setup(self) -> None:
        command = self.command()  # raises SkipCase before anything is started
        self.db = shared_db(self.rows)
        self.tmp = Path(tempfile.mkdtemp(prefix=f"acp-bench-peer-{self.peer}-"))
        self.files = self.tmp / "claude-local-files"
        self.files.mkdir()
        env = dict(os.environ)
        if self.peer == "mcp-alchemy":
            env.update(DB_URL=f"sqlite:///{self.db}", CLAUDE_LOCAL_FILES_PATH=str(self.files))
        else:  # DBHub reads sqlite://<absolute path>
            command = [*command, "--dsn", f"sqlite://{self.db}"]
        self.host = StdioHost()
        self.bridge = BridgeHost(self.host, self.tmp, self.db)
        self.bridge.start()
        self.session = self.host.open(sdk_session(command, env=env, cwd=str(self.tmp)))
        self._ours_call()  # warm both sides
        self._peer_call()

    def _ours_call(self) -> tuple[float, list[str]]:
        elapsed, texts = self.bridge.call(f"{SOURCE}__execute_sql", {"sql": SQL})
        self.bridge.drop_dataset(self.bridge.dataset_of(texts))
        return elapsed, texts

    def _peer_call(self) -> tuple[float, list[str]]:
        async def run() -> tuple[float, Any]:
            start = time.perf_counter()
            result = await self.session.call_tool(self.tool, {self.arg: SQL})
            return time.perf_counter() - start, result

        elapsed, result = self.host.call(run)  # type: ignore[union-attr]
        texts = text_blocks(result)
        if result.is_error or any(t.startswith("Error:") for t in texts):
            raise RuntimeError(f"{self.peer} failed: {' '.join(texts)[:300]}")
        for path in self.files.iterdir():  # mcp-alchemy's full-result files
            path.unlink()
        return elapsed, texts

    def ours(self) -> float:
        elapsed, texts = self._ours_call()
        self.facts["ours_context_bytes"] = _bytes(texts)
        self.facts["ours_states_total_rows"] = _states_total(texts, self.rows)
        return elapsed

    def baseline(self) -> float:
        elapsed, texts = self._peer_call()
        self.facts["theirs_context_bytes"] = _bytes(texts)
        self.facts["theirs_states_total_rows"] = _states_total(texts, self.rows)
        return elapsed

    def extra(self) -> dict[str, Any]:
        facts = dict(self.facts)
        if facts.get("theirs_context_bytes"):
            facts["context_bytes_ratio"] = round(facts["ours_context_bytes"] / facts["theirs_context_bytes"], 3)
            if self.peer == "mcp-alchemy":  # issue 8: ours <= 1.0x theirs, and ours states the total
                facts["context_bytes_met"] = facts["context_bytes_ratio"] <= 1.0 and facts["ours_states_total_rows"]
        return facts

    def teardown(self) -> None:
        try:
            if self.host is not None:
                self.host.close()
        finally:
            if getattr(self, "tmp", None):
                shutil.rmtree(self.tmp, ignore_errors=True)


def cases(quick: bool) -> list[Case]:
    """mcp-alchemy (targets: time <= 0.7, bytes <= 1.0x) and DBHub (reported). Quick runs use 500 rows
    and only peers already installed; full runs install missing peers."""
    n = 500 if quick else 100_000
    install = not quick
    alchemy = PeerCase(n, "mcp-alchemy", lambda: alchemy_command(install), ("execute_query", "query"))
    dbhub = PeerCase(n, "dbhub", lambda: dbhub_command(install), ("execute_sql", "sql"))
    ours_label = "bridge + databases -> typed CSV"
    return [
        Case(key="peer_mcp_alchemy", title=f"3. peer: mcp-alchemy ({n:,} rows x 6)", target="<= 0.7 (bytes <= 1.0x)",
             target_value=0.7, ours=alchemy.ours, baseline=alchemy.baseline, setup=alchemy.setup,
             teardown=alchemy.teardown, extra=alchemy.extra, ours_label=ours_label,
             baseline_label="mcp-alchemy + CLAUDE_LOCAL_FILES_PATH"),
        Case(key="peer_dbhub", title=f"3. peer: DBHub ({n:,} rows x 6)", target="report", target_value=float("inf"),
             ours=dbhub.ours, baseline=dbhub.baseline, setup=dbhub.setup, teardown=dbhub.teardown,
             extra=dbhub.extra, ours_label=ours_label, baseline_label="DBHub execute_sql (defaults)"),
    ]
