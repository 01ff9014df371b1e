"""Checks that need no server round trip: setup schemas (5.5), English text (5.5.0), value types (8.6)
and the secret scan (10.1)."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from ..constants import COLUMN_TYPES

PRIMITIVES = {"string", "number", "integer", "boolean"}
# Property names that hold secrets and therefore must be writeOnly (5.5.1).
_SECRET_NAME = re.compile(r"(pass(word)?|secret|token|api_?key|private_?key|service_account|credential)", re.I)
# Words that are common in Spanish text and (almost) never in English technical text.
_SPANISH_WORDS = frozenset(
    "el los las del que para una por según tabla tablas datos fecha fechas usuario usuarios consulta consultas "
    "cuenta recurso recursos límite credenciales obligatorio también están está debe puede sólo hay pero sus "
    "filas columnas mostrando devuelve".split()
)
_SPANISH_CHARS = set("áéíóúñÁÉÍÓÚÑ¿¡")
_WORD = re.compile(r"[A-Za-zÀ-ÿ]+")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def setup_schema_problems(schema: Any, *, credentials: bool) -> list[str]:
    """Problems of a setup schema (5.5.1, 5.5.2): flat primitives, titles, const discriminators, writeOnly secrets.

    Uses ``analytics_acp.schemas.check_setup_schema`` when the core provides it, plus the kit's own checks.
    """
    problems: list[str] = []
    try:  # the core's validator, when present
        from .. import schemas as core_schemas

        core_check = getattr(core_schemas, "check_setup_schema", None)
    except ImportError:
        core_check = None
    if core_check is not None:
        try:
            found = core_check(schema, **_core_kwargs(core_check, credentials))
            if isinstance(found, (list, tuple)):
                problems.extend(str(p) for p in found)
        except Exception as exc:  # the core raises on an invalid schema
            problems.append(str(getattr(exc, "message", exc)))
    problems.extend(_local_problems(schema, credentials))
    return list(dict.fromkeys(problems))


def _core_kwargs(fn: Any, credentials: bool) -> dict[str, Any]:
    """``check_setup_schema(schema, *, allow_one_of)``: oneOf is only valid in credentials_schema (5.5.1)."""
    import inspect

    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return {}
    return {name: credentials for name in ("allow_one_of", "credentials") if name in params}


def _local_problems(schema: Any, credentials: bool) -> list[str]:
    where = "credentials_schema" if credentials else "config_schema"
    if not isinstance(schema, dict):
        return [f"{where} is not an object"]
    if "oneOf" in schema:
        if not credentials:
            return [f"{where}: oneOf is only allowed in credentials_schema (5.5.1)"]
        variants = schema["oneOf"]
        if not isinstance(variants, list) or not variants:
            return [f"{where}.oneOf must be a non-empty list"]
        problems: list[str] = []
        consts: list[Any] = []
        for i, variant in enumerate(variants):
            label = f"{where}.oneOf[{i}]"
            if not isinstance(variant, dict):
                problems.append(f"{label} is not an object")
                continue
            if not variant.get("title"):
                problems.append(f"{label} has no title")
            props = variant.get("properties") or {}
            const = [(k, p["const"]) for k, p in props.items() if isinstance(p, dict) and "const" in p]
            if not const:
                problems.append(f"{label} has no const discriminator property (5.5.2)")
            else:
                consts.append(const[0])
                if const[0][0] not in (variant.get("required") or []):
                    problems.append(f"{label}: discriminator {const[0][0]} is not required")
            problems.extend(_flat_problems(variant, label, discriminators={k for k, _ in const}))
        if len(set(map(repr, consts))) != len(consts):
            problems.append(f"{where}: variants share a discriminator value")
        return problems
    return _flat_problems(schema, where, discriminators=set())


def _flat_problems(schema: dict[str, Any], label: str, discriminators: set[str]) -> list[str]:
    problems = []
    if schema.get("type", "object") != "object":
        problems.append(f"{label}.type must be object")
    props = schema.get("properties")
    if not isinstance(props, dict):
        return problems + [f"{label}.properties must be an object"]
    for name in schema.get("required") or []:
        if name not in props:
            problems.append(f"{label}: required {name!r} is not a property")
    for name, prop in props.items():
        where = f"{label}.properties.{name}"
        if not isinstance(prop, dict):
            problems.append(f"{where} is not an object")
            continue
        if name in discriminators:
            continue
        kind = prop.get("type")
        if kind not in PRIMITIVES:
            problems.append(f"{where}.type must be one of string/number/integer/boolean (no nested objects or arrays)")
        if not prop.get("title"):
            problems.append(f"{where} has no title")
        if _SECRET_NAME.search(name) and not prop.get("writeOnly") and kind == "string":
            problems.append(f"{where} looks secret but is not writeOnly")
        if "enum" in prop and kind != "string":
            problems.append(f"{where}: enum is only for strings")
        if "enumNames" in prop and len(prop.get("enumNames") or []) != len(prop.get("enum") or []):
            problems.append(f"{where}: enumNames and enum differ in length")
    return problems


def spanish_hits(text: str) -> list[str]:
    """Why ``text`` looks Spanish (accented letters, ¿¡ or two+ common Spanish words); [] if it looks English."""
    if not isinstance(text, str) or not text:
        return []
    reasons = sorted({c for c in text if c in _SPANISH_CHARS})
    words = [w.lower() for w in _WORD.findall(text)]
    spanish = sorted({w for w in words if w in _SPANISH_WORDS})
    if reasons:
        return [f"characters {''.join(reasons)}"]
    if len(spanish) >= 2:
        return [f"Spanish words {', '.join(spanish[:5])}"]
    return []


def schema_texts(schema: Any, prefix: str) -> list[tuple[str, str]]:
    """Every title/description/examples string of a JSON schema, with its path."""
    out: list[tuple[str, str]] = []

    def walk(node: Any, path: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("title", "description") and isinstance(value, str):
                    out.append((f"{path}.{key}", value))
                elif key == "examples" and isinstance(value, list):
                    out.extend((f"{path}.examples", v) for v in value if isinstance(v, str))
                elif key == "enumNames" and isinstance(value, list):
                    out.extend((f"{path}.enumNames", v) for v in value if isinstance(v, str))
                else:
                    walk(value, f"{path}.{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{path}[{i}]")

    walk(schema, prefix)
    return out


def value_matches(value: Any, column_type: str) -> bool:
    """True when ``value`` has the wire type of a header type (8.6); null fits every type."""
    if value is None:
        return True
    if column_type == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if column_type == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if column_type == "boolean":
        return isinstance(value, bool)
    if column_type == "date":
        return isinstance(value, str) and bool(_DATE.match(value))
    if column_type == "datetime":
        if not isinstance(value, str):
            return False
        try:
            dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return False
        return True
    if column_type == "string":
        return isinstance(value, str)
    return column_type in COLUMN_TYPES  # json: anything


def secret_strings(credentials: Any, schema: dict[str, Any] | None = None) -> list[str]:
    """Credential values to scan for: the secret ones by the server's own schema (writeOnly), 6+ characters.

    The same rule the core scrubs by (``schemas.secret_values``): a host or database name that
    the schema does not mark secret may appear in titles and resource ids.
    """
    from ..schemas import secret_values

    return sorted(set(secret_values(credentials, schema, min_len=6)), key=len, reverse=True)


def leaked(text: str, secrets: list[str]) -> list[str]:
    """The secrets (shown masked) that occur in ``text``."""
    return [mask(s) for s in secrets if s and s in text]


def mask(secret: str) -> str:
    """A secret as evidence may show it: first two characters and the length."""
    return f"{secret[:2]}…({len(secret)} chars)"


def parse_iso_utc(value: Any) -> bool:
    """fetched_at must be ISO 8601 in UTC (8.4)."""
    if not isinstance(value, str):
        return False
    try:
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return parsed.utcoffset() == dt.timedelta(0)
