"""Issue 34.3: the connector's own offline check in acp/configure, and validate-only acp/configure (setup_check.py)
through the host client's ``validate_setup``, on the mini connector served in this process.

The real connectors' checks (Google keys, database files) are proven in their own folders
(connectors/ga4/tests/test_ga4_setup_check.py, connectors/databases/tests/test_databases_setup_check.py).
"""

import sys

import anyio
import pytest
from analytics_acp import CredentialsInvalid, setup_check
from analytics_acp.errors import AcpError
from analytics_acp.host import ProtocolError
from analytics_acp.setup_check import VALIDATE_ONLY_KEY
from core_helpers import CREDS, FIXTURES, mini_in_process

sys.path.insert(0, str(FIXTURES))
import mini_connector  # noqa: E402

pytestmark = pytest.mark.asyncio
SECRET = "sk-revoked-DISTINCT-9f31"
BOUND_S = 10  # a wait that must never come near it (a stuck check holding the session would)


async def test_configure_runs_the_connectors_check_after_the_schemas_and_masks_secrets():
    async with mini_in_process() as c:
        with pytest.raises(ProtocolError) as err:
            await c.configure(credentials={"type": "api_key", "api_key": SECRET})
        assert err.value.code == -32012 and err.value.message == "The key *** was revoked: create another one."
        assert err.value.data == {"key": "***", "tried": ["***"]}  # 10.1.4: the error's data is masked too
        with pytest.raises(ProtocolError) as err:  # config problems found by the check are ACP_INVALID_ARGUMENTS (5.5.3)
            await c.configure(credentials={"type": "api_key", "api_key": "sk-eu-only-123"}, config={"region": "us"})
        assert err.value.code == -32017 and "use eu" in err.value.message
        with pytest.raises(ProtocolError) as err:  # a broken check is typed, its text masked
            await c.configure(credentials={"type": "api_key", "api_key": "sk-buggy-SECRET-77"})
        assert err.value.code == -32018 and "TypeError" in err.value.message and "sk-buggy-SECRET-77" not in err.value.message
        assert (await c.configure())["effective"]["has_credentials"] is False  # 5.1: refused, nothing changed
        assert (await c.configure(credentials=CREDS))["effective"]["has_credentials"] is True


async def test_a_configure_that_arrives_during_a_slow_check_merges_after_it():
    """5.1: each acp/configure merges into what the previous one left, even while a check runs off the loop."""
    async with mini_in_process() as c:
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: c.configure(credentials={"type": "api_key", "api_key": "sk-slow-12345"}))
            tg.start_soon(lambda: c.configure(row_limit=7))  # sent while the first one is in its 0.5 s check
        effective = (await c.configure())["effective"]
        assert effective["has_credentials"] is True and effective["row_limit"] == 7


async def test_a_call_sent_right_after_configure_runs_with_what_it_set():
    """5.1: a client that sends acp/configure and a tools/call without waiting for the first answer gets the call
    run with the configured credentials, even while the connector's check runs in its thread."""
    async with mini_in_process() as c:
        results = {}

        async def call():
            results["call"] = await c.call_tool("extract", {"n": 2, "resource_id": "acc1"})

        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: c.configure(credentials={"type": "api_key", "api_key": "sk-slow-12345"}))
            await anyio.wait_all_tasks_blocked()  # the configure is on its way (its check takes 0.5 s)
            tg.start_soon(call)
        assert not results["call"].is_error, results["call"].error


async def test_validate_only_checks_everything_configure_checks_and_changes_nothing():
    async with mini_in_process() as c:
        caps = c.initialize_result["capabilities"]["experimental"]
        assert caps[VALIDATE_ONLY_KEY] == {"version": 1} and "acp" in caps and c.supports_validate_only
        await c.configure(row_limit=9)
        cases = [
            ({}, -32011, "This source needs credentials (one of: API key) and none were given."),
            ({"credentials": CREDS, "row_limit": 5001}, -32016, "row_limit must be an integer between 0 and 5000."),
            ({"credentials": CREDS, "field_limit": 0}, -32016, "field_limit"),
            ({"credentials": {"type": "api_key", "api_key": "short"}}, -32012, "api_key must be at least 8 characters"),
            ({"credentials": {"type": "api_key", "api_key": SECRET}}, -32012, "The key *** was revoked"),
            ({"credentials": CREDS, "config": {"region": "mars"}}, -32017, "region must be one of eu, us"),
            ({"credentials": CREDS, "tables": ["nope"]}, -32017, "Valid tables: events, pages, extra"),
        ]
        for setup, code, needle in cases:
            error = await c.validate_setup(setup)
            assert error is not None and error.code == code and needle in error.message, (setup, error)
            assert SECRET not in error.message and "Ask the user" not in error.message
        assert await c.validate_setup({"credentials": CREDS, "row_limit": 3, "config": {"region": "us"}}) is None
        # The session is the one acp/configure built: row_limit 9, no credentials, whatever was validated.
        assert (await c.configure())["effective"] == {
            "row_limit": 9, "cost_limit_usd": 1.0, "field_limit": 3, "has_credentials": False,
            "default_resource_id": None, "tables": ["events"]}
        res = await c.call_tool("extract", {"n": 3, "resource_id": "acc1"})
        assert res.error["name"] == "ACP_CREDENTIALS_MISSING"


