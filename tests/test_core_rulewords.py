"""One table turns a broken rule into English (rulewords.py): a model refused a typed argument, a model refused one of
the core's own arguments and a person whose set-up breaks a setup-schema rule read the same words for the same rule."""

from __future__ import annotations

import pytest
from analytics_acp import InvalidArguments, ToolArguments
from analytics_acp.rulewords import rule_words
from analytics_acp.schemas import validate_config
from analytics_acp.toolschemas import validate_arguments
from pydantic import Field


class Limits(ToolArguments):
    n: int = Field(1, ge=1, le=9)
    code: str = Field("ab", min_length=2, max_length=4, pattern="^[a-z]+$")
    items: list[str] = Field(default_factory=list, max_length=2)


SCHEMA = {"type": "object", "properties": {
    "n": {"type": "integer", "minimum": 1, "maximum": 9},
    "code": {"type": "string", "minLength": 2, "maxLength": 4, "pattern": "^[a-z]+$"},
    "items": {"type": "array", "items": {"type": "string"}, "maxItems": 2}}}


@pytest.mark.parametrize("values, words", [
    ({"n": 0}, "n: must be at least 1"),
    ({"n": 10}, "n: must be at most 9"),
    ({"code": "a"}, "code: must be at least 2 characters"),
    ({"code": "abcde"}, "code: must be at most 4 characters"),
    ({"code": "AB"}, "code: must match the pattern ^[a-z]+$"),
    ({"items": ["a", "b", "c"]}, "items: must have at most 2 item(s)"),
    ({"n": "3"}, "n: must be of type integer"),
])
def test_the_same_rule_reads_the_same_for_the_model_and_for_a_person(values, words):
    field, rule = words.split(": ")
    with pytest.raises(InvalidArguments) as typed:
        Limits.parse(values)
    with pytest.raises(InvalidArguments) as core:
        validate_arguments(SCHEMA, values)
    with pytest.raises(InvalidArguments) as setup:
        validate_config(SCHEMA, values)
    assert typed.value.message == core.value.message == f"Invalid {field}: {rule}."
    assert f"{field} {rule}" in setup.value.message


def test_words_for_each_keyword():
    assert rule_words("minLength", 1) == "must not be empty"
    assert rule_words("enum", ["eu", "us"]) == "must be one of eu, us"
    assert rule_words("const", "api_key") == 'must be "api_key"'
    assert rule_words("type", ["string", "array"]) == "must be of type string or array"
    assert rule_words("type", "object", json_text=True) == "must be a JSON object"
    assert rule_words("dependentRequired", {}) == "does not match the expected form (dependentRequired)"
