"""acp.json of a frozen build (13.2); the validation rules live in the core (``analytics_acp.manifest``)."""

from __future__ import annotations

from typing import Any

from analytics_acp.constants import ACP_PROTOCOL_VERSION
from analytics_acp.manifest import (  # noqa: F401  (re-exported for install, check and launch)
    ICON_EXTENSIONS,
    ICON_MAX_BYTES,
    ID_PATTERN,
    IDENTITY_FIELDS,
    REQUIRED_FIELDS,
    ManifestError,
    icon_problem,
    load_manifest,
    manifest_problems,
    parse_manifest,
    transport_problems,
)

DEFAULT_HTTP_PORT = 7413
PYTHON_COMMANDS = ("python", "python3")  # mapped to the host's own interpreter (test fixtures, scripts)


def generate_manifest(info: Any, executable: str, *, icon: str | None, http_port: int = DEFAULT_HTTP_PORT) -> dict[str, Any]:
    """acp.json of a frozen build: identity from the declaration, the executable relative to the folder (13.2)."""
    command = f"./{executable}"
    doc: dict[str, Any] = {
        "acp_version": ACP_PROTOCOL_VERSION,
        "id": info.id,
        "name": info.name,
        "version": info.version,
        "publisher": info.publisher,
        "description": info.description,
    }
    if icon:
        doc["icon"] = icon
    doc["transport"] = {"type": "stdio", "command": command, "args": []}
    doc["http"] = {"args": ["--http", "--port", str(http_port)]}
    return doc
