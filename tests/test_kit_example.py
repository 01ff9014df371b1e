"""The conformance kit (analytics_acp.kit, spec 14.2) passes on the example connector and fails,
on exactly the broken item, against deliberately broken variants of it (tests/plugins/kit_broken_server.py)."""

import sys
from pathlib import Path

import pytest
from analytics_acp.kit import ITEMS, conformance_tests, format_table, run_checklist, serve_http

sys.path.insert(0, str(Path(__file__).parent / "external"))
import acp_external  # noqa: E402

BROKEN = Path(__file__).parent / "plugins" / "kit_broken_server.py"
CREDS = {"type": "api_key", "api_key": "ex_KIT_secret_0123456789"}
SAMPLES = [
    ("query_orders", {"start_date": "2026-01-01", "end_date": "2026-01-31"}),
    ("list_customers", {"count": 30}),
    ("capture_session", {"pages": 2}),
    ("premium_report", {"start_date": "2026-01-01", "end_date": "2026-01-02"}, {"cost_limit_usd": 5}),
    ("table_stats", {"table_ref": "kit_numbers"}),
    ("account_info", {}),
    ("add_note", {"text": "checked by the kit"}),
    ("live_status", {}),
]
OPTIONS = dict(credentials=CREDS, resource_id="acct03", sample_calls=SAMPLES)
# Items the kit cannot exercise here: a loopback server has no remote transport to secure, and the
# cache partition (7.4) is not observable through the protocol (the core's own tests cover it).
NOT_APPLICABLE = {"security.transport", "autocontext.cache_partition"}

# The one-line form a connector uses (the kit's public entry point).
test_conformance = conformance_tests("example", **OPTIONS)


HTTP_TOKEN = "kit-http-token-0123456789"


@pytest.fixture(scope="module")
def example_results(tmp_path_factory):
    # Over HTTP (fast: one server for every connection); the one-liner above covers stdio. Behind
    # ACP_HTTP_TOKEN (what `analytics-acp check --url` uses against a remote server): one server and
    # one run serve the item tests and the Bearer-token test; the broken servers run without a token.
    with acp_external.http_example(tmp_path_factory.mktemp("kit"), {"ACP_HTTP_TOKEN": HTTP_TOKEN}) as url:
        return run_checklist(url=url, token=HTTP_TOKEN, package_dir=Path(__file__).parent / "plugins" / "acpexample",
                             **OPTIONS)


def test_every_item_passes_on_the_example(example_results):
    by_item = {r.item: r for r in example_results}
    assert list(by_item) == list(ITEMS), "one result per checklist item, in order"
    failed = [str(r) for r in example_results if r.status == "fail"]
    assert not failed, format_table(example_results)
    unexercised = [r.item for r in example_results if r.status == "n/a" and r.item not in NOT_APPLICABLE]
    assert not unexercised, "the example must exercise every item:\n" + format_table(example_results)


def test_evidence_names_what_was_checked(example_results):
    by_item = {r.item: r for r in example_results}
    assert "premium_report" in by_item["cost.preflight"].evidence
    assert "25 of 30" in by_item["resources.suggestions"].evidence
    assert "add_note" in by_item["results.access_mode"].evidence
    assert CREDS["api_key"] not in format_table(example_results)


_BROKEN_RESULTS = {}


def broken_results(defect, tmp_path):
    """The checklist against ``kit_broken_server.py <defect>`` over HTTP (cached per defect)."""
    if defect not in _BROKEN_RESULTS:
        with acp_external.http_server([sys.executable, str(BROKEN), defect], tmp_path / "served") as url:
            _BROKEN_RESULTS[defect] = run_checklist(url=url, **OPTIONS)
    return _BROKEN_RESULTS[defect]


@pytest.mark.parametrize(
    "defect, items",
    [
        ("omit_cost_limit", {"handshake.cost_limit"}),
        ("echo_secret", {"security.secrets"}),
        ("spanish_notice", {"results.rows", "handshake.english"}),
        ("no_fetched_at", {"results.system_info"}),
        ("ignore_row_limit", {"results.rows"}),
        # Checked on the run's first session, still open after another session configured (HTTP: one process).
        ("sticky_row_limit", {"config.precedence"}),
        ("no_first_call", {"autocontext.on_first_call"}),
        ("no_progress", {"calls.progress"}),
    ],
)
def test_kit_fails_on_the_broken_item(defect, items, tmp_path):
    results = broken_results(defect, tmp_path)
    failed = {r.item for r in results if r.status == "fail"}
    assert failed == items, format_table(results)


