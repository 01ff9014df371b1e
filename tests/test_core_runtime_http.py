"""Streamable HTTP (3.2, 10.5, 13.3): capability, Bearer, per-session state, one-time table URLs."""

import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest
from analytics_acp.host import AcpClient
from core_helpers import CREDS, env, serve_command


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(port, proc):
    # Readiness wait, not a timing assertion: generous because CI runs under load.
    for _ in range(1200):
        if proc.poll() is not None:
            raise RuntimeError(proc.stderr.read().decode())
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError("server did not listen")


@pytest.fixture
def http_server(request):
    token = getattr(request, "param", None)
    port = _free_port()
    extra = {"ACP_PORT": str(port)}
    if token:
        extra["ACP_HTTP_TOKEN"] = token
    proc = subprocess.Popen(serve_command("--http"), env=env(**extra), stderr=subprocess.PIPE)
    try:
        _wait(port, proc)
        yield f"http://127.0.0.1:{port}/mcp", token
    finally:
        proc.terminate()
        proc.wait(timeout=10)


async def test_http_handshake_configure_and_sessions(http_server):
    url, _ = http_server
    async with AcpClient.http(url) as a, AcpClient.http(url) as b:
        assert a.server_capability["version"] == "1.0"
        await a.configure(row_limit=2, credentials=CREDS)
        assert (await b.configure())["effective"]["row_limit"] == 5  # 3.2: two sessions share nothing
        res = await a.call_tool("extract", {"n": 9, "resource_id": "acc1"}, meta={"autocontext_delivered": True})
        assert res.model_response["returned_rows"] == 2


async def test_http_big_table_is_one_time_url_8_5(http_server):
    url, _ = http_server
    async with AcpClient.http(url) as c:
        res = await c.call_tool("extract", {"n": 300, "resource_id": "acc1"},
                                meta={"credentials": CREDS, "inline_max_bytes": 500, "autocontext_delivered": True})
        uri = res.system_data["table_uri"]
        assert uri.startswith("http://127.0.0.1:") and "/acp-files/" in uri  # never a file:// path over HTTP
        assert len(res.tables()[0].rows) == 300
        with pytest.raises(urllib.error.HTTPError) as err:  # one-time: a second fetch fails
            urllib.request.urlopen(uri, timeout=5)
        assert err.value.code == 404


@pytest.mark.parametrize("http_server", ["tok-123456"], indirect=True)
async def test_http_bearer_required(http_server):
    url, token = http_server
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(urllib.request.Request(url, data=b"{}", method="POST"), timeout=5)
    assert err.value.code == 401
    async with AcpClient.http(url, token=token) as c:
        assert c.server_capability is not None
        res = await c.call_tool("extract", {"n": 300, "resource_id": "acc1"},
                                meta={"credentials": CREDS, "inline_max_bytes": 500, "autocontext_delivered": True})
        plain = res.system_data["table_uri"]
        with pytest.raises(urllib.error.HTTPError) as err:  # the table URL sits behind the same auth
            urllib.request.urlopen(plain, timeout=5)
        assert err.value.code == 401
        assert len(res.tables()[0].rows) == 300


def test_non_loopback_bind_refused_without_token():
    proc = subprocess.run(serve_command("--http", "--host", "0.0.0.0", "--port", str(_free_port())),
                          env=env(), capture_output=True, timeout=60)
    assert proc.returncode == 2 and b"ACP_HTTP_TOKEN" in proc.stderr


def test_cli_help_and_connectors():
    for args in (["--help"], ["serve", "--help"], ["connectors", "--help"]):
        out = subprocess.run([sys.executable, "-m", "analytics_acp", *args], capture_output=True, timeout=60)
        assert out.returncode == 0 and b"usage" in out.stdout.lower()
