"""Results final when returned (issue 27.4): an Extraction's ``source``/``extra`` may be callables the
core calls once, after consuming every row, so a streamed extraction never edits what it returned."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
from analytics_acp.calls import ConnectorRuntime
from analytics_acp.context import ClientInfo
from analytics_acp.declarations import Extraction, ToolSpec, settled
from analytics_acp.effective import SessionConfig
from analytics_acp.plugins import load_connector
from analytics_acp.results import BuildSettings, build_extraction

sys.path.insert(0, str(Path(__file__).parent / "core_fixtures"))
import mini_connector  # noqa: E402

FULL = ClientInfo(acp=True, version="1.0", stores_system_data=True, multi_table=True, host_tables=True)
CREDS = {"type": "api_key", "api_key": "sk-test-SECRET-123456"}


class Pager:
    """A stream whose facts (pages, calls of the late values) are known only once it was read."""

    def __init__(self, pages: int) -> None:
        self.pages, self.read, self.calls = pages, 0, []

    def rows(self):
        for page in range(self.pages):
            self.read += 1
            yield from ([page, i] for i in range(3))

    def source(self):
        self.calls.append(("source", self.read))
        return {"api": "fake", "pages": self.read}

    def extra(self):
        self.calls.append(("extra", self.read))
        return {"pages_seen": self.read}


def test_settled_calls_only_callables():
    assert settled(lambda: {"a": 1}) == {"a": 1}
    assert settled({"a": 1}) == {"a": 1} and settled(None) is None


def test_build_extraction_reads_a_late_extra_after_every_row():
    pager = Pager(4)
    out = Extraction(rows=pager.rows(), columns=["page", "i"], description="d", extra=pager.extra)
    built = build_extraction(out, BuildSettings(row_limit=2))
    assert built.model_response["extra"] == {"pages_seen": 4} and pager.calls == [("extra", 4)]


def test_a_tool_call_reports_the_late_source_and_extra_once_each():
    pager = Pager(5)

    loaded = load_connector(mini_connector, extensions=False)
    loaded.tools["late"] = ToolSpec(  # tools are collected at load time: add this one as a loaded tool
        name="late", description="Late facts.", kind="extraction", needs_resource=False,
        run=lambda arguments, ctx: Extraction(rows=pager.rows(), columns=["page", "i"], description="d",
                                              source=pager.source, extra=pager.extra))
    runtime = ConnectorRuntime(loaded)
    result = anyio.run(lambda: runtime.call("late", {}, {"credentials": CREDS, "autocontext_delivered": True},
                                            SessionConfig(), FULL))
    acp = result["_meta"]["acp"]
    assert acp["system_info"]["source"] == {"api": "fake", "pages": 5}
    assert '"pages_seen":5' in result["content"][0]["text"].replace(" ", "")
    assert sorted(pager.calls) == [("extra", 5), ("source", 5)]