async def test_a_server_without_validate_only_is_checked_against_its_published_schemas():
    async with mini_in_process() as c:
        c.initialize_result["capabilities"]["experimental"].pop(VALIDATE_ONLY_KEY)  # as an older server answers
        assert not c.supports_validate_only
        # The schemas still catch what they can; the connector's own check is not reached (nothing was sent).
        assert (await c.validate_setup({"credentials": CREDS, "row_limit": -1})).code == -32016
        assert (await c.validate_setup({})).code == -32011
        assert await c.validate_setup({"credentials": {"type": "api_key", "api_key": SECRET}}) is None
        assert (await c.configure())["effective"]["has_credentials"] is False


async def test_a_stuck_check_gives_a_typed_answer_within_the_bound():
    async with mini_in_process() as c:
        error = await c.validate_setup({"credentials": {"type": "api_key", "api_key": "sk-stuck-123"}}, timeout=0.2)
        assert error is not None and error.name == "ACP_UPSTREAM_ERROR"
        assert error.message == "The ACP server did not answer the set-up check within 0.2 s."
        assert await c.validate_setup({"credentials": CREDS}) is None  # the connection still answers


async def test_a_stuck_blocking_check_is_bounded_by_the_server_and_holds_no_later_configure(monkeypatch):
    """A check blocked in a worker thread (a dead network mount) answers ACP_UPSTREAM_ERROR at the server's own bound,
    and a configure the client gave up on does not make the session's next acp/configure wait for the check."""
    monkeypatch.setattr(setup_check, "CHECK_LIMIT_S", 0.3)
    stuck = {"type": "api_key", "api_key": "sk-stuck-12345"}
    try:
        async with mini_in_process() as c:
            with anyio.fail_after(BOUND_S):
                with pytest.raises(ProtocolError) as err:
                    await c.configure(credentials=stuck)
                assert err.value.code == -32018 and err.value.message == (
                    "The mini ACP did not finish checking the set-up within 0.3 s: something it reads (a file, a "
                    "network drive) did not answer. Check the set-up, then try again.")
                with anyio.move_on_after(0.05):  # the client gives up (notifications/cancelled) before the bound
                    await c.configure(credentials=stuck)
                assert (await c.configure(row_limit=3))["effective"] == {
                    "row_limit": 3, "cost_limit_usd": 1.0, "field_limit": 3, "has_credentials": False,
                    "default_resource_id": None, "tables": ["events"]}  # the refused check changed nothing
                error = await c.validate_setup({"credentials": stuck}, timeout=BOUND_S)
                assert error is not None and error.code == -32018 and "within 0.3 s" in error.message
    finally:
        mini_connector.STUCK_RELEASE.set()  # the abandoned checks end with the test


async def test_plain_mcp_server_has_nothing_to_validate():
    async with mini_in_process() as c:
        c.initialize_result["capabilities"]["experimental"].pop("acp")
        assert c.server_capability is None and not c.supports_validate_only
        assert await c.validate_setup({"row_limit": -1}) is None


async def test_the_check_runner_bounds_async_checks_and_refuses_past_its_stuck_threads():
    import threading

    release = threading.Event()
    checks = setup_check.SetupChecks("demo", limit_s=0.1, max_stuck=2)

    async def never(credentials, config):  # an async check is cancelled at the bound
        await anyio.sleep_forever()

    def blocked(credentials, config):
        release.wait(BOUND_S)

    def revoked(credentials, config):
        raise CredentialsInvalid("revoked")

    try:
        with anyio.fail_after(BOUND_S):
            for check in (never, blocked, blocked):
                with pytest.raises(AcpError, match="did not finish checking the set-up within 0.1 s"):
                    await checks.run(check, None, {})
            assert checks.running == 2 and checks.stuck == 2  # two abandoned threads still blocked
            with pytest.raises(AcpError) as refused:
                await checks.run(lambda c, k: None, None, {})
            assert refused.value.name == "ACP_UPSTREAM_ERROR" and refused.value.message == (
                "The demo ACP still runs 2 set-up checks that did not finish (something they read does not answer), "
                "so it starts no more. Check the set-up, or restart the ACP.")
            release.set()
            while checks.running:  # the released threads end and free their places
                await anyio.sleep(0.01)
            await checks.run(lambda c, k: None, None, {})
            with pytest.raises(AcpError, match="revoked"):  # the check's own error comes back as it is
                await checks.run(revoked, None, {})
    finally:
        release.set()


async def test_checks_in_flight_at_once_are_not_stuck_ones():
    """A burst of sessions configuring at once (the 4b bench: 50 HTTP sessions) has many checks running together;
    only checks given up on count toward the refusal (it refused them all past max_stuck=4 before)."""
    import threading

    gate = threading.Barrier(8, timeout=BOUND_S)  # all eight checks run at the same time, then all finish
    checks = setup_check.SetupChecks("demo", limit_s=BOUND_S, max_stuck=4)

    def together(credentials, config):
        gate.wait()

    with anyio.fail_after(BOUND_S):
        async with anyio.create_task_group() as tg:
            for _ in range(8):
                tg.start_soon(checks.run, together, None, {})
    assert checks.running == 0 and checks.stuck == 0
