"""The three-part result as an MCP CallToolResult (8, 8.4, 12.1).

content[0].text is model_response as JSON, floats as people read them (results/numbers.py);
everything for the host rides in ``_meta.acp``.
"""

from __future__ import annotations

import datetime as _dt
import time
from dataclasses import dataclass, field
from typing import Any

import orjson

from . import tablefile
from .constants import ACP_ECHO_MAX_CHARS, ACP_KEY, ACP_PROTOCOL_VERSION
from .errors import AcpError
from .results.numbers import readable


def _dumps(value: Any) -> str:
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS, default=str).decode()
    except TypeError:  # an int beyond 64 bits (valid JSON): the table file's exact fallback
        return tablefile.dumps(value).decode()


def utc_now_iso() -> str:
    """ISO 8601 UTC with milliseconds, as in 8.4 fetched_at."""
    now = _dt.datetime.now(_dt.UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def cut_long_strings(value: Any, limit: int = ACP_ECHO_MAX_CHARS) -> Any:
    """What system_info echoes: strings past ``limit`` characters cut, with their full length noted
    (a 50 MB SQL is not worth echoing back, nor storing by every host that keeps system_info)."""
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit]}… [cut: {len(value):,} characters in full]"
    if isinstance(value, dict):
        return {k: cut_long_strings(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [cut_long_strings(v, limit) for v in value]
    return value


@dataclass
class CallRecord:
    """What system_info needs about a call (8.4), filled as the call proceeds."""

    connector_id: str
    tool: str
    kind: str
    arguments: dict[str, Any]
    row_limit: int
    cost_limit_usd: float
    started: float = field(default_factory=time.monotonic)
    resource_id: str | None = None
    title: str | None = None
    cost_estimate_usd: float = 0
    cost_actual_usd: float | None = 0
    autocontext_attached: bool = False
    cached: bool | None = None
    messages: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    source: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # total_rows, returned_rows, truncated, field_limit, tables...

    def system_info(self, kind: str | None = None) -> dict[str, Any]:
        """The complete system_info object of 8.4."""
        info: dict[str, Any] = {
            "acp": self.connector_id,
            "acp_version": ACP_PROTOCOL_VERSION,
            "tool": self.tool,
            "kind": kind or self.kind,
            "resource_id": self.resource_id,
            "arguments": cut_long_strings(self.arguments),
        }
        if self.title:
            info["title"] = self.title
        for key in ("total_rows", "returned_rows", "truncated"):
            if key in self.extra:
                info[key] = self.extra[key]
        info.update(
            {
                "row_limit": self.row_limit,
                "cost_limit_usd": self.cost_limit_usd,
                "cost_estimate_usd": self.cost_estimate_usd,
                "cost_actual_usd": self.cost_actual_usd,
                "duration_ms": int((time.monotonic() - self.started) * 1000),
                "fetched_at": utc_now_iso(),
                "autocontext_attached": self.autocontext_attached,
            }
        )
        if self.cached is not None:
            info["cached"] = self.cached
        info["messages"] = list(self.messages)
        info["warnings"] = list(self.warnings)
        if self.source:
            info["source"] = self.source
        for key, value in self.extra.items():
            if key not in ("total_rows", "returned_rows", "truncated"):
                info[key] = value
        return info


def success(record: CallRecord, model_response: Any, system_data: dict[str, Any] | None = None,
            extra_content: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A CallToolResult with model_response in content[0].text and _meta.acp (8)."""
    acp: dict[str, Any] = {"version": ACP_PROTOCOL_VERSION, "kind": record.kind, "system_info": record.system_info()}
    if system_data is not None:
        acp["system_data"] = system_data
    # Floats as people read them (12790.11, 4858: results/numbers.py); system_data keeps them exact.
    content = [{"type": "text", "text": _dumps(readable(model_response))}]
    if extra_content:
        content.extend(extra_content)
    return {"content": content, "_meta": {ACP_KEY: acp}, "isError": False}


def failure(record: CallRecord, error: AcpError) -> dict[str, Any]:
    """A tool error (12.1): isError, content[0].text = {"error": {...}}, _meta.acp.error + system_info."""
    payload = error.payload()
    acp = {
        "version": ACP_PROTOCOL_VERSION,
        "kind": "error",
        "system_info": record.system_info(kind="error"),
        "error": payload,
    }
    return {"content": [{"type": "text", "text": _dumps({"error": payload})}], "_meta": {ACP_KEY: acp}, "isError": True}
