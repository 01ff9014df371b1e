"""Session configuration and the effective settings of a call (5.1, 5.2, 5.3).

``SessionConfig`` is what ``acp/configure`` accumulated on one connection (stdio process
or HTTP session). ``effective_settings`` applies the precedence
``_meta.acp`` > session > capability defaults, with ``config`` merged by key.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .constants import ACP_MAX_FIELD_LIMIT, ACP_MAX_ROW_LIMIT
from .declarations import ConnectorInfo
from .errors import InvalidArguments, InvalidLimit

LIMIT_KEYS = ("row_limit", "cost_limit_usd", "field_limit")
# Keys the host sets through the system channel; the model must never pass them in arguments (5.4).
SYSTEM_KEYS = frozenset(
    {"row_limit", "cost_limit_usd", "field_limit", "credentials", "config", "default_resource_id", "inline_max_bytes"}
)
# Never accepted in arguments even when a tool's schema names them, and never echoed back (5.4, 8.4).
NEVER_ARGUMENTS = frozenset({"credentials", *LIMIT_KEYS})
_UNSET = object()
Validator = Callable[[dict[str, Any]], dict[str, Any]]  # credentials/config against their setup schema


def echoable_arguments(arguments: dict[str, Any], declared: Any = ()) -> dict[str, Any]:
    """The arguments system_info may echo (8.4): without credentials, limits or undeclared system keys.

    A refused call still answers with system_info.arguments; the host logs and stores it, so a
    credentials object the model pasted into arguments must not travel back in it (5.4, 10.1).
    """
    return {
        k: v for k, v in arguments.items()
        if k not in NEVER_ARGUMENTS and (k not in SYSTEM_KEYS or k in declared)
    }


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value


def check_limits(values: dict[str, Any]) -> None:
    """Raise ACP_INVALID_LIMIT (-32016) for a row/cost/field limit outside 5.1's ranges."""
    if "row_limit" in values and values["row_limit"] is not None:
        v = values["row_limit"]
        if not _is_int(v) or not 0 <= v <= ACP_MAX_ROW_LIMIT:
            raise InvalidLimit(f"row_limit must be an integer between 0 and {ACP_MAX_ROW_LIMIT}.")
    if "cost_limit_usd" in values and values["cost_limit_usd"] is not None:
        v = values["cost_limit_usd"]
        if not _is_number(v) or v < 0 or v == float("inf"):
            raise InvalidLimit("cost_limit_usd must be a number greater than or equal to 0.")
    if "field_limit" in values and values["field_limit"] is not None:
        v = values["field_limit"]
        if not _is_int(v) or not 1 <= v <= ACP_MAX_FIELD_LIMIT:
            raise InvalidLimit(f"field_limit must be an integer between 1 and {ACP_MAX_FIELD_LIMIT}.")


def check_shapes(values: dict[str, Any]) -> None:
    """Shapes of the fields acp/configure and _meta.acp share (5.1, 5.2): one rule, one message for both.

    Limits are checked by :func:`check_limits` (-32016), tables by :func:`check_tables`; null means
    "not set here" everywhere (in acp/configure a null credentials also clears the session's).
    """
    creds = values.get("credentials")
    if creds is not None and not isinstance(creds, dict):
        raise InvalidArguments("credentials must be an object (or null to clear them).")
    if values.get("config") is not None and not isinstance(values["config"], dict):
        raise InvalidArguments("config must be an object.")
    rid = values.get("default_resource_id")
    if rid is not None and not isinstance(rid, str):
        raise InvalidArguments("default_resource_id must be a string or null.")


# _meta.acp fields that only exist per call (5.2): name -> (check, what the value must be).
_META_ONLY: dict[str, tuple[Any, str]] = {
    "session_id": (lambda v: isinstance(v, str), "a string"),
    "conversation_id": (lambda v: isinstance(v, str), "a string"),
    "call_id": (lambda v: isinstance(v, str), "a string"),
    "autocontext_delivered": (lambda v: isinstance(v, bool), "true or false"),
    "autocontext_blocks": (lambda v: isinstance(v, list) and all(isinstance(i, str) for i in v), "a list of block ids"),
    "sampling": (lambda v: v in ("head", "spread"), "head or spread"),
    "inline_max_bytes": (lambda v: _is_int(v) and v >= 0, "a non-negative integer"),
}


