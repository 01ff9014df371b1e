"""Issue 34.4: the kit's progress and cancel items give the time they measured and the step that failed (the cancel
item said "within 60 s" after 5.5 s, for a call that had answered with an error). A client stand-in answers as a
server would, so each outcome is reached without starting one."""

from __future__ import annotations

import re
import shutil

import anyio
import pytest
from analytics_acp.host import ToolResult
from analytics_acp.kit import calls
from analytics_acp.kit.run import Run, Sample

pytestmark = pytest.mark.asyncio
ERROR = {"content": [{"type": "text", "text": "{}"}], "isError": True, "_meta": {"acp": {"error": {
    "code": -32013, "name": "ACP_RESOURCE_REQUIRED", "message": "Missing resource_id (<name>)."}}}}
OK = {"content": [{"type": "text", "text": "{}"}], "_meta": {"acp": {"kind": "extraction"}}}


class Client:
    """tools/call and ping as a server would answer them: ``answers`` (a result dict, or "hang") in turn."""

    def __init__(self, *answers: object, ping: str = "pong"):
        self.answers, self.ping = list(answers), ping

    async def call_tool(self, name, arguments=None, meta=None, on_progress=None):
        answer = self.answers.pop(0) if self.answers else OK
        if answer == "hang":
            await anyio.sleep_forever()
        if on_progress is not None and answer is OK:
            await on_progress(1.0, 1.0, None)
        return ToolResult(dict(answer))  # type: ignore[arg-type]

    async def raw_request(self, method, params=None):
        if self.ping == "hang":
            await anyio.sleep_forever()
        return {}


@pytest.fixture
def run():
    run = Run(command=["server"], url=None, token=None, env=None, cwd=None, credentials=None, config=None,
              resource_id=None, samples=[Sample("daily", {})], host_tables={}, package_dir=None)
    run.capability = {"extraction_tools": ["daily"]}
    run.tools = {"daily": {"name": "daily", "inputSchema": {"type": "object"}}}
    yield run
    shutil.rmtree(run.cleanup_dir(), ignore_errors=True)


def _item(run: Run, name: str):
    return next(r for r in run.findings.results() if r.item == name)


def _seconds(text: str) -> list[float]:
    return [float(s) for s in re.findall(r"(\d+\.\d) s\b", text)]


async def test_a_call_that_fails_says_so_with_its_time_not_the_bound(run):
    await calls.progress_and_cancel(run, Client(ERROR, "hang", ERROR))
    progress, cancel = _item(run, "calls.progress"), _item(run, "calls.cancel")
    assert progress.status == cancel.status == "fail"
    assert re.fullmatch(r"daily failed in \d+\.\d s, so its progress says nothing: ACP_RESOURCE_REQUIRED: "
                        r"Missing resource_id \(<name>\)\.", progress.evidence), progress.evidence
    assert re.fullmatch(r"daily: after a cancelled call ping answered in \d+\.\d s, but the same call failed in \d+\.\d s: "
                        r"ACP_RESOURCE_REQUIRED: Missing resource_id \(<name>\)\.", cancel.evidence), cancel.evidence
    assert "60" not in progress.evidence + cancel.evidence and max(_seconds(cancel.evidence)) < calls.BOUND_S


@pytest.mark.parametrize("late_s", [0.0, 1.0])
async def test_no_answer_gives_the_time_waited(run, monkeypatch, late_s):
    monkeypatch.setattr(calls, "BOUND_S", 0.2)
    if late_s:  # a loaded machine: the bound fires, and the kit reads the clock, a second late
        import time
        from types import SimpleNamespace

        ticks = iter(range(1000))
        monkeypatch.setattr(calls, "time", SimpleNamespace(monotonic=lambda: time.monotonic() + late_s * next(ticks)))
    await calls.progress_and_cancel(run, Client("hang", "hang", ping="hang"))
    progress, cancel = _item(run, "calls.progress"), _item(run, "calls.cancel")
    # The time waited, whatever the machine's load: at least the 0.2 s bound (a loaded run says 1.3 s, not 0.2).
    assert re.fullmatch(r"daily: no answer within \d+\.\d s \(0 progress notification\(s\)\)", progress.evidence)
    assert re.fullmatch(r"daily: after a cancelled call the server did not answer ping within \d+\.\d s", cancel.evidence)
    assert min(_seconds(progress.evidence) + _seconds(cancel.evidence)) >= 0.2


async def test_a_working_server_passes_with_its_times(run):
    await calls.progress_and_cancel(run, Client(OK, "hang", OK))
    progress, cancel = _item(run, "calls.progress"), _item(run, "calls.cancel")
    assert progress.status == cancel.status == "pass"
    assert re.fullmatch(r"daily: 1 progress notification\(s\) in \d+\.\d s, last \(1\.0, 1\.0, None\)", progress.evidence)
    assert re.fullmatch(r"daily: cancelled, then ping answered in \d+\.\d s and the same call in \d+\.\d s", cancel.evidence)
