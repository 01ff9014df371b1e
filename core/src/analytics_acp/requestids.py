"""Screen JSON-RPC ids before the MCP SDK sees a message (3.2, 12.1; DESIGN.md).

mcp 2.3.0 parses a request whose ``id`` is not a string or an integer (an object, an array, a
boolean, 1.5, 1e999999, NaN, null) as a *notification*: over HTTP it answers 202 with no body and
over stdio nothing at all, so the client waits forever. MCP says a request id is a string or an
integer and never null; such a message gets a JSON-RPC error instead (-32600, id null), on every
transport. Messages that do not parse are left to the SDK, which owns parse errors.
"""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

import orjson
from mcp.shared.dispatcher import coerce_request_id

INVALID_REQUEST = -32600
ID_PREFIX_BYTES = 16 * 1024  # how much of a refused message's start is read for its id (issue 23.4)
_DELIMITERS = " \t\r\n,}"


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, float):
        return "a non-finite number" if not math.isfinite(value) else "a decimal number"
    if value is None:
        return "null"
    names: dict[type, str] = {dict: "an object", list: "an array"}
    return names.get(type(value), type(value).__name__)


def _bad_id(message: Any) -> str | None:
    """Why request ``message`` carries an unusable id, or None (fine, no id, or not a request).

    Only requests are answered: a response with a bad id answers nothing the peer waits for.
    """
    if not isinstance(message, dict) or "id" not in message or "method" not in message:
        return None
    value = message["id"]
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return None
    return _kind(value)


def _first_bad(value: Any) -> str | None:
    for message in value if isinstance(value, list) else [value]:
        why = _bad_id(message)
        if why is not None:
            return why
    return None


def _stdlib(raw: bytes | str) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return None


def _may_be_request(raw: bytes | str) -> bool:
    # Big messages are the host's answers (acp/read_table tables); skip parsing them when no key can
    # spell "method": literally, or with escapes (which a JSON parser decodes; any escape has a backslash,
    # and a one-byte search is a fast memchr).
    if isinstance(raw, str):
        return '"method"' in raw or "\\" in raw
    return b'"method"' in raw or b"\\" in raw


class RequestHead(NamedTuple):
    """The id and method of the one JSON-RPC request a message body holds, the body's size in bytes, and whether
    it is answered as one JSON body rather than an SSE stream (Streamable HTTP, http_app.JsonAnswers)."""

    id: str | int
    method: str
    size: int = 0
    json_answer: bool = False


# Where RequestIdGuard (http_app.py), which parses each POST body once, leaves its RequestHead on the ASGI scope for the
# wrappers inside it (the calls cap, the cancel of a closed stream): absent for a notification, an answer, a batch.
REQUEST_SCOPE_KEY = "analytics_acp.request"


def screen(raw: bytes | str) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """One parse of a message: (the JSON-RPC error answering a request in it with an invalid id, or None;
    the request it holds — an object with a ``method`` and a usable ``id`` — or None: a notification, an answer
    (never parsed when no key can spell "method": big host tables), a batch, or what does not parse, which the
    SDK answers)."""
    if not _may_be_request(raw):
        return None, None
    try:
        message = orjson.loads(raw)  # fast path: most bodies are fine
    except orjson.JSONDecodeError:
        message = _stdlib(raw)  # orjson refuses NaN/Infinity; the stdlib reads them, so they can be refused with a reason
    why = _first_bad(message)
    if why is not None:
        # Authoritative second look: orjson also reads integers past 64 bits as floats, the stdlib does not.
        message = _stdlib(raw)
        why = _first_bad(message)
    if why is not None:
        return {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": INVALID_REQUEST,
                "message": f"Invalid Request: the id is {why}; a JSON-RPC request id must be a string or an integer.",
            },
        }, None
    return None, (message if isinstance(message, dict) and "method" in message and "id" in message else None)


def invalid_id_error(raw: bytes | str) -> dict[str, Any] | None:
    """The JSON-RPC error answering ``raw`` when a request in it has an invalid id; None otherwise."""
    return screen(raw)[0]


def request_in(raw: bytes) -> dict[str, Any] | None:
    """The JSON-RPC request one message body holds (see :func:`screen`), else None."""
    return screen(raw)[1]