def check_meta(meta: dict[str, Any]) -> None:
    """Validate ``_meta.acp`` of a tools/call (5.2) with acp/configure's rules and messages (5.1).

    Raises ACP_INVALID_LIMIT for limits and ACP_INVALID_ARGUMENTS for any other malformed field;
    unknown fields are ignored (12.2: newer minor versions may add some).
    """
    check_limits(meta)
    check_shapes(meta)
    if meta.get("tables") is not None and (
        not isinstance(meta["tables"], list) or not all(isinstance(t, str) for t in meta["tables"])
    ):
        raise InvalidArguments("tables must be a list of table names.")
    for key, (ok, what) in _META_ONLY.items():
        if meta.get(key) is not None and not ok(meta[key]):
            raise InvalidArguments(f"{key} must be {what}.")


def check_tables(info: ConnectorInfo, tables: Any) -> list[str] | None:
    """Validate a ``tables`` selection against the catalog (5.1, 8.7)."""
    if tables is None:
        return None
    return check_table_names([entry.name for entry in info.table_catalog], tables)


def check_table_names(names: list[str], tables: Any) -> list[str]:
    """A ``tables`` selection checked against the catalog's table ``names`` (5.1: a name outside it is
    ACP_INVALID_ARGUMENTS); the selection without repeats."""
    if not names:
        raise InvalidArguments("tables can only be set on a server that declares table_catalog.")
    if not isinstance(tables, list) or not all(isinstance(t, str) for t in tables):
        raise InvalidArguments("tables must be a list of table names.")
    unknown = [t for t in tables if t not in names]
    if unknown:
        raise InvalidArguments(f"Unknown table(s) {', '.join(unknown)}. Valid tables: {', '.join(names)}.")
    return list(dict.fromkeys(tables))


@dataclass
class SessionConfig:
    """What acp/configure accumulated for one session. Never serialized as is (it holds credentials)."""

    row_limit: int | None = None
    cost_limit_usd: float | None = None
    field_limit: int | None = None
    tables: list[str] | None = None
    credentials: dict[str, Any] | None = None
    config: dict[str, Any] = field(default_factory=dict)
    default_resource_id: str | None = None

    def merged(self, params: dict[str, Any], info: ConnectorInfo, validate_credentials: Validator,
               validate_config: Validator) -> SessionConfig:
        """Return a new SessionConfig with ``params`` merged in; raises before anything changes (5.1)."""
        check_limits(params)
        new = copy.deepcopy(self)
        for key in LIMIT_KEYS:
            if key in params and params[key] is not None:
                setattr(new, key, params[key])
        if "tables" in params:
            new.tables = check_tables(info, params["tables"])
        check_shapes(params)
        if "credentials" in params:
            creds = params["credentials"]
            # 5.1: null clears the session's credentials
            new.credentials = None if creds is None else validate_credentials(creds)
        if "config" in params and params["config"] is not None:
            new.config = {**new.config, **params["config"]}
            validate_config(new.config)
        if "default_resource_id" in params:
            new.default_resource_id = params["default_resource_id"] or None
        return new

    def effective(self, info: ConnectorInfo) -> dict[str, Any]:
        """The ``effective`` object of the configure response: limits, has_credentials, never the secret."""
        d = info.defaults
        out: dict[str, Any] = {
            "row_limit": self.row_limit if self.row_limit is not None else d.row_limit,
            "cost_limit_usd": self.cost_limit_usd if self.cost_limit_usd is not None else d.cost_limit_usd,
            "field_limit": self.field_limit if self.field_limit is not None else d.effective_field_limit,
            "has_credentials": bool(self.credentials),
            "default_resource_id": self.default_resource_id,
        }
        if info.table_catalog:
            tables = self.tables if self.tables is not None else d.tables
            out["tables"] = list(tables) if tables is not None else [e.name for e in info.table_catalog]
        return out


def pick(meta: dict[str, Any], session: SessionConfig, key: str, default: Any) -> Any:
    """First defined of _meta.acp[key], the session's value, the default (5.3)."""
    value = meta.get(key, _UNSET)
    if value is not _UNSET and value is not None:
        return value
    value = getattr(session, key, None)
    return default if value is None else value
