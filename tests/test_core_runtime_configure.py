"""acp/configure (5.1), _meta precedence (5.2, 5.3), setup schemas (5.5), limits in arguments (5.4)."""

import pytest
from analytics_acp.host import ProtocolError
from core_helpers import CREDS, mini_in_process

pytestmark = pytest.mark.asyncio


async def test_configure_merges_and_hides_secrets_5_1():
    async with mini_in_process() as c:
        r = await c.configure(row_limit=7, credentials=CREDS, default_resource_id="acc2")
        assert r == {"ok": True, "effective": {"row_limit": 7, "cost_limit_usd": 1.0, "field_limit": 3,
                                                "has_credentials": True, "default_resource_id": "acc2",
                                                "tables": ["events"]}}
        assert "sk-test" not in str(r)
        r = await c.configure(cost_limit_usd=2)  # absent fields keep their value
        assert r["effective"]["row_limit"] == 7 and r["effective"]["cost_limit_usd"] == 2
        assert r["effective"]["has_credentials"] is True
        r = await c.configure(credentials=None)  # null clears
        assert r["effective"]["has_credentials"] is False


@pytest.mark.parametrize("bad", [{"row_limit": -1}, {"row_limit": 5001}, {"row_limit": 2.5}, {"row_limit": True},
                                 {"cost_limit_usd": -0.01}, {"field_limit": 0}, {"field_limit": 201}])
async def test_invalid_limits_are_32016_and_session_unchanged(bad):
    async with mini_in_process() as c:
        await c.configure(row_limit=9, credentials=CREDS)
        with pytest.raises(ProtocolError) as err:
            await c.configure(**bad, credentials=None)
        assert err.value.code == -32016
        r = await c.configure()
        assert r["effective"]["row_limit"] == 9 and r["effective"]["has_credentials"] is True


async def test_configure_tables_validated_against_catalog():
    async with mini_in_process() as c:
        with pytest.raises(ProtocolError) as err:
            await c.configure(tables=["events", "nope"])
        assert err.value.code == -32017 and "pages" in err.value.message
        r = await c.configure(tables=[])
        assert r["effective"]["tables"] == []


async def test_bad_credentials_and_config_messages_without_secrets_5_5_3():
    async with mini_in_process() as c:
        with pytest.raises(ProtocolError) as err:
            await c.configure(credentials={"type": "api_key", "api_key": "short"})
        assert err.value.code == -32012 and "short" not in err.value.message
        with pytest.raises(ProtocolError) as err:
            await c.configure(config={"region": "mars"})
        assert err.value.code == -32017


async def test_precedence_meta_over_configure_over_defaults_5_3():
    async with mini_in_process() as c:
        res = await c.call_tool("extract", {"n": 12}, meta={"credentials": CREDS, "default_resource_id": "acc1"})
        assert res.system_info["row_limit"] == 5 and res.model_response["returned_rows"] == 5  # defaults
        await c.configure(row_limit=7, credentials=CREDS, default_resource_id="acc2", config={"region": "us"})
        res = await c.call_tool("extract", {"n": 12})
        assert res.system_info["row_limit"] == 7 and res.system_info["resource_id"] == "acc2"
        res = await c.call_tool("extract", {"n": 12}, meta={"row_limit": 3, "default_resource_id": "acc3"})
        assert res.system_info["row_limit"] == 3 and res.model_response["returned_rows"] == 3
        assert res.system_info["resource_id"] == "acc3"
        res = await c.call_tool("extract", {"n": 12}, meta={"row_limit": 9999})
        assert res.error["name"] == "ACP_INVALID_LIMIT"


async def test_limits_or_credentials_in_arguments_rejected_5_4():
    async with mini_in_process() as c:
        for key, value in (("row_limit", 3), ("credentials", CREDS), ("cost_limit_usd", 5)):
            res = await c.call_tool("extract", {"n": 1, "resource_id": "acc1", key: value}, meta={"credentials": CREDS})
            assert res.error["name"] == "ACP_INVALID_ARGUMENTS", key
            assert "sk-test" not in res.text


async def test_sessions_are_per_connection():
    async with mini_in_process() as a, mini_in_process() as b:
        await a.configure(row_limit=11, credentials=CREDS)
        r = await b.configure()
        assert r["effective"]["row_limit"] == 5 and r["effective"]["has_credentials"] is False



# 5.2: every field acp/configure accepts is checked in _meta.acp with the same rule and message (5.1).
SHARED_BAD = [
    ({"config": "x"}, -32017, "config must be an object."),
    ({"config": ["region"]}, -32017, "config must be an object."),
    ({"credentials": "sk-test-SECRET-123456"}, -32017, "credentials must be an object (or null to clear them)."),
    ({"default_resource_id": 7}, -32017, "default_resource_id must be a string or null."),
    ({"row_limit": "5"}, -32016, "row_limit must be an integer between 0 and 5000."),
    ({"field_limit": 0}, -32016, "field_limit must be an integer between 1 and 200."),
    ({"cost_limit_usd": -1}, -32016, "cost_limit_usd must be a number greater than or equal to 0."),
    ({"tables": "events"}, -32017, "tables must be a list of table names."),
    ({"tables": ["nope"]}, -32017, "Unknown table(s) nope. Valid tables: events, pages, extra."),
    ({"config": {"region": "mars"}}, -32017, None),
]
META_ONLY_BAD = [
    ({"session_id": 5}, "session_id must be a string."),
    ({"conversation_id": {"a": 1}}, "conversation_id must be a string."),
    ({"call_id": 1.5}, "call_id must be a string."),
    ({"autocontext_delivered": "yes"}, "autocontext_delivered must be true or false."),
    ({"autocontext_blocks": "fields"}, "autocontext_blocks must be a list of block ids."),
    ({"sampling": "random"}, "sampling must be head or spread."),
    ({"inline_max_bytes": -1}, "inline_max_bytes must be a non-negative integer."),
    ({"inline_max_bytes": True}, "inline_max_bytes must be a non-negative integer."),
]


async def test_meta_is_validated_like_configure_5_2():
    async with mini_in_process() as c:
        for meta, code, message in SHARED_BAD:
            with pytest.raises(ProtocolError) as err:
                await c.configure(**meta)
            res = await c.call_tool("extract", {"n": 1, "resource_id": "acc1"}, meta={"credentials": CREDS, **meta})
            assert res.is_error and res.error["code"] == code == err.value.code, meta
            assert res.error["message"] == err.value.message, meta
            if message:
                assert res.error["message"] == message
            assert "SECRET" not in res.text
        for meta, message in META_ONLY_BAD:  # the fields only _meta.acp has are typed too
            res = await c.call_tool("extract", {"n": 1, "resource_id": "acc1"}, meta={"credentials": CREDS, **meta})
            assert res.is_error and res.error["name"] == "ACP_INVALID_ARGUMENTS", meta
            assert res.error["message"] == message
        # null = not set here (5.3), unknown fields are ignored (12.2): the session's settings still apply.
        await c.configure(credentials=CREDS, config={"region": "us"})
        meta = {"config": None, "credentials": None, "row_limit": None, "default_resource_id": None, "tables": None,
                "session_id": None, "future_field": {"x": 1}}
        res = await c.call_tool("extract", {"n": 2, "resource_id": "acc1"}, meta=meta)
        assert not res.is_error, res.text
