"""A raw JSON-RPC client of a stdio server, and bounded waits, for tests of what the host client hides.

The host client (``analytics_acp.host.AcpClient``) is what a test should use to call a server. Some tests
need the wire itself: an invalid id, a line past the size limit, a signal or a closed stdin while a call
runs, ``notifications/cancelled``, a client that stops reading (backpressure). They share this one helper
instead of each writing ``json.dumps(init)`` and ``stdout.readline()``: every read here is a bounded wait
(a server that stays silent fails the test with what it was waiting for, it never hangs the suite), and
nothing reads the server's output before the test asks for it (a test of backpressure decides when its
client reads).

``StdioWire(command, env=None)`` starts the server (``.initialize()`` sends the handshake of spec 4.1);
``send(*messages)``, ``next()``, ``answer(request_id)``, ``wait_for(match)``; ``close()`` ends it (bounded).
``Lines(stream)`` reads any pipe line by line with a bound (a server's stderr log). ``until(check, what)``
polls an observable condition (a query seen running at the database, a port open), bounded;
``cpu_settled(pid)`` is such a check: the process's CPU time stopped moving (a cancelled statement ended).
"""

from __future__ import annotations

import os
import selectors
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import IO, Any

import orjson

from ..constants import ACP_PROTOCOL_VERSION, MCP_HANDSHAKE_VERSION

READ_BOUND_S = 120.0  # generous: a loaded CI machine is slow, a silent server still fails the test
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def initialize_request(request_id: Any = 1, *, acp: Mapping[str, Any] | None = None, plain: bool = False) -> dict[str, Any]:
    """The initialize request of an ACP host (4.1): ``experimental.acp`` with ``version`` and the fields of
    ``acp``; ``plain`` leaves the capability out (a plain MCP client, 4.3)."""
    capabilities: dict[str, Any] = {} if plain else {"experimental": {"acp": {"version": ACP_PROTOCOL_VERSION, **(acp or {})}}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": {
        "protocolVersion": MCP_HANDSHAKE_VERSION, "clientInfo": {"name": "t", "version": "1"},
        "capabilities": capabilities}}


