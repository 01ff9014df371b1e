"""sources.json (16.3): the sources the bridge serves, their credentials, config and limits.

A broken file or a broken source never stops the bridge: the problem is recorded and
``acp_sources`` reports it. Values inside ``credentials`` and ``config`` may be references
(``{"env": NAME}``, ``{"file": path}``, ``{"projectPath": path}``). Values read through ``env`` or
``file`` are secrets; literal credential values are secrets when the ACP's credentials_schema marks
their field ``writeOnly`` (5.5) or the key is a usual secret name. The bridge scrubs every secret
from whatever the client receives.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analytics_acp.constants import ACP_MAX_FIELD_LIMIT, ACP_MAX_ROW_LIMIT
from analytics_acp.schemas import nested_secret_leaves

SOURCE_ID = re.compile(r"^[a-z0-9_-]{1,40}$")
KNOWN_FIELDS = {
    "id", "acp", "label", "credentials", "config", "default_resource_id",
    "row_limit", "field_limit", "cost_limit_usd",
}
LIMIT_FIELDS = ("row_limit", "field_limit", "cost_limit_usd")
REFERENCE_KEYS = ("env", "file", "projectPath")
# Secrets shorter than this are not scrubbed from text (a 2-letter value would mangle every word).
MIN_SECRET_CHARS = 4
# Key names treated as secret even if a server forgot writeOnly in its credentials_schema.
SECRET_KEY_NAMES = {
    "password", "passwd", "token", "secret", "api_key", "apikey", "key", "access_token", "refresh_token",
    "private_key", "private_key_id", "id_token", "client_secret", "service_account", "credentials", "dsn", "url",
    "connection_string",
}


def write_only_names(schema: Any) -> set[str]:
    """Property names marked ``writeOnly`` anywhere in a setup schema (variants and nesting included)."""
    found: set[str] = set()
    if isinstance(schema, dict):
        for name, prop in (schema.get("properties") or {}).items():
            if isinstance(prop, dict) and prop.get("writeOnly"):
                found.add(str(name).lower())
            found |= write_only_names(prop)
        for key in ("oneOf", "anyOf", "allOf"):
            for variant in schema.get(key) or []:
                found |= write_only_names(variant)
    return found


class ReferenceError_(ValueError):
    """A value reference could not be resolved (message names the field, never the value)."""


@dataclass
class Source:
    """One entry of sources.json, with references resolved."""

    id: str
    acp: str
    label: str
    credentials: dict[str, Any] | None = None
    config: dict[str, Any] | None = None
    default_resource_id: str | None = None
    limits: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    warnings: list[str] = field(default_factory=list)
    # Literal credential values by key name: which are secret is decided with the ACP's schema.
    literal_credentials: list[tuple[str, str]] = field(default_factory=list)

    def secret_values(self, credentials_schema: dict[str, Any] | None) -> set[str]:
        """Literal credential values that are secrets: writeOnly in the schema (5.5), or a secret-named key.

        Without a schema (the server never started) every literal credential value counts as secret.
        """
        if credentials_schema is None:
            names = None
        else:
            names = write_only_names(credentials_schema) | SECRET_KEY_NAMES
        out = {
            value for key, value in self.literal_credentials
            if len(value) >= MIN_SECRET_CHARS and key != "type" and (names is None or key.lower() in names)
        }
        for value in list(out):  # a key file pasted as JSON text: its secret fields may surface alone
            if value.lstrip().startswith("{"):
                try:
                    out.update(nested_secret_leaves(json.loads(value), MIN_SECRET_CHARS))
                except ValueError:
                    pass
        return out

    def meta(self) -> dict[str, Any]:
        """The per-call ``_meta.acp`` values this source contributes (5.2), without session fields."""
        out: dict[str, Any] = {}
        if self.credentials is not None:
            out["credentials"] = self.credentials
        if self.config is not None:
            out["config"] = self.config
        if self.default_resource_id is not None:
            out["default_resource_id"] = self.default_resource_id
        out.update(self.limits)
        return out


@dataclass
class SourcesFile:
    """The parsed sources.json: sources in file order, a file-level error, and the secrets seen."""

    path: Path
    sources: list[Source] = field(default_factory=list)
    error: str | None = None
    defaults: dict[str, Any] = field(default_factory=dict)
    secrets: set[str] = field(default_factory=set)

    def get(self, source_id: str) -> Source | None:
        """The source with that id, or None."""
        return next((s for s in self.sources if s.id == source_id), None)


def _check_limits(raw: dict[str, Any], where: str) -> tuple[dict[str, Any], list[str]]:
    """Validate row_limit (0..5000), field_limit (1..200), cost_limit_usd (>= 0) as in 5.1."""
    limits: dict[str, Any] = {}
    errors: list[str] = []
    for key in LIMIT_FIELDS:
        if key not in raw or raw[key] is None:
            continue
        value = raw[key]
        if key == "cost_limit_usd":
            ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value >= 0
            hint = "a number >= 0"
        else:
            low, high = (0, ACP_MAX_ROW_LIMIT) if key == "row_limit" else (1, ACP_MAX_FIELD_LIMIT)
            ok = isinstance(value, int) and not isinstance(value, bool) and low <= value <= high
            hint = f"an integer from {low} to {high}"
        if ok:
            limits[key] = value
        else:
            errors.append(f"{where}.{key} must be {hint}.")
    return limits, errors


class _Resolver:
    """Resolves value references inside credentials/config and remembers secret values."""

    def __init__(self, sources_path: Path, project: Path, secrets: set[str]):
        self.base = sources_path.parent
        self.project = project
        self.secrets = secrets
        self.literals: list[tuple[str, str]] = []

    def resolve(self, value: Any, where: str, secret: bool) -> Any:
        if isinstance(value, dict):
            if len(value) == 1 and next(iter(value)) in REFERENCE_KEYS:
                return self._reference(next(iter(value)), next(iter(value.values())), where, secret)
            return {k: self.resolve(v, f"{where}.{k}", secret) for k, v in value.items()}
        if isinstance(value, list):
            return [self.resolve(v, f"{where}[{i}]", secret) for i, v in enumerate(value)]
        if secret and isinstance(value, str):
            self.literals.append((where.rsplit(".", 1)[-1].split("[")[0], value))
        return value

    def _reference(self, kind: str, arg: Any, where: str, secret: bool) -> str:
        if not isinstance(arg, str) or not arg:
            raise ReferenceError_(f"{where}: the {kind!r} reference needs a non-empty string.")
        if kind == "env":
            if arg not in os.environ:
                raise ReferenceError_(f"{where}: environment variable {arg} is not set.")
            value = os.environ[arg]
            self._remember(value)  # env/file references are how secrets are kept out of the file
            return value
        if kind == "file":
            path = Path(arg).expanduser()
            path = path if path.is_absolute() else self.base / path
            try:
                value = path.read_text(encoding="utf-8-sig").strip()
            except OSError as exc:
                raise ReferenceError_(f"{where}: cannot read file {path} ({exc.strerror or type(exc).__name__}).") from None
            except UnicodeDecodeError:
                raise ReferenceError_(f"{where}: file {path} is not UTF-8 text.") from None
            self._remember(value)
            return value
        value = str((self.project / arg).resolve())
        if secret:
            self.literals.append((where.rsplit(".", 1)[-1].split("[")[0], value))
        return value

    def _remember(self, value: str) -> None:
        if len(value) >= MIN_SECRET_CHARS:
            self.secrets.add(value)
            # A JSON secret (a key file) may surface in pieces: remember the values of its secret fields
            # (private_key, refresh_token…), never its field names, its type or its identities (issue 26.4).
            if value.lstrip().startswith(("{", "[")):
                try:
                    parsed = json.loads(value)
                except ValueError:
                    return
                self.secrets.update(nested_secret_leaves(parsed, 8))


def _json_object(text: str, where: str) -> dict[str, Any]:
    """The JSON object a whole-object reference points at (``"credentials": {"file": "adc.json"}``)."""
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise ReferenceError_(f"{where}: a reference in place of the whole object must hold a JSON object.")
    return value


def load_sources(path: Path, project: Path) -> SourcesFile:
    """Read and validate sources.json; problems are recorded on the result, never raised."""
    result = SourcesFile(path=path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        result.error = f"sources.json not found at {path}. Create it (see the ACP spec, 16.3) and restart the bridge."
        return result
    except OSError as exc:
        result.error = f"Cannot read {path}: {exc.strerror or type(exc).__name__}."
        return result
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        # The decoder message holds only the position, never file content.
        result.error = f"{path} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}."
        return result
    if not isinstance(data, dict) or not isinstance(data.get("sources", []), list):
        result.error = f"{path} must be an object with a \"sources\" array."
        return result
    defaults_raw = data.get("defaults") or {}
    problems: list[str] = []
    if not isinstance(defaults_raw, dict):
        problems.append("defaults must be an object.")
        defaults_raw = {}
    result.defaults, errs = _check_limits(defaults_raw, "defaults")
    problems.extend(errs)
    if problems:
        result.error = " ".join(problems)
    resolver = _Resolver(path, project, result.secrets)
    seen: set[str] = set()
    for index, raw in enumerate(data.get("sources", [])):
        result.sources.append(_parse_source(raw, index, result.defaults, resolver, seen))
    return result


def _parse_source(raw: Any, index: int, defaults: dict[str, Any], resolver: _Resolver, seen: set[str]) -> Source:
    where = f"sources[{index}]"
    if not isinstance(raw, dict):
        return Source(id=f"#{index}", acp="?", label=f"#{index}", error=f"{where} must be an object.")
    sid = raw.get("id")
    acp = raw.get("acp")
    label = raw.get("label")
    source = Source(
        id=sid if isinstance(sid, str) else f"#{index}",
        acp=acp if isinstance(acp, str) else "?",
        label=label if isinstance(label, str) and label.strip() else (sid if isinstance(sid, str) else f"#{index}"),
    )
    errors: list[str] = []
    if not isinstance(sid, str) or not SOURCE_ID.match(sid):
        errors.append(f"{where}.id must be 1-40 characters: lowercase letters, digits, _ or -.")
    elif sid in seen:
        errors.append(f"{where}.id {sid!r} is used by an earlier source.")
    else:
        seen.add(sid)
    if not isinstance(acp, str) or not acp:
        errors.append(f"{where}.acp is required: the id of an installed ACP.")
    for key in raw:
        if key not in KNOWN_FIELDS:
            source.warnings.append(f"Unknown field {key!r} ignored.")
    limits, errs = _check_limits(raw, where)
    errors.extend(errs)
    source.limits = {**defaults, **limits}
    rid = raw.get("default_resource_id")
    if rid is not None and not isinstance(rid, str):
        errors.append(f"{where}.default_resource_id must be a string.")
    source.default_resource_id = rid if isinstance(rid, str) else None
    for key, secret in (("credentials", True), ("config", False)):
        if raw.get(key) is None:
            continue
        if not isinstance(raw[key], dict):
            errors.append(f"{where}.{key} must be an object.")
            continue
        resolver.literals = []
        try:
            value = resolver.resolve(raw[key], f"{where}.{key}", secret)
            if isinstance(value, str):  # the whole object is one reference: a JSON file such as gcloud's ADC
                value = _json_object(value, f"{where}.{key}")
            setattr(source, key, value)
        except ReferenceError_ as exc:
            errors.append(str(exc))
        if secret:
            source.literal_credentials = list(resolver.literals)
    if errors:
        source.error = " ".join(errors)
    return source
