"""sources.json (16.3): the sources the bridge serves, their credentials, config and limits.

A broken file or a broken source never stops the bridge: each problem is recorded as a typed error of
12.1 (``Source.problems``, ``SourcesFile.problem``), which the validator (validate.py) turns into the
source's verdict. Values inside ``credentials`` and ``config`` may be references (``{"env": NAME}``,
``{"file": path}``, ``{"projectPath": path}``). Values read through ``env`` or ``file`` are secrets;
literal credential values are secrets when the ACP's credentials_schema marks their field ``writeOnly``
(5.5) or the key is a usual secret name. The bridge scrubs every secret from whatever the client receives.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analytics_acp.constants import ACP_MAX_FIELD_LIMIT, ACP_MAX_ROW_LIMIT
from analytics_acp.errors import AcpError, CredentialsInvalid, CredentialsMissing, InvalidArguments, InvalidLimit
from analytics_acp.schemas import nested_secret_leaves

SOURCE_ID = re.compile(r"^[a-z0-9_-]{1,40}$")
KNOWN_FIELDS = {
    "id", "acp", "label", "credentials", "config", "default_resource_id",
    "row_limit", "field_limit", "cost_limit_usd", "tables", "autocontext_blocks",
}
# Lists of names sent as they are in _meta.acp (5.2): default datasets (8.7) and on_first_call blocks (7.5).
NAME_LISTS = ("tables", "autocontext_blocks")
LIMIT_FIELDS = ("row_limit", "field_limit", "cost_limit_usd")
REFERENCE_KEYS = ("env", "file", "projectPath", "keyring")  # keyring: the secret store's (analytics_acp.secret_store)
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
    """A value reference could not be resolved (message names the field, never the value).

    ``missing``: the value is not there at all (an unset variable, a file that cannot be read), as opposed to a
    value that is there but unusable; inside ``credentials`` that is ACP_CREDENTIALS_MISSING (12.1).
    """

    def __init__(self, message: str, *, missing: bool = False):
        super().__init__(message)
        self.missing = missing


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
    # What is wrong with the entry as written, typed (12.1), in the order found: the first one types the verdict.
    problems: list[AcpError] = field(default_factory=list)
    lists: dict[str, list[str]] = field(default_factory=dict)  # tables, autocontext_blocks (NAME_LISTS)
    warnings: list[str] = field(default_factory=list)
    # Literal credential values by key name: which are secret is decided with the ACP's schema.
    literal_credentials: list[tuple[str, str]] = field(default_factory=list)
    # A digest of the entry as read (references resolved, paths as written): what a reload compares.
    fingerprint: str = ""

    @property
    def error(self) -> str | None:
        """Every problem of the entry in one text, or None."""
        return " ".join(p.message for p in self.problems) or None

    def problem(self) -> AcpError | None:
        """The entry's problems as one typed error (the first one's type, every message), or None."""
        if not self.problems:
            return None
        first = self.problems[0]
        return type(first)(self.error or first.message)

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
        out.update(self.lists)
        return out


@dataclass
class SourcesFile:
    """The parsed sources.json: sources in file order, a file-level error, and the secrets seen."""

    path: Path
    sources: list[Source] = field(default_factory=list)
    # The file as a whole (missing, not JSON, not the shape of 16.3, bad defaults), typed (12.1).
    problem: AcpError | None = None
    defaults: dict[str, Any] = field(default_factory=dict)
    secrets: set[str] = field(default_factory=set)

    @property
    def error(self) -> str | None:
        """The file-level problem's message, or None."""
        return self.problem.message if self.problem is not None else None

    def get(self, source_id: str) -> Source | None:
        """The source with that id, or None."""
        return next((s for s in self.sources if s.id == source_id), None)


