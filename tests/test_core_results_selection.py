"""Spec 8.7: effective table selection and the injected ``tables`` argument."""

import jsonschema
import pytest
from analytics_acp.declarations import CatalogEntry
from analytics_acp.errors import InvalidArguments
from analytics_acp.results import resolve_selection, tables_argument_schema

CATALOG = [
    CatalogEntry("ga4_hits", "GA4 hits", description="One row per GA4 event sent to /g/collect."),
    CatalogEntry("datalayer", "dataLayer pushes"),
    CatalogEntry("cookies", "Cookies"),
    CatalogEntry("seo", "SEO", required=True),
    CatalogEntry("lighthouse", "Lighthouse", tools=["audit"]),
]


def test_precedence_arguments_over_meta_over_defaults_over_all():
    sel = lambda a, c, d: resolve_selection(a, c, d, CATALOG, "capture")  # noqa: E731
    assert sel(["cookies"], ["datalayer"], ["ga4_hits"]) == ["cookies", "seo"]
    assert sel(None, ["datalayer"], ["ga4_hits"]) == ["datalayer", "seo"]
    assert sel(None, None, ["ga4_hits"]) == ["ga4_hits", "seo"]
    assert sel(None, None, None) == ["ga4_hits", "datalayer", "cookies", "seo"]  # every table of this tool


def test_empty_is_valid_and_required_always_added():
    assert resolve_selection([], ["cookies"], None, CATALOG, "capture") == ["seo"]
    assert resolve_selection(None, [], ["cookies"], CATALOG, "capture") == ["seo"]
    assert resolve_selection(None, None, [], CATALOG, "capture") == ["seo"]
    assert resolve_selection(["seo", "seo", "cookies"], None, None, CATALOG, "capture") == ["seo", "cookies"]


def test_unknown_names_in_arguments_list_the_valid_ones():
    with pytest.raises(InvalidArguments) as err:
        resolve_selection(["cookies", "nope"], None, None, CATALOG, "capture")
    assert "'nope'" in err.value.message
    assert "ga4_hits, datalayer, cookies, seo" in err.value.message
    with pytest.raises(InvalidArguments):
        resolve_selection(["lighthouse"], None, None, CATALOG, "capture")  # another tool's table
    with pytest.raises(InvalidArguments):
        resolve_selection(["lighthouse"], None, None, CATALOG, "other_tool")
    with pytest.raises(InvalidArguments):
        resolve_selection("cookies", None, None, CATALOG, "capture")


def test_source_wide_configured_tables_filtered_per_tool():
    # configure/_meta tables are validated against the whole catalog by the runtime (5.1); here they
    # only narrow to the tables that cover this tool.
    assert resolve_selection(None, ["nope", "cookies"], None, CATALOG, "capture") == ["cookies", "seo"]
    assert resolve_selection(None, ["lighthouse", "cookies"], None, CATALOG, "capture") == ["cookies", "seo"]
    assert resolve_selection(None, ["lighthouse", "cookies"], None, CATALOG, "audit") == ["lighthouse", "cookies", "seo"]
    assert resolve_selection(None, None, None, CATALOG, "audit") == ["ga4_hits", "datalayer", "cookies", "seo", "lighthouse"]


def test_tables_argument_schema():
    schema = tables_argument_schema(CATALOG, "capture")
    assert schema["type"] == "array" and schema["uniqueItems"] is True
    assert schema["items"] == {"type": "string", "enum": ["ga4_hits", "datalayer", "cookies", "seo"]}
    text = schema["description"]
    assert text.startswith("Datasets to extract. If omitted, the source defaults are used. Request only what the analysis needs.")
    for name, title in [("ga4_hits", "GA4 hits"), ("datalayer", "dataLayer pushes"), ("cookies", "Cookies")]:
        assert f"{name} ({title}" in text
    assert "seo (SEO, always extracted)" in text and "lighthouse" not in text
    jsonschema.validate(["cookies"], schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(["cookies", "cookies"], schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(["lighthouse"], schema)
