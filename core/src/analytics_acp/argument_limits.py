"""The maximum size of a request's arguments (issue 15.3; documented in the README, "Request size").

One rule for ACP servers (calls.py) and the ACP Bridge's own tools: a model can paste anything into
an argument, and what is accepted is stored and echoed (meta files, system_info.arguments). A whole
message past the transport's limit (HTTP body, stdio line) is refused before it is parsed, with the
JSON-RPC error of ``too_large_error``, carrying the request's id when its first bytes name it.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from .constants import ACP_MAX_ARGUMENTS_BYTES
from .errors import InvalidArguments
from .requestids import id_in_prefix


def check_arguments_size(name: str, arguments: dict[str, Any]) -> None:
    """Raise ACP_INVALID_ARGUMENTS when ``arguments`` are more than ACP_MAX_ARGUMENTS_BYTES of JSON."""
    try:
        size = len(orjson.dumps(arguments, default=str))
    except TypeError:  # an integer past 64 bits: the stdlib writes it (the argument model then refuses it by name)
        size = len(json.dumps(arguments, default=str))
    if size > ACP_MAX_ARGUMENTS_BYTES:
        raise InvalidArguments(
            f"The arguments of {name} are {size:,} bytes; the maximum is {ACP_MAX_ARGUMENTS_BYTES:,} bytes (1 MiB). "
            "Send a shorter request: pass large data as a host table (table_ref) instead of inline."
        )


def too_large_error(limit: int, what: str, prefix: bytes = b"") -> dict[str, Any]:
    """The JSON-RPC error answering a message refused for its size before it was parsed.

    Its id is read from the message's first bytes (``prefix``) when it comes before ``params``
    (requestids.id_in_prefix, issue 23.4), else null.
    """
    return {"jsonrpc": "2.0", "id": id_in_prefix(prefix), "error": {
        "code": -32017, "message": (
            f"The request {what} is larger than {limit:,} bytes. A tools/call's arguments may be at most "
            f"{ACP_MAX_ARGUMENTS_BYTES:,} bytes (1 MiB) of JSON: send a shorter request."),
        "data": {"name": "ACP_INVALID_ARGUMENTS", "max_arguments_bytes": ACP_MAX_ARGUMENTS_BYTES,
                 "max_message_bytes": limit}}}
