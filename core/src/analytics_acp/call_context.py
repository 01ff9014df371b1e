"""The effective configuration of one call as a ``CallContext`` (5.3).

Precedence: ``_meta.acp`` > ``acp/configure`` (the session) > the capability defaults,
with ``config`` merged by key; credentials and config are validated against the setup
schemas (5.5.3) and the credential identity is hashed per connector (7.4, 10.1.5).
"""

from __future__ import annotations

from functools import partial
from typing import Any

from . import schemas
from .context import CallContext, ClientInfo, ReadTable
from .declarations import ConnectorInfo
from .dirs import cache_dir, tmp_dir
from .effective import SessionConfig, check_limits, check_meta, check_tables, pick
from .plugins import LoadedConnector
from .signals import CallSignals
from .state import identity_key


def validate_credentials(info: ConnectorInfo, credentials: dict[str, Any]) -> dict[str, Any]:
    """5.5.3: credentials must match credentials_schema (ACP_CREDENTIALS_INVALID otherwise)."""
    return schemas.validate_credentials(info.credentials_schema, credentials)


def validate_config(info: ConnectorInfo, config: dict[str, Any]) -> dict[str, Any]:
    """5.5.3: config must match config_schema (ACP_INVALID_ARGUMENTS otherwise); defaults filled."""
    if info.config_schema is None:
        return dict(config)
    return schemas.validate_config(info.config_schema, config)


def credentials_resource(loaded: LoadedConnector, credentials: dict[str, Any] | None, config: dict[str, Any]) -> str | None:
    """6: with no default_resource_id configured, the resource the credentials name is the default."""
    if not credentials:
        return None
    rid = loaded.hook.credentials_resource(credentials=credentials, config=config)
    return rid if isinstance(rid, str) and rid else None


def _credential_identity(loaded: LoadedConnector, credentials: dict[str, Any] | None, session: SessionConfig) -> str:
    """The call's hashed credential identity (7.4, 10.1.5); a session's own credentials are hashed once
    (identity_memo.py), credentials sent in ``_meta.acp`` on every call."""

    def compute(credentials: dict[str, Any] | None) -> str:
        return identity_key(loaded.info.id, loaded.hook.credential_identity(credentials=credentials))[:32]

    if credentials is None or credentials is not session.credentials:
        return compute(credentials)
    return loaded.identities.identity(credentials, compute)


def build_call_context(
    loaded: LoadedConnector,
    tool_name: str,
    meta: dict[str, Any],
    session: SessionConfig,
    client: ClientInfo,
    read_table: ReadTable | None,
    signals: CallSignals | None = None,
) -> CallContext:
    """The ``CallContext`` of one tools/call; raises a typed AcpError for a malformed ``_meta.acp``."""
    check_meta(meta)  # 5.2: same rules and messages as acp/configure
    info = loaded.info
    d = info.defaults
    limits = {
        "row_limit": pick(meta, session, "row_limit", d.row_limit),
        "cost_limit_usd": pick(meta, session, "cost_limit_usd", d.cost_limit_usd),
        "field_limit": pick(meta, session, "field_limit", d.effective_field_limit),
    }
    check_limits(limits)
    credentials: dict[str, Any] | None
    if meta.get("credentials") is not None:
        credentials = validate_credentials(info, meta["credentials"])
    else:
        credentials = session.credentials
    config = dict(session.config)
    if isinstance(meta.get("config"), dict):
        config.update(meta["config"])  # 5.3: config merges by key
    config = validate_config(info, config)
    tables = meta.get("tables") if meta.get("tables") is not None else session.tables
    if tables is not None:
        tables = check_tables(info, tables)
    sampling = meta.get("sampling") or "head"
    inline = meta.get("inline_max_bytes")
    call_id = meta.get("call_id")
    return CallContext(
        connector_id=info.id,
        tool=tool_name,
        credentials=credentials,
        config=config,
        row_limit=limits["row_limit"],
        cost_limit_usd=limits["cost_limit_usd"],
        field_limit=limits["field_limit"],
        tables=tables,
        default_resource_id=pick(meta, session, "default_resource_id", None) or credentials_resource(loaded, credentials, config),
        session_id=meta.get("session_id"),
        conversation_id=meta.get("conversation_id"),
        call_id=call_id,
        sampling=sampling,
        inline_max_bytes=inline,
        autocontext_delivered=meta.get("autocontext_delivered"),
        autocontext_blocks=meta.get("autocontext_blocks"),
        client=client,
        tmp_dir=tmp_dir(),
        cache_dir=cache_dir(),
        credential_identity=_credential_identity(loaded, credentials, session),
        table_reader=partial(read_table, call_id=call_id) if read_table is not None else None,
        signals=signals if signals is not None else CallSignals(),
        connector_state=loaded.state,
    )
