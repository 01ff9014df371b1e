"""How a broken schema rule reads in English: the one table every refusal that names a rule uses.

A rule is named by its JSON Schema keyword and the keyword's value ("minimum", 3 -> "must be at least 3"). The
readers: the model, refused a tool argument (a pydantic error of a typed model, arguments.py, whose error kinds map
onto the keywords below; the core's own arguments, toolschemas.py), and a person checking a set-up (setup schemas and
the JSON inside a string, schemas.py). The words say the rule, never the value given (5.5.3).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

# pydantic error kind -> (JSON Schema keyword, the key of the error's ctx holding the keyword's value)
PYDANTIC_KEYWORDS: dict[str, tuple[str, str]] = {
    "greater_than_equal": ("minimum", "ge"),
    "greater_than": ("exclusiveMinimum", "gt"),
    "less_than_equal": ("maximum", "le"),
    "less_than": ("exclusiveMaximum", "lt"),
    "too_short": ("minItems", "min_length"),
    "too_long": ("maxItems", "max_length"),
    "string_too_short": ("minLength", "min_length"),
    "string_too_long": ("maxLength", "max_length"),
    "string_pattern_mismatch": ("pattern", "pattern"),
}

_WORDS: dict[str, Callable[[Any], str]] = {
    "minimum": lambda v: f"must be at least {v}",
    "maximum": lambda v: f"must be at most {v}",
    "exclusiveMinimum": lambda v: f"must be greater than {v}",
    "exclusiveMaximum": lambda v: f"must be less than {v}",
    "minItems": lambda v: f"must have at least {v} item(s)",
    "maxItems": lambda v: f"must have at most {v} item(s)",
    "minLength": lambda v: "must not be empty" if v == 1 else f"must be at least {v} characters",
    "maxLength": lambda v: f"must be at most {v} characters",
    "pattern": lambda v: f"must match the pattern {v}",
    "enum": lambda v: f"must be one of {', '.join(map(str, v))}",
    "const": lambda v: f"must be {json.dumps(v)}",
    "uniqueItems": lambda v: "must not repeat an item",
    "not": lambda v: "is not accepted here",
    "additionalProperties": lambda v: "has fields that are not accepted",
}
# In a JSON text a person pasted (a key file), types read as what the text should hold.
_JSON_TEXT_TYPES = {"object": "a JSON object", "array": "a JSON array", "string": "a string", "integer": "an integer",
                    "number": "a number", "boolean": "true or false", "null": "null"}


def rule_words(keyword: str, value: Any, *, json_text: bool = False) -> str:
    """What a JSON Schema ``keyword`` with ``value`` asks, as a predicate without a final period: ``"must be at
    least 3"``. ``json_text``: types worded for the JSON inside a string a person gave ("must be a JSON object")."""
    if keyword == "type":
        kinds = [str(k) for k in (value if isinstance(value, list) else [value])]
        if json_text:
            return "must be " + " or ".join(_JSON_TEXT_TYPES.get(k, k) for k in kinds)
        return f"must be of type {' or '.join(kinds)}"
    words = _WORDS.get(keyword)
    return words(value) if words is not None else f"does not match the expected form ({keyword})"
