"""The bridge under bursts (issue 38.6): many concurrent calls to one ACP server at its cap on calls in
progress, and a request too large for the bridge's own stdio.

One bridge, whose environment gives it and its ACP server ACP_MAX_CALLS_IN_PROGRESS=3. Six concurrent
``table_sum`` calls each wait for the bridge's answer to ``acp/read_table`` (8.8): three run and wait, and
the bridge writes its answers after the other three calls, so a server that stopped reading at the cap would
never see them. Ten concurrent extractions then queue behind the cap. Every call gets its answer.
"""

from __future__ import annotations

from types import SimpleNamespace

import anyio
import pytest
import pytest_asyncio
from analytics_acp.constants import ACP_MAX_ARGUMENTS_BYTES, ACP_MAX_MESSAGE_BYTES
from mcp.shared.exceptions import MCPError

CAP = 3


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory, shared_bridge, write_sources):
    base = tmp_path_factory.mktemp("burst")
    root = shared_bridge.fixture_root(base / "root")
    project = base / "proj"
    (project / "acp-data").mkdir(parents=True)
    write_sources(root / "sources.json", {"defaults": {"row_limit": 5}, "sources": [
        {"id": "fx", "acp": "fixture", "credentials": {"account": "acct-a", "token": "tok-burst-0000"}}]})
    async with shared_bridge.open(project, root, env={"ACP_MAX_CALLS_IN_PROGRESS": str(CAP)}) as client:
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
            for i in range(2 * CAP):  # the cap running plus the cap held: none refused
                tg.start_soon(table_sum, i)
        async with anyio.create_task_group() as tg:
            for i in range(10):
                tg.start_soon(numbers, i)
    assert all(s == {"rows": 40, "sum": sum(i * i for i in range(40)), "types": {"i": "integer", "sq": "integer"}}
               for s in sums.values()) and len(sums) == 2 * CAP
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
