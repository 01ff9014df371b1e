"""acp.json rules shared by every host-side tool: the build, ``install``/``check`` and the bridge (13.1.1, 13.2).

acp.json carries identity and how to start the server, nothing more: the capability owns
every other fact (13.2), so a manifest with extra fields is a problem to report, not data.
"""

from __future__ import annotations

import json
import re
from pathlib import Path, PurePosixPath
from typing import Any

ID_PATTERN = re.compile(r"^[a-z][a-z0-9_-]*$")  # 13.1.1 / 13.2
IDENTITY_FIELDS = ("acp_version", "id", "name", "version", "publisher", "description", "icon", "transport", "http")
REQUIRED_FIELDS = ("acp_version", "id", "name", "version", "description", "transport")
ICON_EXTENSIONS = (".svg", ".png", ".webp")
ICON_MAX_BYTES = 256 * 1024  # 13.2
MANIFEST_NAME = "acp.json"


class ManifestError(ValueError):
    """acp.json is missing, unreadable or breaks a rule of 13.1.1/13.2; the message says which."""


def parse_manifest(data: bytes, where: str = MANIFEST_NAME) -> dict[str, Any]:
    """Decode acp.json bytes (UTF-8, BOM tolerated, 13.1.1) and check the two fields install needs: id and name."""
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
        raise ManifestError(f"{where}: id {ident!r} must match {ID_PATTERN.pattern} (13.2).")
    name = doc.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ManifestError(f"{where}: name must be a non-empty string (13.2).")
    return doc


def load_manifest(folder: Path) -> dict[str, Any]:
    """Read and parse ``folder/acp.json`` (see :func:`parse_manifest`); ManifestError when unusable."""
    path = Path(folder) / MANIFEST_NAME
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ManifestError(f"Cannot read {path}: {exc.strerror or exc}.") from None
    return parse_manifest(data, str(path))


def manifest_problems(doc: dict[str, Any], folder: Path | None = None) -> list[str]:
    """Every 13.2 rule ``doc`` breaks: required fields, only identity/transport/icon, a usable icon."""
    problems = [f"missing required field {key!r}" for key in REQUIRED_FIELDS if key not in doc]
    extra = sorted(set(doc) - set(IDENTITY_FIELDS))
    if extra:
        problems.append(f"fields beyond identity/transport/icon (the capability owns them, 13.2): {', '.join(extra)}")
    if "id" in doc and not (isinstance(doc["id"], str) and ID_PATTERN.match(doc["id"])):
        problems.append(f"id {doc['id']!r} does not match {ID_PATTERN.pattern}")
    for key in ("name", "version", "description", "acp_version"):
        if key in doc and not (isinstance(doc[key], str) and doc[key].strip()):
            problems.append(f"{key} must be a non-empty string")
    if "transport" in doc:
        problems.extend(transport_problems(doc["transport"]))
    http = doc.get("http")
    if http is not None and not (isinstance(http, dict) and isinstance(http.get("args"), list)):
        problems.append("http must be an object with an args array")
    if doc.get("icon") is not None and folder is not None:
        why = icon_problem(folder, doc["icon"])
        if why:
            problems.append(f"icon: {why}")
    return problems


def transport_problems(transport: Any) -> list[str]:
    """Problems of a 13.2 transport object (stdio with command/args, or http with a url)."""
    if not isinstance(transport, dict):
        return ["transport must be an object"]
    kind = transport.get("type", "stdio")
    if kind == "stdio":
        out = []
        if not isinstance(transport.get("command"), str) or not transport["command"]:
            out.append("transport.command must be a non-empty string")
        if not isinstance(transport.get("args", []), list):
            out.append("transport.args must be an array")
        return out
    if kind == "http":
        url = transport.get("url")
        ok = isinstance(url, str) and url.startswith(("http://", "https://"))
        return [] if ok else ["transport.url must be an http(s) URL"]
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
