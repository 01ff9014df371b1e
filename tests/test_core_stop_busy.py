"""A server whose call waits on a silent upstream still ends promptly (issue 26.5, 15.2).

Real processes and a real socket: ``serve ga4`` with its api_endpoint and token endpoint on a loopback
listener that accepts and never answers; the call is in flight (the listener saw the connection)
when stdin closes or the signal arrives. Before the fix, closing stdin left ``serve`` running until
Google's own deadline (set to minutes here). The bound below is generous (no timed assertion): the
process must be gone long before the call's own deadline.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from analytics_acp.kit.wire import StdioWire, tool_call
from core_helpers import env
from silent import SilentListener

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "connectors" / "google" / "tests"))
from googlefakes import keys  # noqa: E402

pytest.importorskip("analytics_acp_ga4")

GONE_WITHIN_S = 30  # far below the call's own deadline (600 s below): only a prompt exit passes


def _busy_server(listener: SilentListener, tmp_path: Path) -> subprocess.Popen:
    """``serve ga4`` with one run_report in flight on the silent listener."""
    own = env(TMPDIR=str(tmp_path), ANALYTICS_ACP_GOOGLE_DEADLINE_S="600", ANALYTICS_ACP_GOOGLE_TIMEOUT_S="600")
    wire = StdioWire([sys.executable, "-m", "analytics_acp", "serve", "ga4"], env=own)
    wire.initialize()
    credentials = keys.service_account_credentials(listener.url + "/token")
    wire.send(tool_call(2, "run_report", {"metrics": ["sessions"], "dimensions": ["date"], "resource_id": "123456789"},
                        {"acp": {"credentials": credentials, "config": {"api_endpoint": listener.url},
                                 "autocontext_delivered": True}}))
    assert listener.wait_for_connection(), "the call never reached the upstream"
    return wire.proc


def _gone(proc: subprocess.Popen) -> int:
    try:
        return proc.wait(timeout=GONE_WITHIN_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_stdin_closed_while_a_call_waits_on_a_silent_upstream(tmp_path):
    with SilentListener() as listener:
        proc = _busy_server(listener, tmp_path)
        proc.stdin.close()  # the client is gone
        assert _gone(proc) == 0
        assert proc.stdout.read() == b""  # no answer came from the silent upstream; nothing else on stdout
        assert list(tmp_path.glob("analytics-acp-*")) == []  # private folder removed (os._exit skips atexit)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signal_while_a_call_waits_on_a_silent_upstream(tmp_path, signum):
    with SilentListener() as listener:
        proc = _busy_server(listener, tmp_path)
        proc.send_signal(signum)
        assert _gone(proc) == 128 + signum
        proc.stdin.close()