def id_key(request_id: Any) -> str:
    """A dict key for a request id as written: JSON-RPC ids 7 and "7" are different requests (each gets its answer)."""
    return f"{type(request_id).__name__}:{request_id}"


def correlation_key(request_id: Any) -> str:
    """The key the MCP SDK correlates an answer or a cancel by: "7" and 7 are one id there (``coerce_request_id``,
    as the TypeScript SDK), so a peer's answer or cancel naming the id as text still reaches request 7."""
    return id_key(coerce_request_id(request_id) if isinstance(request_id, str | int) else request_id)


def usable_id(value: Any) -> str | int | None:
    """``value`` when it is a usable request id (a string or an integer, 3.2), else None."""
    return value if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)) else None


def id_in_prefix(prefix: bytes) -> str | int | None:
    """The request id in the first bytes of a message too large to parse, when it comes before ``params``.

    A bounded, key-by-key parse of at most ID_PREFIX_BYTES (issue 23.4): a message refused for its size is
    answered with its id so its client stops waiting; most clients write ``id`` before ``params``. None when
    the prefix has no usable id (a string or an integer, 3.2) before ``params`` or the first ID_PREFIX_BYTES end.
    """
    fields, _ = _leading_fields(prefix)
    return usable_id(fields["id"]) if "id" in fields else None


def answer_in_prefix(prefix: bytes) -> bool:
    """True when the first bytes of a message show an answer (a ``result`` or ``error`` before any ``method`` or
    ``params``): the one kind of message that may be big (an inline host table, 8.8). Unsure is False."""
    fields, big = _leading_fields(prefix)
    return big in ("result", "error") and "method" not in fields


def _leading_fields(prefix: bytes) -> tuple[dict[str, Any], str | None]:
    """The top-level fields of a message's first bytes, read key by key up to its first big one (``params``,
    ``result``, ``error``: their value may be the rest of the message), and that key (None when not reached)."""
    text = prefix[:ID_PREFIX_BYTES].decode("utf-8", errors="ignore")  # a cut character at the end is dropped
    decoder = json.JSONDecoder()
    fields: dict[str, Any] = {}
    pos = _skip_space(text, 0)
    if not text.startswith("{", pos):
        return fields, None  # not an object (a batch, or not JSON)
    pos += 1
    try:
        while True:
            pos = _skip_space(text, pos)
            if not text.startswith('"', pos):
                return fields, None  # "}" or not JSON
            key, pos = decoder.raw_decode(text, pos)
            pos = _skip_space(text, pos)
            if not text.startswith(":", pos):
                return fields, None
            if key in ("params", "result", "error"):
                return fields, key
            value, pos = decoder.raw_decode(text, _skip_space(text, pos + 1))
            if pos >= len(text) or text[pos] not in _DELIMITERS:
                return fields, None  # the value may go on past the prefix (a number cut in the middle)
            fields[key] = value
            pos = _skip_space(text, pos)
            if not text.startswith(",", pos):
                return fields, None
            pos += 1
    except (ValueError, RecursionError):  # a value cut by the end of the prefix
        return fields, None


def head(pieces: list[bytes]) -> bytes:
    """The first ID_PREFIX_BYTES of a message held in pieces, without joining the whole message."""
    out: list[bytes] = []
    size = 0
    for piece in pieces:
        if size >= ID_PREFIX_BYTES:
            break
        out.append(piece[: ID_PREFIX_BYTES - size])
        size += len(out[-1])
    return b"".join(out)


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


class ScreenedLines:
    """The server's stdin lines, minus the requests with an invalid id, which it answers itself.

    ``answer`` (an async callable given at construction) sends the JSON-RPC error for such a line.
    """

    def __init__(self, lines: Any, answer: Callable[[dict[str, Any]], Awaitable[Any]]):
        self._lines = lines.__aiter__()
        self._answer = answer

    def __aiter__(self) -> ScreenedLines:
        return self

    async def __anext__(self) -> str:
        while True:
            line: str = await self._lines.__anext__()
            error = invalid_id_error(line) if line.strip() else None
            if error is None:
                return line
            await self._answer(error)
