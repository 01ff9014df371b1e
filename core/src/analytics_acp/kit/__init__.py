"""Conformance kit: the server checklist of spec 14.2, run against any ACP server through the host client.

One line in a connector's tests::

    # connectors/<id>/tests/test_<id>_conformance.py
    from analytics_acp.kit import conformance_tests

    test_conformance = conformance_tests(
        "databases",
        credentials={"type": "url", "url": "sqlite:///..."},
        resource_id="main",
        sample_calls=[("execute_sql", {"sql": "SELECT 1 AS x"})],
    )

API
---
``run_checklist(command=None, *, url=None, token=None, credentials=None, config=None, resource_id=None,
sample_calls=None, env=None, cwd=None, host_tables=None, package_dir=None, server_files=None) -> list[CheckResult]``
    Exactly one of ``command`` (argv of a stdio server, e.g. ``["analytics-acp", "serve", "example"]``)
    or ``url`` (Streamable HTTP endpoint, with optional Bearer ``token``). ``credentials`` / ``config``
    travel in ``_meta.acp`` (and through ``acp/configure`` in the configure probes); ``resource_id`` is
    added to every sample call of a tool that publishes one and drives the autocontext, default-resource
    and on_first_call probes. ``sample_calls`` is a list of ``(tool, arguments)`` or
    ``(tool, arguments, extra_meta)`` tuples (e.g. ``{"cost_limit_usd": 5}`` for a paid tool); without it
    the kit calls every read-only tool that has no required arguments. Write tools
    (``readOnlyHint: false``) among the samples are called under onlyRead (must fail with
    ACP_READ_ONLY_VIOLATION) and under full. ``host_tables`` maps refs to AcpHostTable dicts the kit's
    resolver serves for ``acp/read_table`` (``"kit_numbers"`` is always there: day/value/label, 4 rows).
    ``env`` is added to the server's environment; the kit points ACP_CACHE_DIR and ACP_TMP_DIR at a
    private folder (unless ``env`` sets them) and scans it, the server's stderr and every answer for the
    credential strings. ``package_dir`` (the connector folder) enables the skills check.
    ``server_files`` (with ``url``): the HTTP server's log and folders, scanned for the credentials too.
``arun_checklist(...)``: the same, as a coroutine.
``serve_http(command, *, env=None, folder=None)``: a context manager running ``command --port N`` (e.g.
    ``serve_command(id) + ["--http"]``) on loopback; yields ``ServedHttp(url, log, files)``. Several runs
    (credential variants) against one process: ``run_checklist(url=s.url, server_files=s.files, ...)``.
``CheckResult(item, status, evidence, section)``: ``status`` is ``"pass"``, ``"fail"`` or ``"n/a"``;
    ``item`` ids are the keys of ``ITEMS`` (e.g. ``"handshake.cost_limit"``, ``"security.secrets"``).
``conformance_tests(connector_id, *, allow_fail=(), **run_checklist_kwargs)``: a pytest test function
    serving ``python -m analytics_acp serve <connector_id>``; it fails listing the failed items and prints
    the table (``format_table``).
``make_ctx(connector_id, tool, *, tables=None, host_tables=None, credentials=None, config=None,
resource_id=None, tmp_dir=None, **fields) -> CallContext``: a ready context for unit tests that call a
    tool's ``run(MyArguments.parse({...}), ctx)`` directly (``parse``: the tool's argument model, exactly as the
    core parses); ``tables`` (dict ref -> ``HostTable``, or a ``FakeHost``) answers ``ctx.read_table`` and records
    ``ctx.table_reader.requests``.
``analytics_acp.kit.wire``: for tests of the wire itself (invalid ids, size limits, signals, cancellation,
    backpressure), a raw JSON-RPC stdio client whose every read is bounded (``StdioWire``), ``initialize_request``
    and ``tool_call`` messages, ``until(check, what)`` (a bounded poll) and ``cpu_settled(pid)``.
"""

from .checklist import arun_checklist, run_checklist
from .fakes import FakeHost, RecordingSignals, make_ctx
from .model import ITEMS, CheckResult
from .pytest_support import conformance_tests, format_table, serve_command
from .run import KIT_HOST_TABLES
from .served import ServedHttp, serve_http

__all__ = [
    "ITEMS",
    "KIT_HOST_TABLES",
    "CheckResult",
    "FakeHost",
    "RecordingSignals",
    "ServedHttp",
    "arun_checklist",
    "conformance_tests",
    "format_table",
    "make_ctx",
    "run_checklist",
    "serve_command",
    "serve_http",
]
