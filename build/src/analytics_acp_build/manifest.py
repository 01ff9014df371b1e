"""acp.json: generate it from a connector's declaration and validate one read from a folder or zip (13.2, 13.1.1).

The host-side validator prefers the core's ``analytics_acp.manifest.load_manifest`` when it exists;
this module keeps the few rules install and check need so they work without it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path, PurePosixPath
from typing import Any

from analytics_acp.constants import ACP_PROTOCOL_VERSION

ID_PATTERN = re.compile(r"^[a-z][a-z0-9_-]*$")  # 13.1.1 / 13.2
# 13.2: acp.json is identity + transport (+ icon). Everything else comes from the capability.
IDENTITY_FIELDS = ("acp_version", "id", "name", "version", "publisher", "description", "icon", "transport", "http")
REQUIRED_FIELDS = ("acp_version", "id", "name", "version", "description", "transport")
ICON_EXTENSIONS = (".svg", ".png", ".webp")
ICON_MAX_BYTES = 256 * 1024
DEFAULT_HTTP_PORT = 7413
PYTHON_COMMANDS = ("python", "python3")  # mapped to the host's own interpreter (test fixtures, scripts)


class ManifestError(ValueError):
    """acp.json is missing, unreadable or breaks a rule of 13.1.1/13.2; the message says which."""


def parse_manifest(data: bytes, where: str = "acp.json") -> dict[str, Any]:
    """Decode acp.json bytes (UTF-8, BOM tolerated, 13.1.1) and validate id and name (install step 1)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ManifestError(f"{where} is not UTF-8: {exc}.") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ManifestError(f"{where} is not valid JSON: {exc.msg} at line {exc.lineno}.") from None
    if not isinstance(doc, dict):
        raise ManifestError(f"{where} must be a JSON object.")
    ident = doc.get("id")
    if not isinstance(ident, str) or not ID_PATTERN.match(ident):
        raise ManifestError(f"{where}: id {ident!r} must match ^[a-z][a-z0-9_-]*$ (13.2).")
    name = doc.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ManifestError(f"{where}: name must be a non-empty string (13.2).")
    return doc


def load_manifest(folder: Path) -> dict[str, Any]:
    """Read and validate ``folder/acp.json`` (the core's validator when present, else ours); returns the dict."""
    path = Path(folder) / "acp.json"
    try:
        from analytics_acp import manifest as core_manifest  # written by the core; optional
    except ImportError:
        core_manifest = None
    if core_manifest is not None and hasattr(core_manifest, "load_manifest"):
        try:
            loaded = core_manifest.load_manifest(Path(folder))
        except (OSError, ValueError) as exc:
            raise ManifestError(str(exc)) from None
        raw = _as_dict(loaded)
        if raw is not None:
            # Our own id/name rules still apply (cheap, and keeps install's guarantees stable).
            return parse_manifest(json.dumps(raw).encode(), str(path))
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ManifestError(f"Cannot read {path}: {exc.strerror or exc}.") from None
    return parse_manifest(data, str(path))


def _as_dict(loaded: Any) -> dict[str, Any] | None:
    if isinstance(loaded, dict):
        return loaded
    for attr in ("raw", "data", "doc"):
        value = getattr(loaded, attr, None)
        if isinstance(value, dict):
            return value
    return None


def manifest_problems(doc: dict[str, Any], folder: Path | None = None) -> list[str]:
    """Every 13.2 rule ``doc`` breaks (required fields, only identity/transport/icon, icon inside the folder)."""
    problems = [f"missing required field {key!r}" for key in REQUIRED_FIELDS if key not in doc]
    extra = sorted(set(doc) - set(IDENTITY_FIELDS))
    if extra:
        problems.append(f"fields beyond identity/transport/icon (the capability owns them, 13.2): {', '.join(extra)}")
    if "id" in doc and not (isinstance(doc["id"], str) and ID_PATTERN.match(doc["id"])):
        problems.append(f"id {doc['id']!r} does not match ^[a-z][a-z0-9_-]*$")
    for key in ("name", "version", "description", "acp_version"):
        if key in doc and not (isinstance(doc[key], str) and doc[key].strip()):
            problems.append(f"{key} must be a non-empty string")
    transport = doc.get("transport")
    if "transport" in doc:
        problems.extend(transport_problems(transport))
    http = doc.get("http")
    if http is not None and not (isinstance(http, dict) and isinstance(http.get("args"), list)):
        problems.append("http must be an object with an args array")
    if doc.get("icon") is not None and folder is not None:
        why = icon_problem(folder, doc["icon"])
        if why:
            problems.append(f"icon: {why}")
    return problems


def transport_problems(transport: Any) -> list[str]:
    """Problems of a 13.2 transport object (stdio command/args or http url)."""
    if not isinstance(transport, dict):
        return ["transport must be an object"]
    kind = transport.get("type")
    if kind == "stdio":
        out = []
        if not isinstance(transport.get("command"), str) or not transport["command"]:
            out.append("transport.command must be a non-empty string")
        if not isinstance(transport.get("args", []), list):
            out.append("transport.args must be an array")
        return out
    if kind == "http":
        url = transport.get("url")
        return [] if isinstance(url, str) and url.startswith(("http://", "https://")) else ["transport.url must be an http(s) URL"]
    return [f"transport.type {kind!r} must be stdio or http"]


def icon_problem(folder: Path, icon: Any) -> str | None:
    """Why an icon path is unusable (13.2: relative, no '..', svg/png/webp, <= 256 KB, inside the folder), or None."""
    if not isinstance(icon, str) or not icon:
        return "must be a relative path string"
    if "://" in icon or icon.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", icon):
        return f"{icon!r} is not a relative path"
    if ".." in PurePosixPath(icon.replace("\\", "/")).parts:
        return f"{icon!r} contains '..'"
    if not icon.lower().endswith(ICON_EXTENSIONS):
        return f"{icon!r} is not svg, png or webp"
    root = Path(folder).resolve()
    target = (root / icon).resolve()
    if root != target and root not in target.parents:
        return f"{icon!r} resolves outside the server folder"
    if not target.is_file():
        return f"{icon!r} does not exist"
    if target.stat().st_size > ICON_MAX_BYTES:
        return f"{icon!r} is larger than 256 KB"
    return None


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
