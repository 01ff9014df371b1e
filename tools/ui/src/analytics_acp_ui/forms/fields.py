"""Form fields from a JSON schema (5.5.1, 5.5.4): what to paint for each property, with no ACP-specific code.

A setup schema (credentials_schema, config_schema) is a flat object of primitives, or, for
credentials, a ``oneOf`` of such objects (variants, 5.5.2). A tool's ``inputSchema`` (the saved-query
editor of 14.3, issue 37) is painted the same way; there arrays of primitives are comma-separated
lists and ``contentMediaType`` marks long text. Keywords this module does not know are ignored and
the field is painted as text (5.5.4).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

# x-acp-login providers this host implements (5.5.5); any other is ignored like an unknown keyword.
LOGIN_PROVIDERS = ("google",)
_NOT_ID = re.compile(r"[^A-Za-z0-9_-]+")


@dataclass
class Field:
    """One painted input."""

    key: str  # the property name
    name: str  # the HTML name: "<prefix>.<variant>.<key>"
    id: str  # the HTML id (label for=)
    title: str  # 5.5.1: the label; the key when there is none
    kind: str  # text | password | textarea | number | integer | checkbox | select | email | url | date | list | json
    description: str | None = None
    required: bool = False
    placeholder: str | None = None  # 5.5.1: the first example
    choices: list[tuple[str, str]] = field(default_factory=list)  # (value, label) for enums
    minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    secret: bool = False  # writeOnly: never shown, kept when left empty
    json_text: bool = False  # contentMediaType application/json: must parse before it is sent
    long_text: bool = False  # contentMediaType: a textarea (and a file upload or a path for setup schemas)
    path: bool = False  # format "path": a file path (relative ones start at sources.json's folder)
    structured: bool = False  # an object/array argument typed as JSON (inputSchema): sent parsed, not as a string
    item_type: str | None = None  # a list's item type (string, number, integer, boolean)
    value: str = ""  # what the input shows (never a secret)
    checked: bool = False
    saved: bool = False  # a secret (or a reference) is stored and kept when the input is left empty
    saved_note: str | None = None  # what is stored, in words ("Saved", "From environment variable X")
    error: str | None = None

    @property
    def html_type(self) -> str:
        """The <input type> of a one-line field."""
        return {"password": "password", "number": "number", "integer": "number", "email": "email",
                "url": "url", "date": "date"}.get(self.kind, "text")

    @property
    def step(self) -> str | None:
        """The number input's step: whole numbers for integers, anything for numbers."""
        return "1" if self.kind == "integer" else "any" if self.kind == "number" else None


@dataclass
class Variant:
    """One credential variant (5.5.2), or the whole schema when it has no oneOf."""

    index: int
    title: str
    description: str | None
    schema: dict[str, Any]
    fields: list[Field]
    consts: dict[str, Any]  # discriminators: never painted, always sent (5.5.1)
    filled: list[str]  # x-acp-filled properties the login fills (5.5.5): never painted
    login: dict[str, Any] | None  # x-acp-login of a provider this host implements
    selected: bool = False

    @property
    def key(self) -> str:
        """A stable name of the variant for the page (its first const value, else its index)."""
        first = next(iter(self.consts.values()), None)
        return str(first) if first is not None else str(self.index)