def tool_call(request_id: Any, name: str, arguments: Mapping[str, Any], meta: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A ``tools/call`` request; ``meta`` is its ``_meta`` (e.g. ``{"acp": {"credentials": ...}}``)."""
    params: dict[str, Any] = {"name": name, "arguments": dict(arguments)}
    if meta is not None:
        params["_meta"] = dict(meta)
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


class Lines:
    """A pipe read line by line, each line a bounded wait. Raw reads of the file descriptor: no hidden
    buffer reads ahead of what the test asked for."""

    def __init__(self, stream: IO[bytes] | IO[str], bound_s: float = READ_BOUND_S):
        self.fd, self.bound_s, self.buffer = stream.fileno(), bound_s, b""

    def next(self, bound_s: float | None = None) -> bytes:
        """The next line (without its newline); fails when none comes within the bound or the pipe closes."""
        bound = self.bound_s if bound_s is None else bound_s
        with selectors.DefaultSelector() as sel:
            sel.register(self.fd, selectors.EVENT_READ)
            while b"\n" not in self.buffer:
                if not sel.select(bound):
                    raise AssertionError(f"no line within {bound:.0f} s")
                chunk = os.read(self.fd, 1 << 16)
                if not chunk:
                    raise AssertionError("the stream closed")
                self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line

    def until(self, *wanted: str) -> str:
        """The first line holding every string of ``wanted``."""
        while True:
            line = self.next().decode("utf-8", "replace")
            if all(w in line for w in wanted):
                return line


class StdioWire:
    """A stdio server spoken to in JSON-RPC lines. ``seen`` holds every message read so far, in order.

    By default nothing reads the server's stdout until the test asks (``next``, ``answer``...): a test of
    backpressure decides when its client reads. ``read_ahead=True`` reads every line as it comes in a thread
    of its own instead, for a test that waits on something else (a log line, the database) while the
    server writes (progress notifications that must not fill the pipe).
    """

    def __init__(self, command: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None,
                 stderr: Any = subprocess.DEVNULL, bound_s: float = READ_BOUND_S, read_ahead: bool = False,
                 **popen: Any):
        """Start ``command``; ``popen`` goes to ``subprocess.Popen`` as is (e.g. ``start_new_session=True``)."""
        self.proc = subprocess.Popen(list(command), env=dict(env) if env is not None else None, cwd=cwd,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, **popen)
        self.bound_s = bound_s
        self.lines = Lines(self.proc.stdout, bound_s)  # type: ignore[arg-type]
        self.seen: list[dict[str, Any]] = []
        self._taken = 0  # messages of ``seen`` that next() returned
        self._arrived: threading.Condition | None = None
        self._ended = False
        if read_ahead:
            self._arrived = threading.Condition()
            threading.Thread(target=self._read_ahead, name="stdio-wire-reader", daemon=True).start()

    def __enter__(self) -> StdioWire:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _read_ahead(self) -> None:
        assert self._arrived is not None and self.proc.stdout is not None
        for line in self.proc.stdout:  # ends with the pipe; a daemon thread, so it never holds the test up
            with self._arrived:
                self.seen.append(orjson.loads(line))
                self._arrived.notify_all()
        with self._arrived:
            self._ended = True
            self._arrived.notify_all()

    def initialize(self, request_id: Any = 1, **options: Any) -> dict[str, Any]:
        """Send initialize (``options`` as ``initialize_request``'s), read its answer, send initialized."""
        self.send(initialize_request(request_id, **options))
        answer = self.answer(request_id)
        self.send(INITIALIZED)
        return answer

    def send(self, *messages: Mapping[str, Any]) -> None:
        """Write each message as one line and flush."""
        self.send_raw(b"".join(orjson.dumps(m) + b"\n" for m in messages))

    def send_raw(self, data: bytes | str) -> None:
        """Write bytes as they are (lines the test built: invalid JSON, odd ids) and flush."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(data.encode() if isinstance(data, str) else data)
        self.proc.stdin.flush()

    def next(self, bound_s: float | None = None) -> dict[str, Any]:
        """The next message the server writes (bounded)."""
        bound = self.bound_s if bound_s is None else bound_s
        if self._arrived is None:
            self.seen.append(orjson.loads(self.lines.next(bound)))
        else:
            with self._arrived:
                if not self._arrived.wait_for(lambda: len(self.seen) > self._taken or self._ended, bound):
                    raise AssertionError(f"no message within {bound:.0f} s")
                if len(self.seen) <= self._taken:
                    raise AssertionError("the server closed stdout")
        self._taken += 1
        return self.seen[self._taken - 1]

    def wait_for(self, match: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The first message, already seen or next, that ``match`` accepts (each read bounded)."""
        for message in self.seen[: self._taken]:
            if match(message):
                return message
        while True:
            message = self.next()
            if match(message):
                return message

    def answer(self, request_id: Any) -> dict[str, Any]:
        """The answer (result or error) to ``request_id``."""
        return self.wait_for(lambda m: m.get("id") == request_id and "method" not in m)

    def through(self, request_id: Any) -> list[dict[str, Any]]:
        """The messages from here up to and including the answer to ``request_id`` (none taken before)."""
        start = self._taken
        while True:
            message = self.next()
            if message.get("id") == request_id and "method" not in message:
                return self.seen[start: self._taken]

    def next_notification(self, method: str) -> dict[str, Any]:
        """The next notification named ``method`` not read before."""
        while True:
            message = self.next()
            if message.get("method") == method:
                return message

    def cancel(self, request_id: Any, reason: str | None = None) -> None:
        """Send ``notifications/cancelled`` for ``request_id``."""
        params: dict[str, Any] = {"requestId": request_id, **({"reason": reason} if reason else {})}
        self.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params})

    def cpu_ticks(self) -> int:
        """The server's CPU time in clock ticks (see ``cpu_ticks``)."""
        return cpu_ticks(self.proc.pid)

    def kill(self) -> None:
        """Kill the server if it still runs (a test's ``finally``), and reap it."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()

    def close(self, bound_s: float = 30) -> int | None:
        """Close stdin (the client is gone), wait for the exit (bounded), kill a server still there; its code."""
        try:
            if self.proc.stdin is not None and not self.proc.stdin.closed:
                self.proc.stdin.close()
        except BrokenPipeError:  # the server exited with unread input: it is gone, which is what closing wants
            pass
        try:
            return self.proc.wait(timeout=bound_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"the server did not exit within {bound_s:.0f} s of its stdin closing") from None


def until(check: Callable[[], bool], what: str, *, tries: int = 600, every_s: float = 0.05) -> None:
    """Poll ``check`` every ``every_s`` seconds until it holds; fail naming ``what`` after ``tries`` polls.

    A bounded wait on an observable condition, not a timed assertion: the bound is generous (a loaded
    machine is slow) and only a condition that never holds fails.
    """
    pause = threading.Event()
    for _ in range(tries):
        if check():
            return
        pause.wait(every_s)
    raise AssertionError(f"never happened: {what}")


def cpu_ticks(pid: int) -> int:
    """A process's CPU time (user + system) in clock ticks, from Linux /proc: a statement still running keeps it
    moving, so a test observes a cancel or a stop without timing anything."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def cpu_settled(pid: int, polls: int = 10) -> Callable[[], bool]:
    """A check for ``until``: true once the process's CPU time has not moved for ``polls`` polls in a row
    (with ``every_s=0.1``, a second of rest: the work stopped or waits on something)."""
    state = {"last": cpu_ticks(pid), "still": 0}

    def settled() -> bool:
        now = cpu_ticks(pid)
        state["still"], state["last"] = (state["still"] + 1 if now == state["last"] else 0), now
        return state["still"] >= polls

    return settled
