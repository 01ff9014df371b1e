"""A loopback listener that accepts connections and never answers (a hung upstream), for lifecycle tests."""

from __future__ import annotations

import socket
import threading
import time


class SilentListener:
    """Accepts on 127.0.0.1 and holds every connection open without a byte; counts what it accepted."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.accepted = 0
        self._held: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self._held.append(conn)
            self.accepted += 1

    def wait_for_connection(self, bound_s: float = 120.0) -> bool:
        """True once a client connected (polled, bounded)."""
        deadline = time.monotonic() + bound_s
        while time.monotonic() < deadline:
            if self.accepted:
                return True
            time.sleep(0.05)
        return False

    def __enter__(self) -> SilentListener:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.sock.close()
        for conn in self._held:
            conn.close()


def refused_url() -> str:
    """An http URL on a loopback port where nothing listens (connection refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"
