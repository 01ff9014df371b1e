"""A refused argument never carries a secret back (5.4, 8.4, 10.1): credentials or limits pasted into
``arguments`` are refused and never echoed in system_info.arguments, the error, the server's log or its
files. The same hunt as the conformance kit's, over stdio and Streamable HTTP."""

import json

import pytest
from analytics_acp.host import AcpClient
from analytics_acp.kit.static import leaked
from core_helpers import CREDS, env, http_mini, serve_command

pytestmark = pytest.mark.asyncio

SECRET = "HUNTER2-d41c9a"
URL_CREDS = {"type": "url", "url": f"postgresql://u:{SECRET}@127.0.0.1/db"}
# Every way the model could paste a system value into arguments (5.4).
PASTED = [
    {"credentials": URL_CREDS},
    {"credentials": {"type": "api_key", "api_key": SECRET}},
    {"row_limit": SECRET},
    {"cost_limit_usd": {"token": SECRET}},
    {"field_limit": [SECRET]},
    {"config": {"password": SECRET}},
    {"default_resource_id": SECRET},
    {"inline_max_bytes": SECRET},
]


async def _calls(client, wire):
    for pasted in PASTED:
        for tool, args in (("extract", {"n": 1, "resource_id": "acc1"}), ("autocontext", {}), ("no_such_tool", {})):
            res = await client.call_tool(tool, {**args, **pasted}, meta={"credentials": CREDS})
            wire.append(json.dumps(res.raw))
            assert res.is_error, (tool, pasted)
            if tool != "no_such_tool":
                assert res.error["name"] == "ACP_INVALID_ARGUMENTS"
                assert list(pasted)[0] in res.error["message"]  # names the key, never the value
            echoed = res.system_info["arguments"]
            assert not set(echoed) & {"credentials", "row_limit", "cost_limit_usd", "field_limit", "config",
                                      "default_resource_id", "inline_max_bytes"}, echoed
    # The rest of the arguments is still echoed, so the host can see what was asked (8.4).
    res = await client.call_tool("extract", {"n": 1, "resource_id": "acc1", **PASTED[0]}, meta={"credentials": CREDS})
    assert res.system_info["arguments"] == {"n": 1, "resource_id": "acc1"}


def _hunt(wire, stderr_path, dirs):
    places = {"responses": "\n".join(wire), "server stderr": stderr_path.read_text(errors="replace")}
    for folder in dirs:
        for path in folder.rglob("*"):
            if path.is_file():
                places[str(path)] = path.read_text(errors="replace")
    found = {where: leaked(text, [SECRET]) for where, text in places.items() if leaked(text, [SECRET])}
    assert not found, found


async def test_pasted_secrets_never_come_back_over_stdio(tmp_path):
    dirs = {"ACP_CACHE_DIR": tmp_path / "cache", "ACP_TMP_DIR": tmp_path / "tmp"}
    wire, stderr_path = [], tmp_path / "stderr.log"
    with open(stderr_path, "w") as errlog:
        async with AcpClient.stdio(serve_command(), env=env(ANALYTICS_ACP_LOG_LEVEL="DEBUG", **{k: str(v) for k, v in dirs.items()}),
                                   errlog=errlog) as client:
            await _calls(client, wire)
    _hunt(wire, stderr_path, dirs.values())


async def test_pasted_secrets_never_come_back_over_http(tmp_path):
    dirs = {"ACP_CACHE_DIR": tmp_path / "cache", "ACP_TMP_DIR": tmp_path / "tmp"}
    wire, stderr_path = [], tmp_path / "stderr.log"
    with open(stderr_path, "w") as errlog, http_mini(errlog, ANALYTICS_ACP_LOG_LEVEL="DEBUG",
                                                      **{k: str(v) for k, v in dirs.items()}) as url:
        async with AcpClient.http(url) as client:
            await _calls(client, wire)
    _hunt(wire, stderr_path, dirs.values())