def variants_of(schema: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The variant objects of a setup schema: its oneOf, or the schema itself."""
    if not isinstance(schema, dict):
        return []
    one_of = schema.get("oneOf")
    if isinstance(one_of, list) and one_of:
        return [v for v in one_of if isinstance(v, dict)]
    return [schema]


def consts_of(variant: dict[str, Any]) -> dict[str, Any]:
    """The ``const`` properties of a variant (the discriminator, by convention ``type``)."""
    props = variant.get("properties") or {}
    return {k: p["const"] for k, p in props.items() if isinstance(p, dict) and "const" in p}


def login_of(variant: dict[str, Any]) -> dict[str, Any] | None:
    """The variant's x-acp-login when its provider is one this host implements (5.5.5), else None."""
    login = variant.get("x-acp-login")
    if isinstance(login, dict) and login.get("provider") in LOGIN_PROVIDERS:
        scopes = login.get("scopes")
        return {"provider": login["provider"], "scopes": [str(s) for s in scopes] if isinstance(scopes, list) else []}
    return None


def matching_variant(schema: dict[str, Any] | None, value: Any) -> int | None:
    """The index of the variant whose consts ``value`` carries (which variant is stored, 5.5.2), or None."""
    if not isinstance(value, dict):
        return None
    found = variants_of(schema)
    for i, variant in enumerate(found):
        consts = consts_of(variant)
        if consts and all(value.get(k) == v for k, v in consts.items()):
            return i
    return 0 if len(found) == 1 else None


def html_id(*parts: str) -> str:
    """An HTML id from name parts."""
    return "f-" + "-".join(_NOT_ID.sub("_", p) for p in parts)


def make_field(key: str, prop: dict[str, Any], name: str, required: bool, *, lists: bool = False) -> Field:
    """The input for one property (5.5.1's keywords; anything else is ignored and the field is text)."""
    kind = "text"
    ptype = prop.get("type")
    media = prop.get("contentMediaType")
    items: dict[str, Any] = _obj(prop.get("items"))
    fmt = prop.get("format")
    if ptype == "boolean":
        kind = "checkbox"
    elif ptype in ("number", "integer"):
        kind = str(ptype)
    elif isinstance(prop.get("enum"), list) and prop["enum"]:
        kind = "select"
    elif media:
        kind = "json" if media == "application/json" else "textarea"
    elif prop.get("writeOnly"):
        kind = "password"
    elif fmt in ("email", "date"):
        kind = str(fmt)
    elif fmt == "uri":
        kind = "url"
    elif lists and ptype == "array" and items.get("type") in ("string", "number", "integer", "boolean"):
        kind = "list"  # 5.5.4: arrays of primitives edited as comma-separated lists
    elif lists and ptype in ("object", "array"):
        kind = "json"
    examples = prop.get("examples")
    placeholder = None
    if isinstance(examples, list) and examples:
        first = examples[0]
        placeholder = first if isinstance(first, str) else json.dumps(first)
    elif kind == "list" and isinstance(items.get("enum"), list):
        placeholder = ", ".join(str(v) for v in items["enum"][:4])
    choices: list[tuple[str, str]] = []
    if kind == "select":
        raw_labels = prop.get("enumNames")
        labels: list[Any] = raw_labels if isinstance(raw_labels, list) else []
        choices = [(str(v), str(labels[i]) if i < len(labels) else str(v)) for i, v in enumerate(prop["enum"])]
    raw_title = prop.get("title")
    title = raw_title if isinstance(raw_title, str) and raw_title.strip() else key
    f = Field(
        key=key, name=name, id=html_id(name), title=title, kind=kind,
        description=prop.get("description") if isinstance(prop.get("description"), str) else None,
        required=required, placeholder=placeholder, choices=choices,
        minimum=_num(prop.get("minimum")), maximum=_num(prop.get("maximum")),
        min_length=_int(prop.get("minLength")), max_length=_int(prop.get("maxLength")),
        secret=bool(prop.get("writeOnly")), json_text=kind == "json",
        long_text=kind in ("json", "textarea"), path=fmt == "path",
        structured=kind == "json" and not media, item_type=str(items.get("type")) if kind == "list" else None,
    )
    return f


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def build_variants(schema: dict[str, Any] | None, prefix: str, *, lists: bool = False) -> list[Variant]:
    """Every variant of ``schema`` with its fields in the schema's order (5.5.1: the host does not reorder)."""
    out: list[Variant] = []
    for index, variant in enumerate(variants_of(schema)):
        props = _obj(variant.get("properties"))
        required = set(variant.get("required") or [])
        login = login_of(variant)
        consts = consts_of(variant)
        fields: list[Field] = []
        filled: list[str] = []
        for key, prop in props.items():
            if not isinstance(prop, dict) or key in consts:
                continue
            if login is not None and prop.get("x-acp-filled"):
                filled.append(key)  # 5.5.5: the login fills it; never an input
                continue
            fields.append(make_field(key, prop, f"{prefix}.{index}.{key}", key in required, lists=lists))
        title = variant.get("title") if isinstance(variant.get("title"), str) else None
        out.append(Variant(index=index, title=title or (f"Variant {index + 1}" if len(variants_of(schema)) > 1 else ""),
                           description=variant.get("description") if isinstance(variant.get("description"), str) else None,
                           schema=variant, fields=fields, consts=consts, filled=filled, login=login))
    if out:
        out[0].selected = True
    return out
