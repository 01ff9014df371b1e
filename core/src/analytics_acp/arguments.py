"""Typed tool arguments (issue 38.1): one pydantic model per tool, parsed once by the core.

A tool declares ``ToolSpec(arguments=MyArguments)`` where ``MyArguments`` subclasses ``ToolArguments``.
From that one model:

- the core publishes the tool's ``inputSchema`` (``published_schema``): pydantic's JSON schema made as
  small as a hand-written one — no ``title``s, no ``$defs`` (nested models inlined), no
  ``anyOf [..., {"type": "null"}]`` for an optional field, no ``default: null``, no ``additionalProperties``
  (the core refuses unknown arguments itself, naming the accepted ones). Field descriptions and the
  ``x-acp-*`` annotations (``TableRef``, ``SqlText``, ``StartDate``/``EndDate``, or ``json_schema_extra``) stay;
- the core validates and parses the model's arguments once (``parse``: JSON types, strictly — ``"3"`` and ``3.0``
  are not integers; unknown keys refused in nested objects too; a top-level null is an omitted argument) and hands
  the tool, its cost estimate and around_tool_call wrappers the one typed object; a rule the schema cannot express
  (two fields that go together) is a validator on the model, raising ``ValueError`` with a message for the model;
- a refusal is ``ACP_INVALID_ARGUMENTS`` (12.1) naming the field and the rule, never the value.

Unit tests build arguments the way the core does: ``run(MyArguments.parse({"n": 3}), ctx)``.
"""

from __future__ import annotations

import copy
import inspect
import math
import re
import types
import typing
from collections.abc import Mapping
from functools import cache
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import orjson
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from .constants import ACP_DATE_ANNOTATION, ACP_INPUT_ANNOTATION, ACP_INPUT_TABLE_REF
from .dates import DATE_DESCRIPTION, resolve_date
from .errors import InvalidArguments
from .rulewords import PYDANTIC_KEYWORDS, rule_words

# Argument names the core owns and injects into every published schema that needs them (6.2, 8.7).
CORE_ARGUMENTS = ("resource_id", "tables")
# Named in the errors met by code written before typed arguments (issue 38.1).
TYPED_ARGUMENTS_SINCE = "analytics-acp 0.1, typed tool arguments"


class ToolArguments(BaseModel):
    """Base of every tool's argument model: strict JSON types, unknown keys refused, immutable once parsed."""

    # defer_build: a model is built on first use (tools/list, a call), not when the declaration is imported.
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, defer_build=True)

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> typing.Self:
        """Validate and parse the model's arguments as the core does; ``InvalidArguments`` names what to fix.

        A top-level ``null`` means the argument was left out (its default applies): models often write them.
        """
        given = {k: v for k, v in raw.items() if v is not None}
        try:
            data = orjson.dumps(given)
        except TypeError:  # orjson stops at 64-bit integers (unsigned: 2**63 passes, and no source takes it)
            data = None
        if data is None or b"null" in data or _LONG_DIGITS.search(data):  # NaN and Infinity are written as null
            bad = _unwritable_number(given, [])
            if bad is not None:
                raise InvalidArguments(_number_refusal(cls, *bad))
            if data is None:
                raise TypeError(f"{cls.__name__}.parse takes JSON values only")
        try:
            return cls.model_validate_json(data)
        except ValidationError as exc:
            raise InvalidArguments(refusal_message(cls, exc)) from None

    def given(self) -> dict[str, Any]:
        """The arguments as the model gave them, parsed (defaults it left out stay out): what a tool echoes in
        ``Extraction.arguments`` (system_info.arguments, 8.4) next to the values it applied."""
        given: dict[str, Any] = self.model_dump(mode="json", by_alias=True, exclude_unset=True)
        return given

    # A hook or tool written before typed arguments reads a dict (``arguments.get("n")``): an error naming the change,
    # not an AttributeError. Nothing in a signature tells the two forms apart at load, so it is said at the first read.
    def get(self, key: str, default: Any = None) -> Any:
        """Refused: read the attribute (``arguments.n``); see :meth:`_dict_read`."""
        raise self._dict_read(key, f"arguments.get({key!r})")

    def __getitem__(self, key: str) -> Any:
        raise self._dict_read(key, f"arguments[{key!r}]")

    def __contains__(self, key: object) -> bool:
        raise self._dict_read(key, f"{key!r} in arguments")

    def _dict_read(self, key: object, form: str) -> TypeError:
        """The TypeError for a dict-style read: which attribute to read instead (or ctx for the core's own)."""
        field = next((n for n, f in type(self).model_fields.items() if key in (n, f.alias)), None)
        if field is not None:
            instead = f"arguments.{field}"
        elif key in CORE_ARGUMENTS:
            instead = f"ctx.{key} (the core resolves {key})"
        else:
            instead = f"an attribute of {type(self).__name__} ({', '.join(type(self).model_fields) or 'none'})"
        return TypeError(f"Tool arguments are a typed {type(self).__name__} since {TYPED_ARGUMENTS_SINCE}, not a dict: "
                         f"read {instead} instead of {form} (arguments.given() is a dict of what the model gave).")

    @classmethod
    def published_schema(cls) -> dict[str, Any]:
        """The JSON schema published as the tool's inputSchema (before the core injects resource_id/tables)."""
        return copy.deepcopy(_schema_of(cls))

    @classmethod
    def argument_names(cls) -> list[str]:
        """The published argument names (aliases where a field has one)."""
        return [field.alias or name for name, field in cls.model_fields.items()]


