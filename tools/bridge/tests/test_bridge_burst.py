"""The bridge under bursts (issue 38.6): many concurrent calls to one ACP server at its cap on calls in
progress, and a request too large for the bridge's own stdio.

One bridge whose own stdio takes 12 calls in progress, and its ACP server, whose cap is 3 (``--max-calls``: lower
than the bridge's environment says, as an ACP set up elsewhere may be). Seven concurrent ``table_sum`` calls (twice
the server's cap, and one) each wait for the bridge's answer to ``acp/read_table`` (8.8): three run and wait, three
are held and the seventh is refused (SERVER_BUSY, nothing run), which a model can do nothing about. The bridge keeps
its calls below a server's cap (fleet/process.py CallPlaces): it takes the cap the refusal states, and the refused
call waits in the bridge for a place and runs. Ten concurrent extractions then queue in the bridge. Every call gets
its answer. The server side (reading on while it waits for the client's tables, holding, refusing):
tests/test_core_server_stdio.py and tests/test_core_call_cap.py.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import anyio
import pytest
import pytest_asyncio
from analytics_acp.constants import ACP_MAX_ARGUMENTS_BYTES, ACP_MAX_MESSAGE_BYTES
from mcp.shared.exceptions import MCPError

CAP = 3  # the ACP server's
BRIDGE_CAP = 12  # the bridge's own stdio: it takes more calls than its ACP server runs


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory, shared_bridge, write_sources):
    base = tmp_path_factory.mktemp("burst")
    root = shared_bridge.fixture_root(base / "root")
    project = base / "proj"
    (project / "acp-data").mkdir(parents=True)
    write_sources(root / "sources.json", {"defaults": {"row_limit": 5}, "sources": [
        {"id": "fx", "acp": "fixture", "credentials": {"account": "acct-a", "token": "tok-burst-0000"}}]})
    manifest = root / "acps" / "fixture" / "acp.json"
    launch = json.loads(manifest.read_text())
    launch["transport"]["args"] += ["--max-calls", str(CAP)]
    manifest.write_text(json.dumps(launch))
    async with shared_bridge.open(project, root, env={"ACP_MAX_CALLS_IN_PROGRESS": str(BRIDGE_CAP)}) as client:
        yield SimpleNamespace(client=client)


@pytest.mark.asyncio(loop_scope="module")
async def test_concurrent_calls_to_one_acp_at_its_cap_all_get_their_answers(shared):
    client = shared.client
    is_error, _, notes = await client.call_json("fx__numbers", {"count": 40})
    assert not is_error
    dataset = notes[0].split("«")[1].split("»")[0]
    sums: dict[int, dict] = {}
    counts: dict[int, dict] = {}

    async def table_sum(i: int) -> None:
        sums[i] = (await client.call_json("fx__table_sum", {"table_ref": dataset, "column": "sq"}))[1]

    async def numbers(i: int) -> None:
        counts[i] = (await client.call_json("fx__numbers", {"count": 10 + i}))[1]

    with anyio.fail_after(120):  # bounded: a deadlock fails here instead of hanging the run
        async with anyio.create_task_group() as tg:
            for i in range(2 * CAP + 1):  # past what the server runs and holds: none refused
                tg.start_soon(table_sum, i)
        async with anyio.create_task_group() as tg:
            for i in range(10):
                tg.start_soon(numbers, i)
    expected = {"rows": 40, "sum": sum(i * i for i in range(40)), "types": {"i": "integer", "sq": "integer"}}
    assert [s for s in sums.values() if s != expected] == [] and len(sums) == 2 * CAP + 1
    assert sorted(c["total_rows"] for c in counts.values()) == list(range(10, 20))


@pytest.mark.asyncio(loop_scope="module")
async def test_a_request_line_past_the_limit_is_refused_unparsed_and_the_session_goes_on(shared):
    # The bridge's own stdio had no line limit (the SDK's stdio_server): a 5 MB request was read whole and parsed.
    client = shared.client
    with pytest.raises(MCPError) as refused:
        await client.session.call_tool("acp_query", {"sql": "SELECT '" + "x" * 5_000_000 + "'"})
    error = refused.value.error
    assert error.code == -32017 and error.data == {"name": "ACP_INVALID_ARGUMENTS", "max_message_bytes": ACP_MAX_MESSAGE_BYTES,
                                                   "max_arguments_bytes": ACP_MAX_ARGUMENTS_BYTES}
    assert f"larger than {ACP_MAX_MESSAGE_BYTES:,} bytes" in error.message
    is_error, report, _ = await client.call_json("acp_sources")  # the next request is answered
    assert not is_error and [s["id"] for s in report["sources"]] == ["fx"]


@pytest.mark.asyncio
async def test_a_refusal_at_the_servers_cap_lowers_the_bridges_bound_and_the_call_runs():
    from analytics_acp.call_cap import BUSY_CODE, CapSettings
    from analytics_acp.host import ProtocolError
    from analytics_acp_bridge.fleet.process import CallPlaces

    places = CallPlaces(CapSettings(max_calls=32, busy_wait_s=30))
    assert places.limit == 31  # one below the cap the bridge's environment gives its servers
    answers = [ProtocolError(BUSY_CODE, "The server already has 3 calls in progress ... answer the server's pending "
                             "requests (acp/read_table) first", {"name": "SERVER_BUSY", "max_calls_in_progress": 3}), "ok"]

    async def call():
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    with anyio.fail_after(10):
        assert await places.run("fx", call) == "ok" and answers == []  # nothing ran at the refusal: run again
    assert places.limit == 2


@pytest.mark.asyncio
async def test_no_place_within_the_wait_reads_as_busy_for_the_model():
    from analytics_acp.call_cap import BUSY_CODE, CapSettings
    from analytics_acp.host import ProtocolError
    from analytics_acp_bridge.calls.forward import _protocol_payload
    from analytics_acp_bridge.fleet.process import CallPlaces

    places = CallPlaces(CapSettings(max_calls=2, busy_wait_s=0.2))
    held, release = anyio.Event(), anyio.Event()

    async def long_call():
        held.set()
        await release.wait()
        return "done"

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(places.run, "fx", long_call)
            await held.wait()
            with pytest.raises(ProtocolError) as busy:
                await places.run("fx", long_call)  # no place: one call already runs, the bound is 1
            release.set()
    assert busy.value.code == BUSY_CODE
    assert _protocol_payload(busy.value) == {"code": BUSY_CODE, "name": "SERVER_BUSY", "message": (
        "The fx ACP server is busy: none of the bridge's 1 call(s) in progress there finished within 0.2 s, "
        "so this call did not run. Retry it in a moment, or make fewer calls at once.")}
