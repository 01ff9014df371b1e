"""The bridge's concurrent calls to one ACP server under the server's cap on calls in progress (issue 38.6).

The ACP server runs with ACP_MAX_CALLS_IN_PROGRESS=3 (inherited from the bridge's environment). Six
concurrent ``table_sum`` calls each wait for the bridge's answer to ``acp/read_table`` (8.8): three run and
wait, and the bridge writes its answers after the other three calls, so a server that stopped reading at the
cap would never see them. Ten concurrent extractions then queue behind the cap. Every call gets its answer.
"""

from __future__ import annotations

import anyio
import pytest

CAP = 3


@pytest.mark.asyncio
async def test_concurrent_calls_through_the_bridge_all_get_their_answers_at_the_servers_cap(tmp_path, fixture_root,
                                                                                              write_sources, bridge):
    project = tmp_path / "proj"
    (project / "acp-data").mkdir(parents=True)
    write_sources(fixture_root / "sources.json", {"defaults": {"row_limit": 5}, "sources": [
        {"id": "fx", "acp": "fixture", "credentials": {"account": "acct-a", "token": "tok-burst-0000"}}]})
    async with bridge(project, fixture_root, env={"ACP_MAX_CALLS_IN_PROGRESS": str(CAP)}) as client:
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