class NoArguments(ToolArguments):
    """The arguments of a tool that takes none."""


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty.")
    return value


def _date_form(value: str) -> str:
    try:
        resolve_date(value)  # the form only: each tool resolves relative dates in its own time zone
    except InvalidArguments:
        raise ValueError(f"is not a valid date. Use {DATE_DESCRIPTION}") from None
    return value


# A string that must say something (blank refused; not published as minLength, to keep schemas small).
NotBlank = Annotated[str, AfterValidator(_not_blank)]
# A host table id (8.8): the host resolves it with acp/read_table.
TableRef = Annotated[str, AfterValidator(_not_blank), Field(json_schema_extra={ACP_INPUT_ANNOTATION: ACP_INPUT_TABLE_REF})]
# A SQL query whose {{start_date}}/{{end_date}} markers a host may fill (8.9).
SqlText = Annotated[str, AfterValidator(_not_blank),
                    Field(json_schema_extra={"contentMediaType": "application/sql", ACP_DATE_ANNOTATION: "template"})]
# A window bound: YYYY-MM-DD, YYYYMMDD, NdaysAgo, yesterday or today (8.9); the tool resolves it.
DateText = Annotated[str, AfterValidator(_date_form)]
StartDate = Annotated[str, AfterValidator(_date_form), Field(json_schema_extra={ACP_DATE_ANNOTATION: "start"})]
EndDate = Annotated[str, AfterValidator(_date_form), Field(json_schema_extra={ACP_DATE_ANNOTATION: "end"})]


class WriteTableArguments(ToolArguments):
    """A tool that writes a host dataset (8.8) into a table of the source (databases insert_rows, bigquery
    load_rows): the dataset, the target table and whether to create it. A connector subclasses it, redeclaring
    ``table`` with its own description of a table id, and adds its own options."""

    table_ref: TableRef = Field(description="Id of a host dataset or report (the host resolves the rows).")
    table: str = Field(description="The target table.")
    create_if_missing: bool = Field(False, description="Create it from the dataset's types if absent.")


# --- the published schema -------------------------------------------------------------------------------------------


