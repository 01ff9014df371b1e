"""What the painted fields show: stored values on edit, the submitted ones after an error — never a secret (5.5.4)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .fields import Field, Variant, matching_variant
from .submit import Getter, is_reference

SAVED = "Saved; leave empty to keep it."


def reference_note(value: dict[str, Any]) -> str:
    """A stored reference in words (names a variable or a path, never a value)."""
    kind, arg = next(iter(value.items()))
    if kind == "env":
        return f"From environment variable {arg}; leave empty to keep it."
    if kind == "keyring":
        return "Saved in the system keyring; leave empty to keep it."
    if kind == "projectPath":
        return f"Project path {arg}; leave empty to keep it."
    return f"From file {arg}; leave empty to keep it."


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return format(value, "g") if isinstance(value, float) else str(value)
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value)
    return str(value)


def show_stored(variants: list[Variant], schema: dict[str, Any] | None, stored: Any) -> None:
    """Select the stored variant and show its values; secrets and references only as 'saved'."""
    index = matching_variant(schema, stored)
    if index is None or not isinstance(stored, dict) or is_reference(stored):
        return
    for v in variants:
        v.selected = v.index == index
    for f in variants[index].fields:
        if f.key not in stored:
            continue
        _show_one(f, stored[f.key])


def _show_one(f: Field, value: Any) -> None:
    if is_reference(value):
        f.saved, f.saved_note = True, reference_note(value)
    elif f.secret:
        f.saved, f.saved_note = True, SAVED
    elif f.kind == "checkbox":
        f.checked = bool(value)
    else:
        f.value = _shown(value)


def show_defaults(variants: list[Variant]) -> None:
    """A new form: each field's schema default (5.5.1) as its initial value."""
    for v in variants:
        props = v.schema.get("properties") or {}
        for f in v.fields:
            prop = props.get(f.key) or {}
            if "default" in prop and not f.secret:
                _show_one(f, prop["default"])


def show_submitted(variants: list[Variant], chosen: int, get: Getter, errors: Mapping[str, str],
                   stored: Any = None, schema: dict[str, Any] | None = None) -> None:
    """After a refused submission: the chosen variant, what was typed (secrets excepted) and each field's error."""
    show_stored(variants, schema, stored)
    for v in variants:
        v.selected = v.index == chosen
    for f in variants[chosen].fields if variants else []:
        f.error = errors.get(f.name)
        if f.kind == "checkbox":
            f.checked = get(f.name) is not None
        elif not f.secret:
            f.value = (get(f.name) or "").strip()