def _check_limits(raw: dict[str, Any], where: str) -> tuple[dict[str, Any], list[AcpError]]:
    """Validate row_limit (0..5000), field_limit (1..200), cost_limit_usd (>= 0) as in 5.1 (ACP_INVALID_LIMIT)."""
    limits: dict[str, Any] = {}
    errors: list[AcpError] = []
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
            errors.append(InvalidLimit(f"{where}.{key} must be {hint}."))
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
                raise ReferenceError_(f"{where}: environment variable {arg} is not set.", missing=True)
            value = os.environ[arg]
            self._remember(value)  # env/file references are how secrets are kept out of the file
            return value
        if kind == "file":
            path = Path(arg).expanduser()
            path = path if path.is_absolute() else self.base / path
            try:
                value = path.read_text(encoding="utf-8-sig").strip()
            except OSError as exc:
                raise ReferenceError_(f"{where}: cannot read file {path} ({exc.strerror or type(exc).__name__}).",
                                      missing=True) from None
            except UnicodeDecodeError:
                raise ReferenceError_(f"{where}: file {path} is not UTF-8 text.") from None
            self._remember(value)
            return value
        if kind == "keyring":  # a secret the set-up page stored (issue 35.4): the OS keyring, read once per process
            from analytics_acp.secret_store import SecretStoreError, read_keyring

            try:
                value = read_keyring(arg)
            except SecretStoreError as exc:
                raise ReferenceError_(f"{where}: {exc}", missing=True) from None
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


def _unknown_field(key: str, known: set[str], where: str) -> InvalidArguments:
    """An unknown key: the error names it and the closest known one (a misspelled "credentails")."""
    close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}?" if close else f"the fields are {', '.join(sorted(known))}"
    return InvalidArguments(f"{where}: unknown field {key!r} ({hint}).")