class _SmallSchema(GenerateJsonSchema):
    """pydantic's generator without what a hand-written schema leaves out (the rest is ``_tidy``)."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        # An optional field is omitted, not null: publish the type alone (null is still accepted as "omitted").
        return self.generate_inner(schema["schema"])

    def sort(self, value: JsonSchemaValue, parent_key: str | None = None) -> JsonSchemaValue:
        return value  # declaration order: "type" first, as people write it

    def model_schema(self, schema: core_schema.ModelSchema) -> JsonSchemaValue:
        # A model's docstring is for its developers: the model reads the tool's and each field's description.
        out = super().model_schema(schema)
        doc = schema["cls"].__doc__
        if doc and out.get("description") == inspect.cleandoc(doc):
            del out["description"]
        return out


@cache
def _schema_of(model: type[ToolArguments]) -> dict[str, Any]:
    schema = model.model_json_schema(by_alias=True, schema_generator=_SmallSchema)
    definitions = schema.pop("$defs", {})
    out: dict[str, Any] = _tidy(schema, definitions)
    out.setdefault("properties", {})
    return out


def _tidy(node: Any, definitions: dict[str, Any]) -> Any:
    """Inline ``$ref``s; drop titles, ``default: null`` and ``additionalProperties`` from every schema node."""
    if isinstance(node, list):
        return [_tidy(item, definitions) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        node = {**definitions[ref.removeprefix("#/$defs/")], **{k: v for k, v in node.items() if k != "$ref"}}
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("title", "additionalProperties") or (key == "default" and value is None):
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _tidy(prop, definitions) for name, prop in value.items()}
        elif key in ("items", "anyOf", "oneOf", "allOf", "prefixItems", "not"):
            out[key] = _tidy(value, definitions)
        else:
            out[key] = value  # enum, default, description, x-acp-*: values, not schemas
    return out


# --- the refusal message --------------------------------------------------------------------------------------------

_JSON_TYPES = {
    "string_type": "string", "int_type": "integer", "float_type": "number", "bool_type": "boolean",
    "list_type": "array", "tuple_type": "array", "set_type": "array", "dict_type": "object", "model_type": "object",
    "model_attributes_type": "object", "dataclass_type": "object", "int_parsing": "integer", "float_parsing": "number",
}


def refusal_message(model: type[BaseModel], exc: ValidationError) -> str:
    """One sentence for the model: which argument and which rule (the first error; every missing sibling at once)."""
    errors = exc.errors(include_url=False, include_input=False, include_context=True)
    first = errors[0]
    loc = tuple(first["loc"])
    if first["type"] == "missing":
        parent = loc[:-1]
        names = [str(e["loc"][-1]) for e in errors if e["type"] == "missing" and tuple(e["loc"][:-1]) == parent]
        path, _, _ = _walk(model, parent)
        return f"Invalid {_dotted(path)}: missing required argument(s) {', '.join(names)}."
    path, annotation, union = _walk(model, loc)
    kind, ctx, msg = first["type"], first.get("ctx") or {}, first["msg"]
    if union or kind in _JSON_TYPES:
        # The types the model was shown (a field parsed as a list may be published as "string or array").
        shown = _published_types(model, path) or (_type_names(annotation) if union else [_JSON_TYPES[kind]])
        return f"Invalid {_dotted(path)}: must be of type {' or '.join(shown)}."
    if kind == "extra_forbidden":
        owner, _, _ = _walk(model, loc[:-1])
        accepted = _accepted_keys(model, loc[:-1])
        return f"Invalid {_dotted(owner)}: unknown key {loc[-1]}. Accepted: {', '.join(accepted) or 'none'}."
    if kind in ("value_error", "assertion_error"):
        text = str(msg).removeprefix("Value error, ").removeprefix("Assertion failed, ")
        return f"Invalid {_dotted(path)}: {text}" if path else text
    return f"Invalid {_dotted(path)}: {_rule(kind, ctx, msg, annotation)}"


def _rule(kind: str, ctx: dict[str, Any], msg: str, annotation: Any) -> str:
    if kind in ("literal_error", "enum"):
        choices = get_args(_unwrap(annotation)) if get_origin(_unwrap(annotation)) is Literal else ()
        return f"{rule_words('enum', choices)}." if choices else f"{msg}."
    if kind in PYDANTIC_KEYWORDS:
        keyword, key = PYDANTIC_KEYWORDS[kind]
        return f"{rule_words(keyword, ctx.get(key))}."
    return f"{msg}."  # pydantic's messages name the rule, never the value


def _dotted(path: list[str | int]) -> str:
    return ".".join(str(p) for p in path) or "arguments"


def _unwrap(annotation: Any) -> Any:
    """The type behind ``Annotated[...]`` and ``X | None``."""
    while True:
        if get_origin(annotation) is Annotated:
            annotation = get_args(annotation)[0]
            continue
        if _is_union(annotation):
            members = [a for a in get_args(annotation) if a is not type(None)]
            if len(members) == 1:
                annotation = members[0]
                continue
        return annotation


def _is_union(annotation: Any) -> bool:
    return get_origin(annotation) in (Union, types.UnionType)


def _walk(model: type[BaseModel], loc: tuple[Any, ...]) -> tuple[list[str | int], Any, bool]:
    """The readable path of an error location, the annotation there and whether a union member cut it short."""
    path: list[str | int] = []
    current: Any = model
    for item in loc:
        current = _unwrap(current)
        if isinstance(current, type) and issubclass(current, BaseModel):
            field = next((f for n, f in current.model_fields.items() if (f.alias or n) == item), None)
            if field is None:
                return [*path, item], None, False
            path.append(item)
            current = field.annotation
        elif _is_union(current):
            return path, current, True  # pydantic names the member it tried: the field as a whole is what to fix
        elif get_origin(current) in (list, tuple, set, frozenset) and isinstance(item, int):
            path.append(item)
            current = (get_args(current) or (Any,))[0]
        elif get_origin(current) is dict:
            path.append(item)
            current = (get_args(current) or (Any, Any))[-1]
        else:
            return [*path, item], None, False
    return path, current, False


def _published_node(model: type[BaseModel], path: list[str | int]) -> dict[str, Any]:
    """The published schema's node at ``path`` ({} where it says nothing, e.g. inside a hidden item)."""
    if not (isinstance(model, type) and issubclass(model, ToolArguments)):
        return {}
    node: Any = _schema_of(model)
    for part in path:
        if isinstance(part, str) and isinstance(node.get("properties"), dict) and part in node["properties"]:
            node = node["properties"][part]
        elif isinstance(part, int) and isinstance(node.get("items"), dict):
            node = node["items"]
        else:
            return {}
    return node if isinstance(node, dict) else {}