def test_echoed_secret_is_masked_in_the_evidence(tmp_path):
    results = broken_results("echo_secret", tmp_path)
    secret = next(r for r in results if r.item == "security.secrets")
    assert secret.status == "fail" and "responses" in secret.evidence
    assert CREDS["api_key"] not in secret.evidence  # the report itself never prints the value


def test_secret_in_the_server_log_is_found():
    # stdio: the kit captures the server's stderr and scans it too (10.1: never in logs).
    results = run_checklist([sys.executable, str(BROKEN), "log_secret"], **OPTIONS)
    failed = {r.item: r for r in results if r.status == "fail"}
    assert set(failed) == {"security.secrets"}, format_table(results)
    assert "server stderr" in failed["security.secrets"].evidence
    assert "responses" not in failed["security.secrets"].evidence  # the answers themselves stayed clean


def test_secret_in_an_http_servers_log_is_found():
    # Over HTTP the kit reads the log and folders serve_http reports (server_files): a connector's
    # credential variants run over one HTTP process lose no part of the 10.1 scan.
    with serve_http([sys.executable, str(BROKEN), "log_secret"]) as served:
        results = run_checklist(url=served.url, server_files=served.files, **OPTIONS)
    failed = {r.item: r for r in results if r.status == "fail"}
    assert set(failed) == {"security.secrets"}, format_table(results)
    assert "server server.log" in failed["security.secrets"].evidence
    assert "responses" not in failed["security.secrets"].evidence


def test_not_an_acp_server_fails_the_handshake(tmp_path):
    plain = tmp_path / "plain_server.py"
    plain.write_text(
        "from mcp.server.mcpserver import MCPServer\n"
        "app = MCPServer('plain')\n"
        "@app.tool()\n"
        "def hello() -> str:\n"
        "    return 'hi'\n"
        "app.run()\n"
    )
    results = run_checklist([sys.executable, str(plain)])
    by_item = {r.item: r for r in results}
    assert by_item["handshake.capability"].status == "fail"
    assert "experimental.acp" in by_item["handshake.capability"].evidence


def test_needs_exactly_one_target():
    with pytest.raises(ValueError):
        run_checklist()
    with pytest.raises(ValueError):
        run_checklist(["x"], url="http://127.0.0.1:1/mcp")


def test_kit_over_streamable_http_with_bearer_token(example_results):
    # The same checklist through AcpClient.http (what `analytics-acp check --url` uses), behind ACP_HTTP_TOKEN.
    results = example_results
    by_item = {r.item: r for r in results}
    assert not [r for r in results if r.status == "fail"], format_table(results)
    assert by_item["security.transport"].status == "n/a" and "loopback" in by_item["security.transport"].evidence
    assert by_item["catalog.selection"].status == "pass" and by_item["results.table_ref"].status == "pass"
    assert HTTP_TOKEN not in format_table(results)


def test_kit_sends_nothing_of_acp_to_another_major_version(tmp_path):
    """4.3: a server announcing ACP 2.0 fails the handshake item and gets no credentials, _meta.acp or configure."""
    raw = Path(__file__).parent / "build_fixtures" / "raw_acp_server.py"
    record = tmp_path / "requests.jsonl"
    secret = "HUNTER2-77aa01"
    results = run_checklist([sys.executable, str(raw), "--acp-version", "2.0"], env={"RAW_ACP_RECORD": str(record)},
                            credentials={"type": "api_key", "api_key": secret}, resource_id="x",
                            sample_calls=[("hello", {})])
    by_item = {r.item: r for r in results}
    assert by_item["handshake.capability"].status == "fail"
    assert "'2.0' is not 1.x" in by_item["handshake.capability"].evidence
    sent = record.read_text()
    assert secret not in sent and "acp/configure" not in sent and '"_meta"' not in sent
    assert '"tools/call"' not in sent  # the run stops at the handshake: every other item would repeat it
