"""Test-only network fence, loaded by every Python process the tests start.

The tests put this folder on PYTHONPATH with ANALYTICS_ACP_NETGUARD=1, so servers
spawned as subprocesses are fenced too: any connect() to a non-loopback address
fails at once (Google clients probing a metadata server, a driver resolving a
public host) instead of leaving this machine.
"""

import os

if os.environ.get("ANALYTICS_ACP_NETGUARD") == "1":
    import ipaddress
    import socket

    _real_connect = socket.socket.connect
    _real_connect_ex = socket.socket.connect_ex
    _real_getaddrinfo = socket.getaddrinfo

    def _allowed(address) -> bool:
        if isinstance(address, (str, bytes)):
            return True  # AF_UNIX sockets (database sockets) are local by definition
        host = address[0]
        if host in ("localhost", ""):
            return True
        try:
            return ipaddress.ip_address(host.split("%")[0]).is_loopback
        except ValueError:
            return False

    def _guarded_connect(self, address):
        if not _allowed(address):
            raise ConnectionRefusedError(f"netguard: non-loopback connection to {address!r} blocked in tests")
        return _real_connect(self, address)

    def _guarded_connect_ex(self, address):
        if not _allowed(address):
            raise ConnectionRefusedError(f"netguard: non-loopback connection to {address!r} blocked in tests")
        return _real_connect_ex(self, address)

    def _guarded_getaddrinfo(host, *args, **kwargs):
        infos = _real_getaddrinfo(host, *args, **kwargs)
        if host is None or host in ("localhost",):
            return infos
        return [i for i in infos if _allowed(i[4])] or _refuse(host)

    def _refuse(host):
        raise OSError(f"netguard: name {host!r} resolves to no loopback address; blocked in tests")

    socket.socket.connect = _guarded_connect
    socket.socket.connect_ex = _guarded_connect_ex
    socket.getaddrinfo = _guarded_getaddrinfo