def _published_types(model: type[BaseModel], path: list[str | int]) -> list[str]:
    """The JSON types the published schema gives at ``path`` ([] where it says nothing)."""
    node = _published_node(model, path)
    options = node.get("anyOf") or [node]
    return [o["type"] for o in options if isinstance(o, dict) and isinstance(o.get("type"), str)]


INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_LONG_DIGITS = re.compile(rb"\d{19}")  # a number that may be past INT64_MAX (19 digits): then the values are walked


def _unwritable_number(value: Any, path: list[str | int]) -> tuple[list[str | int], int | float] | None:
    """The first number in ``value`` JSON cannot carry here, with its path: an integer past 64 bits (orjson's range,
    and every source's: SQL engines, BigQuery INT64) or NaN/Infinity (not JSON; the SDK's parser lets them in)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return (path, value) if not INT64_MIN <= value <= INT64_MAX else None
    if isinstance(value, float):
        return None if math.isfinite(value) else (path, value)
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list | tuple) else ()
    for key, item in items:
        if (found := _unwritable_number(item, [*path, key])) is not None:
            return found
    return None


def _number_refusal(model: type[BaseModel], path: list[str | int], value: int | float) -> str:
    """The refusal of such a number: the field's type when it takes no number, else the rule it breaks (the field's
    own bound when it has one, the 64-bit range otherwise), or "finite"."""
    where = _dotted(path)
    shown = _published_types(model, path)
    if shown and not {"integer", "number"} & set(shown):
        return f"Invalid {where}: must be of type {' or '.join(shown)}."
    if isinstance(value, float):
        return f"Invalid {where}: must be a finite number."
    node = _published_node(model, path)
    keys, default = (("maximum", "exclusiveMaximum"), INT64_MAX) if value > 0 else (("minimum", "exclusiveMinimum"), INT64_MIN)
    keyword, bound = next(((k, node[k]) for k in keys if k in node), (keys[0], default))
    return f"Invalid {where}: {rule_words(keyword, bound)}."


def _accepted_keys(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    _, annotation, _ = _walk(model, loc)
    target = _unwrap(annotation)
    if isinstance(target, type) and issubclass(target, BaseModel):
        return [f.alias or n for n, f in target.model_fields.items()]
    return []


def _type_names(annotation: Any) -> list[str]:
    names: list[str] = []
    for member in get_args(annotation):
        member = _unwrap(member)
        origin = get_origin(member) or member
        name = {str: "string", int: "integer", float: "number", bool: "boolean", list: "array", tuple: "array",
                dict: "object", type(None): "null"}.get(origin)
        if name is None and isinstance(origin, type) and issubclass(origin, BaseModel):
            name = "object"
        if name is None and origin is Literal:
            name = "string"
        if name and name not in names:
            names.append(name)
    return names


def check_model(tool_name: str, model: Any) -> None:
    """At declaration: ``model`` is a ToolArguments subclass that leaves the core's arguments to the core."""
    if not (isinstance(model, type) and issubclass(model, ToolArguments)):
        raise TypeError(
            f"ToolSpec(name={tool_name!r}): arguments must be a subclass of analytics_acp.ToolArguments "
            f"(a pydantic model), not {model!r}."
        )
    taken = sorted(set(model.argument_names()) & set(CORE_ARGUMENTS))
    if taken:
        raise TypeError(
            f"ToolSpec(name={tool_name!r}): {', '.join(taken)} must not be declared in the argument model: the core "
            "injects and resolves them (6.2, 8.7); read ctx.resource_id / ctx.tables instead."
        )


__all__ = [
    "CORE_ARGUMENTS",
    "DateText",
    "EndDate",
    "NoArguments",
    "NotBlank",
    "SqlText",
    "StartDate",
    "TableRef",
    "ToolArguments",
    "WriteTableArguments",
    "check_model",
    "refusal_message",
]
