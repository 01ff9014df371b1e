"""A set-up checked offline: what acp/configure validates (5.1, 5.5.3) plus the connector's own check, and the
validate-only form of acp/configure a host uses to check a set-up without changing the session.

**Validate-only acp/configure** (an extension of this implementation, compatible with any ACP 1.x peer):

- The server advertises it in its initialize result as ``capabilities.experimental["analytics-acp/validate-only"]
  = {"version": 1}`` (a key beside ``acp``, not inside it: 4.2's capability stays as the spec writes it).
- The host sends ``acp/configure`` with ``params._meta["analytics-acp/validate-only"] = true`` and the set-up of
  one source as the params (the fields of 5.1: limits, credentials, config, tables, default_resource_id).
- The server checks those values as a session configured with exactly them (not merged into the session's):
  limits (ACP_INVALID_LIMIT, -32016), credentials missing where the source needs them
  (ACP_CREDENTIALS_MISSING) or failing their schema or the connector's check (ACP_CREDENTIALS_INVALID),
  config (ACP_INVALID_ARGUMENTS, 5.5.3), tables; then answers ``{ok: true, effective}`` as acp/configure would,
  and changes nothing: the session keeps what it had. No network is used (the connector's check is offline).
- A host facing a server without the key never sends the marker (a server that does not know it would apply
  the values); it checks the values against the published setup schemas instead (:func:`check_offline`).

The host side is ``AcpClient.validate_setup`` (host/client.py).
"""

from __future__ import annotations

from typing import Any

from . import schemas
from .effective import check_limits, check_shapes, check_table_names
from .errors import AcpError, CredentialsMissing

VALIDATE_ONLY_KEY = "analytics-acp/validate-only"
VALIDATE_ONLY_CAPABILITY: dict[str, Any] = {"version": 1}


def validate_only_requested(meta: Any) -> bool:
    """True when an acp/configure request's ``_meta`` carries the validate-only marker."""
    return isinstance(meta, dict) and meta.get(VALIDATE_ONLY_KEY) is True


def supports_validate_only(initialize_result: dict[str, Any]) -> bool:
    """True when the server's initialize result advertises validate-only acp/configure."""
    exp = (initialize_result.get("capabilities") or {}).get("experimental") or {}
    return isinstance(exp, dict) and isinstance(exp.get(VALIDATE_ONLY_KEY), dict)


def credentials_needed(schema: dict[str, Any]) -> bool:
    """True when the credentials schema asks for something (a oneOf or required fields)."""
    return bool(schema.get("oneOf") or schema.get("required"))


def missing_credentials(schema: dict[str, Any]) -> CredentialsMissing:
    """ACP_CREDENTIALS_MISSING for a set-up without the credentials its schema asks for, naming the accepted forms."""
    titles = [str(v.get("title")) for v in schema.get("oneOf") or [] if isinstance(v, dict) and v.get("title")]
    forms = f" (one of: {', '.join(titles)})" if titles else ""
    return CredentialsMissing(f"This source needs credentials{forms} and none were given.")


def check_offline(capability: dict[str, Any], values: dict[str, Any]) -> AcpError | None:
    """A set-up checked against a server's published capability only (4.2, 5.5): limits, shapes, tables,
    credentials required and matching ``credentials_schema``, config matching ``config_schema``.

    What a host does for a server without validate-only acp/configure; the typed error, or None.
    """
    try:
        check_limits(values)
        check_shapes(values)
        if values.get("tables") is not None:
            check_table_names([str(e.get("name")) for e in capability.get("table_catalog") or [] if isinstance(e, dict)],
                              values["tables"])
        creds_schema = capability.get("credentials_schema")
        creds_schema = creds_schema if isinstance(creds_schema, dict) else {"type": "object", "properties": {}}
        if values.get("credentials") is None:
            if credentials_needed(creds_schema):
                raise missing_credentials(creds_schema)
        else:
            schemas.validate_credentials(creds_schema, values["credentials"])
        config_schema = capability.get("config_schema")
        if values.get("config") is not None and isinstance(config_schema, dict):
            schemas.validate_config(config_schema, values["config"])
    except AcpError as exc:
        return exc
    return None
