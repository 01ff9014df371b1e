"""Untyped failures (12.1): one line at ERROR, the traceback at DEBUG in stderr, never a secret (10.5)."""

import pytest
from analytics_acp.host import AcpClient
from core_helpers import CREDS, env, serve_command

pytestmark = pytest.mark.asyncio
M = {"credentials": CREDS}


async def _stderr_after_calls(tmp_path, level):
    log = tmp_path / f"stderr-{level}.log"
    with open(log, "w") as errlog:
        async with AcpClient.stdio(serve_command(), env=env(ANALYTICS_ACP_LOG_LEVEL=level), errlog=errlog) as c:
            res = await c.call_tool("boom", {"resource_id": "acc1"}, meta=M)
            assert res.error["name"] == "ACP_UPSTREAM_ERROR"
            blocks = await c.call_tool("autocontext", {"resource_id": "acc1"}, meta=M)
            assert any(b.get("error", "").startswith("Failed: RuntimeError") for b in blocks.model_response)
    return log.read_text()


async def test_untyped_exception_traceback_at_debug(tmp_path):
    text = await _stderr_after_calls(tmp_path, "DEBUG")
    assert "tool boom failed; traceback:" in text and "Traceback (most recent call last)" in text
    assert "in _boom" in text  # the connector frame that raised
    assert "autocontext block broken failed; traceback:" in text and "in _broken" in text
    assert CREDS["api_key"] not in text  # the exception message quoted it; the log has ***


async def test_no_traceback_at_default_level(tmp_path):
    text = await _stderr_after_calls(tmp_path, "WARNING")
    assert "tool boom failed" in text and "Traceback" not in text
