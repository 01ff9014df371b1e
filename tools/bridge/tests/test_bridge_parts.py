"""The bridge's parts (issue 27.5): the store's writing() registration, the forwarder's in-flight count and
early-reader start, handle_artifacts saying whether it edited the answer, the health registry owning errors."""

from __future__ import annotations

import os

import anyio
import pytest
from analytics_acp_bridge.calls.forward import EarlyStarter, InFlight
from analytics_acp_bridge.calls.results import handle_artifacts
from analytics_acp_bridge.sources.entries import load_sources
from analytics_acp_bridge.sources.health import SourceHealth
from analytics_acp_bridge.sources.validate import entry_finding
from analytics_acp_bridge.store.datasets import DatasetStore


def _temp(store: DatasetStore) -> str:
    store.dir.mkdir(parents=True, exist_ok=True)
    path = store.dir / ".t.csv.tmp"
    path.write_text("a\r\n1\r\n")
    return str(path)


def test_writing_releases_and_removes_the_temp_csv_on_error(tmp_path):
    store = DatasetStore(tmp_path / "p")
    tmp_csv = _temp(store)
    with pytest.raises(ValueError), store.writing(tmp_csv):
        assert store.unfinished() == [tmp_csv]
        raise ValueError("disk full")
    assert store.unfinished() == [] and not os.path.exists(tmp_csv)


def test_writing_releases_and_keeps_the_file_on_success(tmp_path):
    store = DatasetStore(tmp_path / "p")
    tmp_csv = _temp(store)
    with store.writing(tmp_csv), store.writing(tmp_csv):  # two holders (an early CSV being handed over)
        pass
    assert store.unfinished() == [] and os.path.exists(tmp_csv)


def test_remove_unfinished_removes_what_is_being_written(tmp_path):
    store = DatasetStore(tmp_path / "p")
    tmp_csv = _temp(store)
    with store.writing(tmp_csv):
        store.remove_unfinished()  # a stop by signal (issue 15.2)
        assert not os.path.exists(tmp_csv)
    assert store.unfinished() == []


def test_write_dataset_that_fails_leaves_no_temp_csv(tmp_path):
    store = DatasetStore(tmp_path / "p")

    def rows():
        yield {"a": 1}
        raise OSError("upstream gone")

    with pytest.raises(OSError):
        store.write_dataset("t", [{"name": "a"}], rows(), {"origin": "acp"})
    assert store.unfinished() == [] and os.listdir(store.dir) == []


def test_handle_artifacts_says_whether_it_changed_the_answer(tmp_path):
    store = DatasetStore(tmp_path / "p")
    pdf = tmp_path / "deck.pdf"
    pdf.write_bytes(b"%PDF-1.4")
    response = {"pdf_path": str(pdf)}
    done = handle_artifacts(response, store)
    assert done.changed and response["pdf_path"] == "acp-data/files/deck.pdf" and response["saved"] is True
    untouched = {"rows": [1]}
    done = handle_artifacts(untouched, store)
    assert not done.changed and done.blocks == [] and done.notes == [] and untouched == {"rows": [1]}
    missing = {"download_path": str(tmp_path / "nope.csv")}
    done = handle_artifacts(missing, store)
    assert not done.changed and "could not be found" in done.notes[0]


def test_in_flight_counts_one_call_for_its_whole_block_even_when_it_fails():
    calls = InFlight()
    with calls.call("databases") as alone:
        assert alone
        with calls.call("databases") as second_alone:
            assert not second_alone and calls.count("databases") == 2
        with pytest.raises(RuntimeError), calls.call("databases"):
            raise RuntimeError("server gone")
        assert calls.count("databases") == 1
    assert calls.count("databases") == 0


class _Reader:
    def __init__(self) -> None:
        self.started = anyio.Event()

    def start(self) -> None:
        self.started.set()


def test_early_reader_starts_only_for_a_call_still_running():
    quick, slow = _Reader(), _Reader()

    async def main():
        starter = EarlyStarter()
        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                tg.start_soon(starter.run)
                with starter.during_call(quick):  # type: ignore[arg-type]
                    pass  # answered at once
                with starter.during_call(slow):  # type: ignore[arg-type]
                    await slow.started.wait()  # answers only once its reader has started
                tg.cancel_scope.cancel()

    anyio.run(main)
    # The starter handles calls in order: by the time it started the slow call's reader, it had passed the quick one.
    assert slow.started.is_set() and not quick.started.is_set()


def test_the_validator_finds_the_unknown_acp_and_health_records_it(tmp_path, write_sources):
    path = tmp_path / "sources.json"
    write_sources(path, {"sources": [{"id": "shop", "acp": "nope"}]})
    sources = load_sources(path, tmp_path)
    health = SourceHealth(sources)
    source = sources.sources[0]
    finding = entry_finding(source, ["databases"], path)
    assert finding is not None and finding.error.name == "ACP_INVALID_ARGUMENTS"  # a set-up problem, not credentials
    health.setup_error(source, finding)
    assert source.error is None  # the source as read stays as read; its health says what is wrong
    assert health.of(source).status == "error" and not health.publishes_tools(source)
    assert "not installed" in health.of(source).line() and "databases" in (health.of(source).fix or "")


def test_a_retired_server_stops_only_once_its_calls_in_flight_have_answered(tmp_path):
    """Issue 34.3: a reload that no longer needs a server lets the calls in flight on it finish, then stops it;
    it is never started again (a late call is told to retry instead)."""
    from analytics_acp_bridge.fleet.discovery import AcpLaunch
    from analytics_acp_bridge.fleet.process import AcpProcess, ServerUnavailable

    gate = anyio.Event()

    class Client:  # the running connection, answering once the gate opens
        plain_mcp_reason = None

        async def call_tool(self, name, arguments, meta=None, on_progress=None):
            await gate.wait()
            return f"{name} answered"

    async def no_tables(ref, call_id):
        raise AssertionError("no table is read")

    async def main():
        proc = AcpProcess(AcpLaunch(id="x", name="x", origin="installed"), no_tables, tmp_path, None)
        proc.client = Client()  # type: ignore[assignment]
        answers = []

        async def call():
            answers.append(await proc.call("whoami", {}, {}))

        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                await anyio.wait_all_tasks_blocked()
                tg.start_soon(proc.aclose_when_idle)
                await anyio.wait_all_tasks_blocked()
                assert proc.retired and proc.client is not None and answers == []  # still serving the call
                gate.set()
        assert answers == ["whoami answered"] and proc.client is None and proc.calls == 0
        with pytest.raises(ServerUnavailable, match="sources.json changed"):
            await proc.ensure()

    anyio.run(main)
