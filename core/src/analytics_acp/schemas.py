"""Setup schemas (5.5): validate credentials and config, check schemas, find path fields, scrub secrets from text.

Messages name the field and the rule, never the value (5.5.3: no secret values in messages). They are read by
a person (10.3: a host shows credential errors to the user; a terminal, a set-up page), so they say what is
wrong and what to give, never "ask the user".

Two standard JSON Schema annotations carry an ACP's knowledge of a field to any host, with no ACP-specific
code in the host (5.5.4, 14.3):

- ``contentMediaType: "application/json"`` with a ``contentSchema`` (JSON Schema 2020-12): the text is JSON
  and that JSON must match ``contentSchema``. The core validates it here (a service-account key without
  ``private_key``, an OAuth client file pasted as a key); the message names the field and what is missing or
  wrong, with the ``description`` of the sub-schema that failed (or of ``contentSchema``) as the advice.
- ``format: "path"``: the string is a path on the local file system (a file or a folder) where the ACP runs.
  JSON Schema lets a host ignore a format it does not know (a form paints it as text, 5.5.4); a host that
  knows it can resolve relative paths (the ACP Bridge: from the sources.json folder) and show the full path
  it tried. :func:`path_fields` finds them for given values, variants included.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

from .errors import AcpError, CredentialsInvalid, InvalidArguments
from .rulewords import rule_words

_PRIMITIVES = {"string", "number", "integer", "boolean"}
_SECRET_NAME = re.compile(r"(pass(word)?|secret|token|private_key|api_key|apikey|service_account|credential)", re.I)
# Inside a JSON object pasted into a secret field (a service-account key, an OAuth token file) only these keys
# hold secrets; client_email, project_id, client_id, token_uri are identities messages need (issue 26.4).
_NESTED_SECRET = re.compile(r"^(private_key|private_key_id|client_secret|access_token|refresh_token|id_token|"
                            r"password|passwd|secret|token|api_key|apikey)$", re.I)
_URL_PASSWORD = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.\-]*://)(?P<user>[^:/@\s]*):(?P<pw>[^@/\s]+)@")


def _variants(schema: dict[str, Any]) -> list[dict[str, Any]]:
    return list(schema["oneOf"]) if "oneOf" in schema else [schema]


def _discriminator(variant: dict[str, Any]) -> tuple[str, Any] | None:
    for key, prop in (variant.get("properties") or {}).items():
        if isinstance(prop, dict) and "const" in prop:
            return key, prop["const"]
    return None


def _problems(variant: dict[str, Any], values: dict[str, Any]) -> list[str]:
    """Rule violations of a flat object schema, worded without the values."""
    import jsonschema

    validator = jsonschema.Draft202012Validator({**variant, "additionalProperties": True})
    out = []
    for error in sorted(validator.iter_errors(values), key=lambda e: list(e.path)):
        field = ".".join(str(p) for p in error.absolute_path)
        v, rule = error.validator, error.validator_value
        if v == "required":
            missing = [m for m in rule if m not in values]
            out.append(f"missing required field(s) {', '.join(missing)}")
        else:
            out.append(f"{field or 'value'} {rule_words(v, rule)}")
    for key, prop in (variant.get("properties") or {}).items():
        if isinstance(prop, dict) and prop.get("contentMediaType") == "application/json" and isinstance(values.get(key), str):
            out += json_text_problems(key, prop, values[key])
    return out


def json_text_problems(key: str, prop: dict[str, Any], text: str) -> list[str]:
    """Problems of a JSON-in-a-string field: not JSON, or JSON that fails the property's ``contentSchema``.

    Worded without values: the field (``service_account``), the path inside the JSON
    (``service_account.type``) and the rule; when the failing sub-schema has a ``description`` that text is
    the message (the ACP's own advice: what the JSON is and what to give instead), else the structural
    problems followed by the ``contentSchema``'s description.
    """
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError:
        return [f"{key} must contain valid JSON"]
    content = prop.get("contentSchema")
    if not isinstance(content, dict):
        return []
    import jsonschema

    errors = sorted(jsonschema.Draft202012Validator(content).iter_errors(parsed), key=lambda e: list(e.absolute_path))
    if not errors:
        return []
    advice = [str(e.schema["description"]) for e in errors
              if isinstance(e.schema, dict) and e.schema is not content and e.schema.get("description")]
    if advice:
        return [f"{key}: {note}" for note in dict.fromkeys(advice)]
    found = "; ".join(dict.fromkeys(_content_problem(key, e) for e in errors))
    hint = content.get("description")
    return [f"{found} ({hint})" if hint else found]


def _content_problem(key: str, error: Any) -> str:
    where = ".".join([key, *(str(p) for p in error.absolute_path)])
    if error.validator == "required":
        missing = [m for m in error.validator_value if not isinstance(error.instance, dict) or m not in error.instance]
        return f"{where} lacks {', '.join(missing)}"
    return f"{where} {rule_words(error.validator, error.validator_value, json_text=True)}"


def _choose_variant(schema: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    variants = _variants(schema)
    if len(variants) == 1 and "oneOf" not in schema:
        return variants[0]
    options = []
    for variant in variants:
        disc = _discriminator(variant)
        if disc is None:
            continue
        key, const = disc
        options.append(str(const))
        if values.get(key) == const:
            return variant
    keys = {d[0] for d in map(_discriminator, variants) if d}
    if not keys & set(values):
        raise CredentialsInvalid(f"The credentials have no {' or '.join(sorted(keys))}: it must be one of {', '.join(options)}.")
    raise CredentialsInvalid(f"The credentials match no accepted variant: {' or '.join(sorted(keys))} must be one of "
                             f"{', '.join(options)}.")


def _json_fields(variant: dict[str, Any]) -> list[str]:
    return [k for k, p in (variant.get("properties") or {}).items()
            if isinstance(p, dict) and p.get("type") == "string" and p.get("contentMediaType") == "application/json"]


def normalize_json_fields(variant: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    """The forms people paste for a variant's JSON-text field (5.5), as the schema's text.

    - the field given as a JSON object instead of its text: serialized;
    - the variant's one required JSON field missing while the object carries other fields: the object
      itself is that JSON (a key file given whole, ``{"type": "service_account", "private_key", …}``).
    """
    out = dict(values)
    fields = _json_fields(variant)
    for key in fields:
        if isinstance(out.get(key), dict | list):
            out[key] = json.dumps(out[key])
    required = [k for k in fields if k in (variant.get("required") or [])]
    disc = _discriminator(variant)
    if len(required) == 1 and required[0] not in out and disc is not None and len(set(out) - {disc[0]}) > 0:
        return {disc[0]: disc[1], required[0]: json.dumps(values)}
    return out


def validate_credentials(schema: dict[str, Any], credentials: dict[str, Any]) -> dict[str, Any]:
    """Validate credentials against credentials_schema (oneOf by const discriminator); ACP_CREDENTIALS_INVALID.

    Returns the credentials as the schema shapes them (``normalize_json_fields``)."""
    if not isinstance(credentials, dict):
        raise CredentialsInvalid("The credentials must be an object.")
    variant = _choose_variant(schema, credentials)
    credentials = normalize_json_fields(variant, credentials)
    problems = _problems(variant, credentials)
    if problems:
        raise CredentialsInvalid(_sentence("The credentials are not valid: " + "; ".join(problems)))
    return credentials


def _sentence(text: str) -> str:
    return text if text.endswith((".", "!", "?")) else text + "."


# Valid configs already checked, per schema object: every tools/call validates the session's config again
# (5.3 merges _meta.acp.config into it), the same few dicts each time; jsonschema took about a third of
# building a call's context (bench case 4b). Keyed by the config's canonical JSON; invalid ones are not kept.
_VALID_CONFIGS: dict[tuple[int, bytes], tuple[dict[str, Any], dict[str, Any]]] = {}
_VALID_CONFIGS_MAX = 256


def validate_config(schema: dict[str, Any] | None, config: dict[str, Any]) -> dict[str, Any]:
    """Validate config against config_schema, filling schema defaults; ACP_INVALID_ARGUMENTS on failure."""
    if not isinstance(config, dict):
        raise InvalidArguments("config must be an object.")
    if not schema:
        return dict(config)
    try:
        key: tuple[int, bytes] | None = (id(schema), orjson.dumps(config, option=orjson.OPT_SORT_KEYS))
    except TypeError:  # not plain JSON (a host's own object, an integer past 64 bits): checked every time
        key = None
    known = _VALID_CONFIGS.get(key) if key is not None else None
    if known is not None and known[0] is schema:  # the same schema object, not a new one at a reused id
        return dict(known[1])
    filled = _validated_config(schema, config)
    if key is not None:
        if len(_VALID_CONFIGS) >= _VALID_CONFIGS_MAX:
            _VALID_CONFIGS.clear()
        _VALID_CONFIGS[key] = (schema, dict(filled))
    return filled


def _validated_config(schema: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    filled = dict(config)
    for key, prop in (schema.get("properties") or {}).items():
        if key not in filled and isinstance(prop, dict) and "default" in prop:
            filled[key] = prop["default"]
    problems = _problems(schema, filled)
    if problems:
        raise InvalidArguments(_sentence("The source configuration is not valid: " + "; ".join(problems)))
    return filled


PATH_FORMAT = "path"


def path_fields(schema: dict[str, Any] | None, values: Any) -> list[str]:
    """The keys of ``values`` (credentials or config) that hold a local file or folder path under ``schema``.

    A property marked ``"format": "path"`` holds one (see the module docstring). With a ``oneOf`` the variant
    is the one ``values`` names by its ``const`` discriminator (5.5.2); none matching: no path fields. Keys
    are returned whatever their value (a literal, or a host's own reference such as the bridge's
    ``{"file": …}``), in the schema's order; the host decides what to do with each.
    """
    if not isinstance(schema, dict) or not isinstance(values, dict):
        return []
    variant: dict[str, Any] | None = None
    if "oneOf" not in schema:
        variant = schema
    else:
        for candidate in _variants(schema):
            disc = _discriminator(candidate)
            if disc is not None and values.get(disc[0]) == disc[1]:
                variant = candidate
                break
    props = (variant or {}).get("properties") or {}
    return [k for k, p in props.items() if isinstance(p, dict) and p.get("format") == PATH_FORMAT and k in values]


def absolute_paths(schema: dict[str, Any] | None, values: Any, base: Path) -> Any:
    """``values`` with each literal path of :func:`path_fields` made absolute: ``~`` expanded, a relative one
    joined to ``base`` (a host's folder of reference, e.g. the one holding its set-up file). Other values and
    non-string path values are left as they are."""
    if not isinstance(values, dict):
        return values
    out = dict(values)
    for key in path_fields(schema, values):
        value = out[key]
        if isinstance(value, str) and value.strip():
            path = Path(value.strip()).expanduser()
            out[key] = os.path.abspath(path if path.is_absolute() else Path(base) / path)
    return out


def secret_paths(schema: dict[str, Any]) -> set[str]:
    """Names of writeOnly (secret) fields across every variant."""
    out = set()
    for variant in _variants(schema):
        for key, prop in (variant.get("properties") or {}).items():
            if isinstance(prop, dict) and prop.get("writeOnly"):
                out.add(key)
    return out


def secret_values(credentials: Any, schema: dict[str, Any] | None, min_len: int = 4) -> list[str]:
    """The credential strings that are secret: values of writeOnly fields (5.5.1), JSON text inside them included.

    Host names, users, database names and file paths are not secret and stay readable in
    messages (a resource id or a title names them). A schema that marks no field writeOnly
    gives no such guarantee, so every string except the variant discriminator counts.
    """
    if not isinstance(credentials, dict):
        return []
    marked = secret_paths(schema or {})
    discriminators = {d[0] for d in map(_discriminator, _variants(schema or {})) if d}
    out: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            if len(value) >= min_len:
                out.append(value)
            if value.lstrip().startswith("{"):  # a service-account key pasted as JSON text
                try:
                    out.extend(nested_secret_leaves(json.loads(value), min_len))
                except ValueError:
                    pass
        elif isinstance(value, dict):
            out.extend(nested_secret_leaves(value, min_len))
        elif isinstance(value, list):
            for v in value:
                walk(v)

    for key, value in credentials.items():
        if key in marked or (not marked and key not in discriminators and key != "type"):
            walk(value)
    return out


def nested_secret_leaves(value: Any, min_len: int = 4) -> list[str]:
    """Secret strings inside a JSON object given as a credential (a key file): values of secret-named keys only;
    field names, the ``type`` discriminator and identities (client_email, project_id…) are not secret."""
    out: list[str] = []
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, str) and _NESTED_SECRET.match(str(k)) and len(v) >= min_len:
                out.append(v)
            elif isinstance(v, dict | list):
                out.extend(nested_secret_leaves(v, min_len))
    elif isinstance(value, list):
        for v in value:
            out.extend(nested_secret_leaves(v, min_len))
    return out


def redact(value: str, secrets: Iterable[str]) -> str:
    """Replace every occurrence of each secret (and any URL password) with ***."""
    text = _URL_PASSWORD.sub(lambda m: f"{m.group('scheme')}{m.group('user')}:***@", str(value))
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


def redact_value(value: Any, secrets: Iterable[str]) -> Any:
    """``value`` (JSON-like: dicts, lists, strings) with :func:`redact` applied to every string in it, keys included."""
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return {redact_value(k, secrets): redact_value(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(v, secrets) for v in value]
    return value


def redact_error(exc: AcpError, secrets: Iterable[str]) -> AcpError:
    """``exc`` with every secret (and URL password) masked in its message and its data (10.1.4): the safety net for
    whatever a connector put in an error, in a tool call or a set-up check."""
    secrets = list(secrets)
    exc.message = redact(exc.message, secrets)
    if exc.data:
        exc.data = redact_value(exc.data, secrets)
    return exc


def check_setup_schema(schema: dict[str, Any], *, allow_one_of: bool) -> list[str]:
    """Problems that break 5.5.1 / 14.2: nested fields, missing titles, secrets without writeOnly, bad variants."""
    problems: list[str] = []
    if not isinstance(schema, dict):
        return ["schema must be an object"]
    if "oneOf" in schema:
        if not allow_one_of:
            return ["oneOf is only allowed in credentials_schema (5.5.1)"]
        for i, variant in enumerate(schema["oneOf"]):
            if not variant.get("title"):
                problems.append(f"variant {i} has no title")
            if _discriminator(variant) is None:
                problems.append(f"variant {i} has no const discriminator (5.5.2)")
            problems += [f"variant {i}: {p}" for p in _flat_problems(variant)]
        return problems
    if schema.get("type") != "object":
        problems.append('schema type must be "object"')
    return problems + _flat_problems(schema)


def _flat_problems(schema: dict[str, Any]) -> list[str]:
    out = []
    for key, prop in (schema.get("properties") or {}).items():
        if not isinstance(prop, dict):
            out.append(f"{key}: property must be an object")
            continue
        if prop.get("type") not in _PRIMITIVES and "const" not in prop:
            out.append(f"{key}: type must be string, number, integer or boolean (no nested objects or arrays)")
        if "const" not in prop and not prop.get("title"):
            out.append(f"{key}: missing title")
        if _SECRET_NAME.search(key) and "const" not in prop and not prop.get("writeOnly"):
            out.append(f"{key}: looks secret but is not writeOnly")
        out += _annotation_problems(key, prop)
    return out


def _annotation_problems(key: str, prop: dict[str, Any]) -> list[str]:
    """contentSchema only with JSON text and a valid JSON Schema 2020-12; format path only on strings."""
    out = []
    if "contentSchema" in prop:
        import jsonschema

        if prop.get("contentMediaType") != "application/json":
            out.append(f'{key}: contentSchema needs contentMediaType "application/json"')
        try:
            jsonschema.Draft202012Validator.check_schema(prop["contentSchema"])
        except jsonschema.SchemaError as exc:
            out.append(f"{key}: contentSchema is not a valid JSON Schema ({exc.message[:120]})")
    if prop.get("format") == PATH_FORMAT and prop.get("type") != "string":
        out.append(f'{key}: format "path" is for string fields')
    return out
