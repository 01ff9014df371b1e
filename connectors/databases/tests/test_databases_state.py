"""Issue 38.2: the connector's state (engines, reflected columns) belongs to the loaded connector, made on first
use and released when its server stops (AcpServer.shutdown: the same stop Ctrl-C, SIGTERM and the end of stdin
run). Two servers of the connector in one process (a bridge's embedded sources, the tests) share nothing."""

from __future__ import annotations

import anyio
from analytics_acp import ClientInfo
from analytics_acp.effective import SessionConfig
from analytics_acp.plugins import load_connector
from analytics_acp.runtime import build_server
from sqlalchemy import event

CLIENT = ClientInfo(acp=True, version="1.0")


def _count(acp, sales_db):
    meta = {"credentials": {"type": "sqlite", "path": sales_db}, "autocontext_delivered": True}
    result = anyio.run(lambda: acp.runtime.call("execute_sql", {"sql": "SELECT count(*) AS n FROM ventas"}, meta,
                                                SessionConfig(), CLIENT))
    assert not result.get("isError"), result
    return result


def _engines(acp):
    from analytics_acp_databases.state import DATABASES

    state = acp.loaded.state.peek(DATABASES)
    return [] if state is None else state.engines.values()


def test_each_server_keeps_its_own_engines_and_its_stop_disposes_them(sales_db):
    one, two = build_server(load_connector("databases")), build_server(load_connector("databases"))
    _count(one, sales_db)
    _count(two, sales_db)
    (engine_one,), (engine_two,) = _engines(one), _engines(two)
    assert engine_one is not engine_two
    disposed = []
    for engine in (engine_one, engine_two):
        event.listen(engine, "engine_disposed", disposed.append)

    one.shutdown()
    assert disposed == [engine_one] and _engines(one) == []
    _count(two, sales_db)  # the other server still answers with the engine it made
    assert _engines(two) == [engine_two] and disposed == [engine_one]

    two.shutdown()
    assert disposed == [engine_one, engine_two] and _engines(two) == []
