"""A submitted form back to the object a schema asks for (5.5.3), validated as 14.3 asks: required, types, ranges, JSON.

Values are typed (numbers as numbers, booleans as booleans, the rest as strings); only the chosen
variant's keys and its consts are sent; empty optional fields are left out. A ``writeOnly`` field (or
one whose stored value is a reference) left empty keeps what was stored, and the host only replaces
credentials when the person changes variant or types something (5.5.4). Error messages name the
field, never the value.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .fields import Field, Variant, build_variants, matching_variant

MAX_PATH_READ = 1024 * 1024  # a key file given as a path is read (to check it) only up to this size
Getter = Callable[[str], str | None]


@dataclass
class Parsed:
    """The result of one schema's part of a form."""

    value: Any = None  # the object to save (consts included), a kept whole reference, or None
    variant: int = 0
    errors: dict[str, str] = field(default_factory=dict)  # input name -> message
    new_secrets: list[str] = field(default_factory=list)  # keys whose value was typed now and is secret
    kept: bool = False  # the stored value was kept as it was
    typed: bool = False  # the person typed (or uploaded) something in the chosen variant


def is_reference(value: Any) -> bool:
    """A one-key sources.json reference (16.3, plus the secret store's ``{"keyring"}``)."""
    return isinstance(value, dict) and len(value) == 1 and next(iter(value)) in ("env", "file", "projectPath", "keyring")


def convert(f: Field, raw: str) -> Any:
    """``raw`` as the type ``f`` asks for; ValueError with a message that names the field, never the value."""
    label = f"«{f.title}»"
    if f.kind in ("number", "integer"):
        try:
            number: float | int = int(raw) if f.kind == "integer" else float(raw)
        except ValueError:
            raise ValueError(f"{label} must be {'a whole number' if f.kind == 'integer' else 'a number'}.") from None
        if f.kind == "number" and number == int(number) and abs(number) < 2**53:
            number = float(number)
        if f.minimum is not None and number < f.minimum:
            raise ValueError(f"{label} must be at least {f.minimum:g}.")
        if f.maximum is not None and number > f.maximum:
            raise ValueError(f"{label} must be at most {f.maximum:g}.")
        return number
    if f.kind == "select":
        allowed = [v for v, _ in f.choices]
        if raw not in allowed:
            raise ValueError(f"{label} must be one of: {', '.join(label for _, label in f.choices)}.")
        return raw
    if f.kind == "list":
        return [_item(f, item.strip(), label) for item in raw.split(",") if item.strip()]
    if f.min_length is not None and len(raw) < f.min_length:
        raise ValueError(f"{label} must have at least {f.min_length} characters.")
    if f.max_length is not None and len(raw) > f.max_length:
        raise ValueError(f"{label} must have at most {f.max_length} characters.")
    if f.json_text:
        try:
            parsed = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{label} is not valid JSON (line {exc.lineno}, column {exc.colno}).") from None
        return parsed if f.structured else raw  # 5.5.3: JSON pasted in a setup field travels as a string
    if f.kind == "email" and ("@" not in raw or raw.startswith("@") or raw.endswith("@")):
        raise ValueError(f"{label} must be an email address.")
    if f.kind == "url" and "://" not in raw:
        raise ValueError(f"{label} must be a URL (https://...).")
    if f.kind == "date":
        try:
            _dt.date.fromisoformat(raw)
        except ValueError:
            raise ValueError(f"{label} must be a date (YYYY-MM-DD).") from None
    return raw


def _item(f: Field, raw: str, label: str) -> Any:
    """One item of a comma-separated list, typed as the array's items."""
    try:
        if f.item_type == "integer":
            return int(raw)
        if f.item_type == "number":
            return float(raw)
    except ValueError:
        raise ValueError(f"{label} must list {'whole numbers' if f.item_type == 'integer' else 'numbers'}.") from None
    if f.item_type == "boolean":
        if raw.lower() not in ("true", "false"):
            raise ValueError(f"{label} must list true or false.")
        return raw.lower() == "true"
    return raw


