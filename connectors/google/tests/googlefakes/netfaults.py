"""Real-socket faults on loopback for the Google connectors' field tests (issue 26): a refused port, a
listener that accepts and never answers, and a small HTTP proxy (CONNECT tunnels and absolute-URI
forwarding) that counts the connections it relays. Every socket stays on 127.0.0.1 (tests/netguard)."""

from __future__ import annotations

import select
import socket
import threading
from typing import Any

UNRESOLVABLE = "http://google-api.something.invalid"  # RFC 6761: never resolves


def refused_url() -> str:
    """http://127.0.0.1:<port> where nothing listens (the port was bound and released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


class _Server:
    """A loopback listener in a daemon thread; ``accepted`` counts connections."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.2)
        self.accepted = 0
        self._stop = threading.Event()
        self._held: list[socket.socket] = []
        self._thread = threading.Thread(target=self._loop, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def __enter__(self) -> Any:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join(5)
        for s in self._held:
            s.close()
        self.sock.close()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            self.handle(conn)

    def handle(self, conn: socket.socket) -> None:
        self._held.append(conn)


class SilentListener(_Server):
    """Accepts every connection and never answers (a hung server, a black-holing firewall)."""


class Proxy(_Server):
    """An HTTP proxy: CONNECT host:port opens a tunnel; ``GET http://host/...`` is relayed as is."""

    def __init__(self) -> None:
        super().__init__()
        self.targets: list[str] = []
        self.lines: list[str] = []  # request lines: "CONNECT host:port …" or "POST http://host:port/path …"

    def handle(self, conn: socket.socket) -> None:
        threading.Thread(target=self._relay, args=(conn,), daemon=True).start()

    def _relay(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(10)
            head = b""
            while b"\r\n\r\n" not in head and len(head) < 65536:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                head += chunk
            line = head.split(b"\r\n", 1)[0].decode("latin-1")
            method, target, _ = line.split(" ", 2)
            self.lines.append(f"{method} {target.split('?', 1)[0]}")
            if method == "CONNECT":
                host, port = target.rsplit(":", 1)
                rest = head.split(b"\r\n\r\n", 1)[1]
            else:  # absolute-URI forwarding: relay the request unchanged (the fakes parse absolute paths)
                hostport = target.split("://", 1)[1].split("/", 1)[0]
                host, port = hostport.rsplit(":", 1) if ":" in hostport else (hostport, "80")
                rest = head
            self.targets.append(f"{host}:{port}")
            if host not in ("127.0.0.1", "localhost"):
                conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
                return
            upstream = socket.create_connection((host, int(port)), timeout=10)
            if method == "CONNECT":
                conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            if rest:
                upstream.sendall(rest)
            _pipe(conn, upstream)
        except (OSError, ValueError):
            pass
        finally:
            conn.close()


def _pipe(a: socket.socket, b: socket.socket) -> None:
    try:
        while True:
            ready, _, _ = select.select([a, b], [], [], 10)
            if not ready:
                return
            for s in ready:
                data = s.recv(65536)
                if not data:
                    return
                (b if s is a else a).sendall(data)
    finally:
        b.close()


FAULTS = ("refused", "unresolvable", "silent")


class Fault:
    """One field fault as an api_endpoint: ``url``, the ``host`` a message must name, ``accepted`` connections."""

    def __init__(self, kind: str):
        self.kind = kind
        self._silent: SilentListener | None = None

    def __enter__(self) -> Fault:
        if self.kind == "silent":
            self._silent = SilentListener().__enter__()
            self.url = self._silent.url
        else:
            self.url = refused_url() if self.kind == "refused" else UNRESOLVABLE
        self.host = self.url.split("//", 1)[1]
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._silent is not None:
            self._silent.__exit__(*exc)

    @property
    def accepted(self) -> int:
        return self._silent.accepted if self._silent is not None else 0

    @property
    def phrase(self) -> str:
        """What the typed message says for this fault."""
        return {"refused": "the connection was refused", "unresolvable": "the name could not be resolved",
                "silent": "did not answer within"}[self.kind]


def autocontext(connector_id: str, resource_id: str, level: str | None, ctx: Any) -> Any:
    """Every applicable autocontext block of a connector through the core's engine (7.3), as one call."""
    import anyio
    from analytics_acp.autocontext import AutocontextEngine
    from analytics_acp.cache import TTLCache
    from analytics_acp.declarations import ResourceRef
    from analytics_acp.plugins import load_connector

    loaded = load_connector(connector_id)
    engine = AutocontextEngine(loaded.info, loaded.blocks, TTLCache(None))
    return anyio.run(engine.fetch, ResourceRef(resource_id, level), None, ctx)


def proxy_env(monkeypatch: Any, url: str) -> None:
    """Route every http(s) request of the process through ``url`` (both spellings; NO_PROXY cleared)."""
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.setenv(name, url)
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