def load_sources(path: Path, project: Path) -> SourcesFile:
    """Read and validate sources.json; problems are recorded on the result, never raised."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return SourcesFile(path=path, problem=InvalidArguments(
            f"sources.json not found at {path}. Create it (see sources.example.json and the ACP spec, 16.3)."))
    except OSError as exc:
        return SourcesFile(path=path, problem=InvalidArguments(f"Cannot read {path}: {exc.strerror or type(exc).__name__}."))
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        # The decoder message holds only the position, never file content.
        return SourcesFile(path=path, problem=InvalidArguments(
            f"{path} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}."))
    return parse_sources(data, path, project)


def parse_sources(data: Any, path: Path, project: Path) -> SourcesFile:
    """Validate the object of a sources.json as if it were the file at ``path`` (references resolve from its
    folder); problems are recorded on the result, never raised. Keys beside ``sources`` and ``defaults`` are
    left alone (another tool's settings may live there)."""
    result = SourcesFile(path=path)
    if not isinstance(data, dict) or not isinstance(data.get("sources", []), list):
        result.problem = InvalidArguments(f"{path} must be an object with a \"sources\" array.")
        return result
    defaults_raw = data.get("defaults") or {}
    problems: list[AcpError] = []
    if not isinstance(defaults_raw, dict):
        problems.append(InvalidArguments("defaults must be an object."))
        defaults_raw = {}
    problems += [_unknown_field(k, set(LIMIT_FIELDS), "defaults") for k in defaults_raw if k not in LIMIT_FIELDS]
    result.defaults, errs = _check_limits(defaults_raw, "defaults")
    problems.extend(errs)
    if problems:
        result.problem = type(problems[0])(" ".join(p.message for p in problems))
    resolver = _Resolver(path, project, result.secrets)
    seen: set[str] = set()
    for index, raw in enumerate(data.get("sources", [])):
        result.sources.append(_parse_source(raw, index, result.defaults, resolver, seen))
    return result


def _parse_source(raw: Any, index: int, defaults: dict[str, Any], resolver: _Resolver, seen: set[str]) -> Source:
    where = f"sources[{index}]"
    if not isinstance(raw, dict):
        return Source(id=f"#{index}", acp="?", label=f"#{index}", problems=[InvalidArguments(f"{where} must be an object.")])
    sid = raw.get("id")
    acp = raw.get("acp")
    label = raw.get("label")
    source = Source(
        id=sid if isinstance(sid, str) else f"#{index}",
        acp=acp if isinstance(acp, str) else "?",
        label=label if isinstance(label, str) and label.strip() else (sid if isinstance(sid, str) else f"#{index}"),
    )
    errors: list[AcpError] = []
    if not isinstance(sid, str) or not SOURCE_ID.match(sid):
        errors.append(InvalidArguments(f"{where}.id must be 1-40 characters: lowercase letters, digits, _ or -."))
    elif sid in seen:
        errors.append(InvalidArguments(f"{where}.id {sid!r} is used by an earlier source."))
    else:
        seen.add(sid)
    if not isinstance(acp, str) or not acp:
        errors.append(InvalidArguments(f"{where}.acp is required: the id of an installed ACP."))
    errors += [_unknown_field(key, KNOWN_FIELDS, where) for key in raw if key not in KNOWN_FIELDS]
    limits, errs = _check_limits(raw, where)
    errors.extend(errs)
    source.limits = {**defaults, **limits}
    for key in NAME_LISTS:
        value = raw.get(key)
        if value is None:
            continue
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            source.lists[key] = list(value)
        else:
            errors.append(InvalidArguments(f"{where}.{key} must be a list of names."))
    rid = raw.get("default_resource_id")
    if rid is not None and not isinstance(rid, str):
        errors.append(InvalidArguments(f"{where}.default_resource_id must be a string."))
    source.default_resource_id = rid if isinstance(rid, str) else None
    errors += _resolve_setup(source, raw, where, resolver)
    source.problems = errors
    source.fingerprint = _fingerprint(source)
    return source


def _resolve_setup(source: Source, raw: dict[str, Any], where: str, resolver: _Resolver) -> list[AcpError]:
    """``credentials`` and ``config`` of ``raw`` resolved into ``source`` (and its literal credential values);
    the problems, typed (12.1)."""
    errors: list[AcpError] = []
    for key, secret in (("credentials", True), ("config", False)):
        if raw.get(key) is None:
            continue
        at = f"{where}.{key}" if where else key
        if not isinstance(raw[key], dict):
            errors.append(InvalidArguments(f"{at} must be an object."))
            continue
        resolver.literals = []
        try:
            value = resolver.resolve(raw[key], at, secret)
            if isinstance(value, str):  # the whole object is one reference: a JSON file such as gcloud's ADC
                value = _json_object(value, at)
            setattr(source, key, value)
        except ReferenceError_ as exc:
            errors.append(_reference_problem(exc, secret))
        if secret:
            source.literal_credentials = list(resolver.literals)
    return errors


@dataclass
class ResolvedSetup:
    """An entry's ``credentials`` and ``config`` as the bridge sends them in ``_meta.acp`` (references resolved)."""

    credentials: dict[str, Any] | None
    config: dict[str, Any] | None
    # Values to scrub from whatever is shown: those read through a reference and every literal credential value
    # (the schema, which says which literals are secret, is not consulted: all of them count).
    secrets: set[str]
    problems: list[AcpError]  # references that did not resolve, typed as the source's verdict would be (12.1)


def resolve_setup(credentials: Any, config: Any, sources_path: Path, project: Path) -> ResolvedSetup:
    """Resolve the ``credentials`` and ``config`` of an entry not saved yet exactly as the bridge resolves a saved
    one (16.3: ``env``, ``file``, ``projectPath``, ``keyring``; relative paths from ``sources_path``'s folder), for a
    tool that calls the ACP with them (the set-up page's resource picker). Never raises for a bad reference."""
    secrets: set[str] = set()
    source = Source(id="", acp="", label="")
    problems = _resolve_setup(source, {"credentials": credentials, "config": config}, "",
                              _Resolver(sources_path, project, secrets))
    return ResolvedSetup(source.credentials, source.config, secrets | source.secret_values(None), problems)


def _reference_problem(exc: ReferenceError_, in_credentials: bool) -> AcpError:
    """12.1's type for a reference that did not resolve: credentials missing or invalid, or a config problem."""
    if not in_credentials:
        return InvalidArguments(str(exc))
    return CredentialsMissing(str(exc)) if exc.missing else CredentialsInvalid(str(exc))


def _fingerprint(source: Source) -> str:
    """A digest of what the source sends and shows; two entries with the same one serve the same way."""
    parts = [source.acp, source.label, source.credentials, source.config, source.default_resource_id, source.limits,
             [p.message for p in source.problems]]
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()
