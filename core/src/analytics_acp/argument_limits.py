"""The maximum size of a request's arguments (issue 15.3; documented in the README, "Request size").

One rule for ACP servers (calls.py) and the ACP Bridge's own tools: a model can paste anything into
an argument, and what is accepted is stored and echoed (meta files, system_info.arguments).
"""

from __future__ import annotations

from typing import Any

import orjson

from .constants import ACP_MAX_ARGUMENTS_BYTES
from .errors import InvalidArguments


def check_arguments_size(name: str, arguments: dict[str, Any]) -> None:
    """Raise ACP_INVALID_ARGUMENTS when ``arguments`` are more than ACP_MAX_ARGUMENTS_BYTES of JSON."""
    size = len(orjson.dumps(arguments, default=str))
    if size > ACP_MAX_ARGUMENTS_BYTES:
        raise InvalidArguments(
            f"The arguments of {name} are {size:,} bytes; the maximum is {ACP_MAX_ARGUMENTS_BYTES:,} bytes (1 MiB). "
            "Send a shorter request: pass large data as a host table (table_ref) instead of inline."
        )