def _path_reference(f: Field, raw: str, base: Path) -> dict[str, str]:
    """A key file given as a path: checked to exist (and parse, for JSON), kept as a ``{"file"}`` reference."""
    path = Path(raw).expanduser()
    path = path if path.is_absolute() else (base / path)
    label = f"«{f.title}»"
    if not path.is_file():
        raise ValueError(f"{label}: no file at {path}.")
    if path.stat().st_size > MAX_PATH_READ:
        raise ValueError(f"{label}: {path} is larger than {MAX_PATH_READ // 1024} KiB.")
    if f.json_text:
        try:
            json.loads(path.read_text(encoding="utf-8-sig"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            raise ValueError(f"{label}: {path} is not a JSON file.") from None
    return {"file": str(path.resolve())}


def chosen_variant(prefix: str, get: Getter, count: int) -> int:
    """The variant the form chose (``<prefix>.variant``), clamped to the schema's variants."""
    raw = get(f"{prefix}.variant") or "0"
    return int(raw) if raw.isdigit() and int(raw) < count else 0


def parse(schema: dict[str, Any] | None, prefix: str, get: Getter, *, previous: Any = None,
          uploads: Mapping[str, str] | None = None, filled: Mapping[str, Any] | None = None,
          base: Path | None = None, lists: bool = False) -> Parsed:
    """Read ``prefix``'s fields from a submitted form.

    ``get(name)`` returns a submitted text value (None when absent); ``uploads`` maps an input name to
    the text of a file uploaded for it; ``filled`` holds the values a login filled (5.5.5);
    ``previous`` is the stored value (with its references) that empty secret fields keep; ``base`` is
    the folder relative paths start at (the sources.json folder).
    """
    variants: list[Variant] = build_variants(schema, prefix, lists=lists)
    if not variants:
        return Parsed()
    index = chosen_variant(prefix, get, len(variants))
    variant = variants[index]
    result = Parsed(variant=index)
    same = previous is not None and not is_reference(previous) and matching_variant(schema, previous) == index
    prev: dict[str, Any] = previous if same and isinstance(previous, dict) else {}
    out: dict[str, Any] = dict(variant.consts)
    for f in variant.fields:
        raw = (get(f.name) or "").strip() if f.kind != "checkbox" else get(f.name)
        upload = (uploads or {}).get(f.name)
        path_raw = (get(f"{f.name}.path") or "").strip() if f.long_text else ""
        try:
            if f.kind == "checkbox":
                checked = raw is not None
                if checked or f.required or f.key in prev or "default" in variant.schema["properties"][f.key]:
                    out[f.key] = checked
                    result.typed = result.typed or checked != bool(prev.get(f.key, False))
                continue
            if upload:
                out[f.key] = convert(f, upload.strip())
            elif path_raw:
                out[f.key] = _path_reference(f, path_raw, base or Path.cwd())
            elif raw:
                out[f.key] = convert(f, raw)
            elif f.key in prev and (f.secret or is_reference(prev[f.key])):
                out[f.key] = prev[f.key]  # 5.5.4: left empty, the stored secret (or reference) is kept
                continue
            elif f.required:
                raise ValueError(f"«{f.title}» is required.")
            else:
                continue
        except ValueError as exc:
            result.errors[f.name] = str(exc)
            continue
        result.typed = True
        if f.secret and not is_reference(out[f.key]):
            result.new_secrets.append(f.key)
    for key in variant.filled:
        if filled and key in filled and filled[key] not in (None, ""):
            out[key] = filled[key]
            result.typed = True
            if variant.schema["properties"][key].get("writeOnly"):
                result.new_secrets.append(key)
        elif key in prev:
            out[key] = prev[key]
    missing = [k for k in variant.filled if k in (variant.schema.get("required") or []) and k not in out]
    if variant.login is not None and variant.filled and not any(k in out for k in variant.filled):
        result.errors[f"{prefix}.{index}.login"] = f"Sign in ({variant.title}) first: the sign-in fills this variant."
    elif missing:
        result.errors[f"{prefix}.{index}.login"] = f"Sign in again: the sign-in did not fill {', '.join(missing)}."
    if previous is not None and not result.typed and (is_reference(previous) or same):
        result.value, result.kept, result.errors, result.new_secrets = previous, True, {}, []
        return result
    result.value = out
    return result
