"""Access modes (10.6): onlyRead (default), readAndOnlyAdd, full, with per-name rules.

Rules are a JSON text list of ``{"pattern": "<regex>", "mode": "<access_mode>"}``;
the first pattern that matches the target name wins.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from .constants import ACCESS_MODES
from .errors import InvalidArguments, ReadOnlyViolation

Operation = Literal["read", "add", "replace"]
_RANK = {"onlyRead": 0, "readAndOnlyAdd": 1, "full": 2}
_NEEDS = {"read": 0, "add": 1, "replace": 2}
_OPERATION_WORDS = {"add": "create or add", "replace": "replace or delete"}


def parse_rules(value: Any, key: str = "table_rules") -> list[dict[str, str]]:
    """Parse and validate a rules field (JSON text or list). Raises ACP_INVALID_ARGUMENTS."""
    if value in (None, "", []):
        return []
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise InvalidArguments(f"config.{key} is not valid JSON ({exc.msg}).") from None
    if not isinstance(value, list):
        raise InvalidArguments(f'config.{key} must be a JSON list of {{"pattern", "mode"}} objects.')
    rules = []
    for i, rule in enumerate(value):
        if not isinstance(rule, dict) or "pattern" not in rule or "mode" not in rule:
            raise InvalidArguments(f'config.{key}[{i}] must be an object with "pattern" and "mode".')
        if rule["mode"] not in ACCESS_MODES:
            raise InvalidArguments(f"config.{key}[{i}].mode must be one of {', '.join(ACCESS_MODES)}.")
        try:
            re.compile(rule["pattern"])
        except re.error as exc:
            raise InvalidArguments(f"config.{key}[{i}].pattern is not a valid regular expression ({exc}).") from None
        rules.append({"pattern": str(rule["pattern"]), "mode": str(rule["mode"])})
    return rules


def effective_mode(config: dict[str, Any], target: str | None, rules_key: str = "table_rules") -> str:
    """The access mode for ``target``: the first matching rule, else config.access_mode, else onlyRead."""
    base = config.get("access_mode") or "onlyRead"
    if base not in ACCESS_MODES:
        raise InvalidArguments(f"config.access_mode must be one of {', '.join(ACCESS_MODES)}.")
    if target is not None:
        for rule in parse_rules(config.get(rules_key), rules_key):
            if re.search(rule["pattern"], target):
                return rule["mode"]
    return base


def check_access(config: dict[str, Any], target: str | None, operation: Operation, rules_key: str = "table_rules") -> str:
    """Raise ACP_READ_ONLY_VIOLATION unless ``operation`` on ``target`` fits the effective mode; return the mode."""
    mode = effective_mode(config, target, rules_key)
    if _NEEDS[operation] > _RANK[mode]:
        what = f" on {target}" if target else ""
        raise ReadOnlyViolation(
            f"The effective access mode{what} is {mode}, which does not allow to {_OPERATION_WORDS[operation]} data. "
            "Ask the user to raise access_mode (or add a table rule) in the source configuration."
        )
    return mode
