"""The test-suite network fence (conftest.py + tests/netguard/sitecustomize.py): issue 16 asks that
non-loopback sockets stay blocked in tests, in this process and in every process the tests start.

A socket timeout is set before each blocked attempt so that, without the fence, the test fails on the
wrong exception instead of hanging; the assertions are on the fence's own error, never on time.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading

import pytest

OUTSIDE = [("10.255.255.1", 443), ("8.8.8.8", 443)]


def _loopback_server() -> tuple[socket.socket, int]:
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    return srv, srv.getsockname()[1]


@pytest.mark.parametrize("address", OUTSIDE)
def test_a_non_loopback_connect_fails_with_the_fence_error(address):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(5)
        with pytest.raises(ConnectionRefusedError, match=r"^netguard: non-loopback connection to .* blocked in tests$") as err:
            s.connect(address)
        assert repr(address) in str(err.value)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(5)
        with pytest.raises(ConnectionRefusedError, match="^netguard: "):
            s.connect_ex(address)  # connect_ex would otherwise return an errno, not raise


def test_an_ipv6_public_address_is_blocked_too():
    if not socket.has_ipv6:
        pytest.skip("no IPv6 sockets on this machine")
    try:
        s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    except OSError:
        pytest.skip("cannot open an IPv6 socket here")
    with s:
        s.settimeout(5)
        with pytest.raises(ConnectionRefusedError, match="^netguard: "):
            s.connect(("2001:4860:4860::8888", 443, 0, 0))


def test_a_public_name_resolves_to_nothing_usable():
    # A numeric host needs no DNS: the real getaddrinfo answers 8.8.8.8 and the fence drops it.
    with pytest.raises(OSError, match=r"^netguard: name '8\.8\.8\.8' resolves to no loopback address"):
        socket.getaddrinfo("8.8.8.8", 443, proto=socket.IPPROTO_TCP)
    with pytest.raises(OSError, match="^netguard: "):
        socket.create_connection(("8.8.8.8", 443), timeout=5)
    infos = socket.getaddrinfo("127.0.0.1", 443, proto=socket.IPPROTO_TCP)
    assert {i[4][0] for i in infos} == {"127.0.0.1"}


def test_loopback_connections_work():
    srv, port = _loopback_server()
    got: list[bytes] = []

    def accept_one() -> None:
        conn, _ = srv.accept()
        with conn:
            got.append(conn.recv(5))

    t = threading.Thread(target=accept_one)
    t.start()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
            c.sendall(b"hello")
        t.join(10)
    finally:
        srv.close()
    assert got == [b"hello"]
    # connect_ex to a closed loopback port returns an errno (refused by the kernel), not the fence's exception.
    closed, port2 = _loopback_server()
    closed.close()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(5)
        assert s.connect_ex(("127.0.0.1", port2)) != 0


def test_subprocesses_started_by_the_tests_are_fenced():
    """Servers under test run as subprocesses: they inherit ANALYTICS_ACP_NETGUARD and the fence's PYTHONPATH."""
    assert os.environ["ANALYTICS_ACP_NETGUARD"] == "1"
    srv, port = _loopback_server()
    code = (
        "import socket\n"
        "s = socket.socket(); s.settimeout(5)\n"
        "try:\n"
        "    s.connect(('10.255.255.1', 443)); print('CONNECTED')\n"
        "except Exception as e:\n"
        "    print(type(e).__name__, e)\n"
        f"c = socket.create_connection(('127.0.0.1', {port}), timeout=5); print('LOOPBACK OK'); c.close()\n"
    )
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True).stdout
    finally:
        srv.close()
    assert out.splitlines() == [
        "ConnectionRefusedError netguard: non-loopback connection to ('10.255.255.1', 443) blocked in tests",
        "LOOPBACK OK",
    ]
