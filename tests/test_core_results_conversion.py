"""Spec 8.6: header typing (declared wins, inference mixes) and value normalization."""

import datetime as dt
from decimal import Decimal

import pytest
from analytics_acp.declarations import Extraction, Header
from analytics_acp.results import BuildSettings, build_extraction, infer_type
from analytics_acp.results.conversion import TO_TYPE, classify


def build(rows, headers=None, columns=None, **kw):
    return build_extraction(Extraction(rows=rows, description="d", headers=headers, columns=columns), BuildSettings(**kw))


def types_of(built):
    return {h["name"]: h["type"] for h in built.system_data["headers"]}


def table_of(built):
    return built.system_data["table"]


# --- inference (8.6) ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "values, expected",
    [
        ([1, 2, 3], "integer"),
        ([1, 2.5], "number"),
        ([0.5, None], "number"),
        ([dt.date(2026, 9, 1), dt.datetime(2026, 9, 1, 10, 0)], "datetime"),
        ([dt.date(2026, 9, 1)], "date"),
        ([dt.datetime(2026, 9, 1, 10, 0)], "datetime"),
        ([True, False], "boolean"),
        ([True, 1], "string"),
        ([1, "a"], "string"),
        ([dt.date(2026, 9, 1), "x"], "string"),
        ([{"a": 1}, [1]], "json"),
        ([{"a": 1}, "x"], "string"),
        ([None, None], "string"),
        (["a"], "string"),
        ([Decimal("3"), Decimal("1.25")], "number"),
        ([Decimal("3")], "integer"),
    ],
)
def test_inferred_type_of_undeclared_column(values, expected):
    built = build([{"c": v} for v in values])
    assert types_of(built) == {"c": expected}


def test_infer_type_rules_directly():
    assert infer_type(set()) == "string"
    assert infer_type({"integer", "number"}) == "number"
    assert infer_type({"date", "datetime"}) == "datetime"
    assert infer_type({"integer", "number", "string"}) == "string"
    assert infer_type({"date", "datetime", "integer"}) == "string"


def test_mixed_undeclared_values_become_consistent():
    built = build([{"c": 1}, {"c": 2.5}, {"d": dt.date(2026, 9, 1)}, {"d": dt.datetime(2026, 9, 1, 10, 15)},
                   {"e": 5}, {"e": "x"}, {"e": True}, {"e": {"k": 1}}, {"e": 0.5}])
    t = table_of(built)
    assert types_of(built) == {"c": "number", "d": "datetime", "e": "string"}
    assert [r["c"] for r in t[:2]] == [1, 2.5]
    assert [r["d"] for r in t[2:4]] == ["2026-09-01T00:00:00.000Z", "2026-09-01T10:15:00.000Z"]
    assert [r["e"] for r in t[4:]] == ["5", "x", "true", '{"k":1}', "0.5"]
    # the model rows are the same final values
    assert built.model_response["rows"] == t


def test_declared_header_wins_over_values():
    built = build([{"n": "12"}, {"n": "7"}], headers=[Header("n", "integer", role="metric")])
    assert built.system_data["headers"] == [{"name": "n", "type": "integer", "role": "metric"}]
    assert [r["n"] for r in table_of(built)] == [12, 7]


def test_header_dicts_and_bare_names_fix_order_but_infer_type():
    built = build([{"b": 1, "a": "x"}], headers=["a", {"name": "b", "description": "Bee"}])
    assert built.system_data["headers"] == [{"name": "a", "type": "string"}, {"name": "b", "type": "integer", "description": "Bee"}]


def test_unknown_declared_type_is_rejected():
    with pytest.raises(ValueError, match="unknown type"):
        build([{"a": 1}], headers=[{"name": "a", "type": "float"}])


# --- normalization to declared types (8.6) ----------------------------------------------------
@pytest.mark.parametrize(
    "type_name, raw, expected",
    [
        ("integer", "1830", 1830),
        ("integer", " 42 ", 42),
        ("integer", "1e3", 1000),
        ("integer", 7.0, 7),
        ("integer", Decimal("12"), 12),
        ("integer", Decimal("12.000"), 12),
        ("integer", True, 1),
        ("integer", 2**70, 2**70),
        ("integer", "", None),
        ("integer", float("nan"), None),
        ("number", "0.0421", 0.0421),
        ("number", "12", 12),
        ("number", Decimal("1.25"), 1.25),
        ("number", Decimal("3"), 3.0),
        ("number", float("inf"), None),
        ("number", float("-inf"), None),
        ("number", "nan", None),
        ("number", 5, 5),
        ("boolean", "true", True),
        ("boolean", "FALSE", False),
        ("boolean", 1, True),
        ("boolean", 0, False),
        ("boolean", "yes", True),
        ("date", "20260901", "2026-09-01"),
        ("date", "2026-09-01", "2026-09-01"),
        ("date", 20260901, "2026-09-01"),
        ("date", dt.date(2026, 9, 1), "2026-09-01"),
        ("date", dt.datetime(2026, 9, 1, 23, 30), "2026-09-01"),
        ("date", "2026-09-01T10:00:00Z", "2026-09-01"),
        ("datetime", dt.datetime(2026, 9, 1, 10, 15), "2026-09-01T10:15:00.000Z"),
        ("datetime", dt.datetime(2026, 9, 1, 12, 15, 0, 123456, tzinfo=dt.timezone(dt.timedelta(hours=2))),
         "2026-09-01T10:15:00.123Z"),
        ("datetime", dt.date(2026, 9, 1), "2026-09-01T00:00:00.000Z"),
        ("datetime", "2026-09-01T12:15:00+02:00", "2026-09-01T10:15:00.000Z"),
        ("datetime", "2026-09-01 10:15:00", "2026-09-01T10:15:00.000Z"),
        ("datetime", "20260901", "2026-09-01T00:00:00.000Z"),
        ("datetime", 1788257700, "2026-09-01T10:15:00.000Z"),
        ("datetime", 1788257700123, "2026-09-01T10:15:00.123Z"),
        ("datetime", 1788257700123456, "2026-09-01T10:15:00.123Z"),
        ("datetime", "1788257700", "2026-09-01T10:15:00.000Z"),
        ("json", {"a": [1, 2]}, {"a": [1, 2]}),
        ("json", '{"a": 1}', {"a": 1}),
        ("json", "[1, 2]", [1, 2]),
        ("json", (1, 2), [1, 2]),
        ("json", {"d": Decimal("1.5"), "t": dt.date(2026, 9, 1), "n": float("nan")}, {"d": 1.5, "t": "2026-09-01", "n": None}),
        ("string", b"\x00\xffA", "AP9B"),
        ("string", 12, "12"),
        ("string", True, "true"),
        ("string", dt.datetime(2026, 9, 1, 10, 15), "2026-09-01T10:15:00.000Z"),
        ("string", {"a": 1}, '{"a":1}'),
        ("string", float("nan"), None),
        ("string", Decimal("1.50"), "1.50"),
    ],
)
def test_normalize_to_declared_type(type_name, raw, expected):
    built = build([{"c": raw}], headers=[Header("c", type_name)])
    value = table_of(built)[0]["c"]
    assert value == expected and type(value) is type(expected)
    assert built.warnings == []


@pytest.mark.parametrize(
    "type_name, raw",
    [("integer", "abc"), ("integer", 1.5), ("number", "12 apples"), ("boolean", "maybe"), ("date", "2026-13-45"),
     ("datetime", "not a time"), ("json", "not json {")],
)
def test_unconvertible_kept_as_text_with_one_warning_per_column(type_name, raw):
    built = build([{"c": raw}, {"c": raw}, {"c": None}], headers=[Header("c", type_name)])
    assert [r["c"] for r in table_of(built)] == [str(raw), str(raw), None]
    assert len(built.warnings) == 1 and "'c'" in built.warnings[0] and type_name in built.warnings[0]
    assert built.model_response["warnings"] == built.warnings


def test_nan_and_inf_become_null_in_undeclared_columns():
    built = build([{"x": float("nan")}, {"x": float("inf")}, {"x": 1.5}])
    assert [r["x"] for r in table_of(built)] == [None, None, 1.5]
    assert types_of(built) == {"x": "number"}


def test_classify_keeps_plain_values_json_safe():
    for value in (Decimal("NaN"), float("nan")):
        assert classify(value) == (None, None)
    assert classify(dt.time(10, 15)) == ("string", "10:15:00")
    assert classify(b"ab") == ("string", "YWI=")
    assert TO_TYPE["json"]({1: {2, 3}}) in ({"1": [2, 3]}, {"1": [3, 2]})


# --- column order and row shape (8.6, 8.2) -----------------------------------------------------
def test_column_order_declared_first_then_appearance():
    rows = [{"z": 1, "b": 2}, {"a": 3, "b": 4}, {"q": 5}]
    built = build(rows, headers=[Header("b", "integer"), Header("missing", "string")])
    assert built.model_response["columns"] == ["b", "missing", "z", "a", "q"]
    assert [h["name"] for h in built.system_data["headers"]] == ["b", "missing", "z", "a", "q"]
    for row in table_of(built):
        assert list(row) == ["b", "missing", "z", "a", "q"]  # exactly the header keys, in order
    assert table_of(built)[2] == {"b": None, "missing": None, "z": None, "a": None, "q": 5}


def test_tuple_rows_with_columns_follow_declared_order():
    built = build([(1, "x", "2026-09-01")], columns=["n", "s", "d"], headers=[Header("d", "date"), Header("n", "integer")])
    assert built.model_response["columns"] == ["d", "n", "s"]
    assert table_of(built) == [{"d": "2026-09-01", "n": 1, "s": "x"}]
    assert types_of(built) == {"d": "date", "n": "integer", "s": "string"}


def test_tuple_rows_use_declared_headers_when_no_columns():
    built = build([(1, "a"), [2, "b"]], headers=[Header("n", "integer"), Header("s")])
    assert table_of(built) == [{"n": 1, "s": "a"}, {"n": 2, "s": "b"}]


def test_duplicate_column_names_are_made_unique():
    built = build([(1, 2)], columns=["a", "a"])
    assert built.model_response["columns"] == ["a", "a_2"]
    assert table_of(built) == [{"a": 1, "a_2": 2}]


def test_bad_row_shapes_are_clear_errors():
    from analytics_acp.errors import UpstreamError

    with pytest.raises(UpstreamError, match="2 values but the tool named 3 columns"):
        build([(1, 2, 3), (1, 2)], columns=["a", "b", "c"])
    with pytest.raises(UpstreamError, match="without naming their columns"):
        build([(1, 2)])
    with pytest.raises(UpstreamError, match="mixed"):
        build([{"a": 1}, (1,)], columns=["a"])


def test_tuple_rows_converted_a_batch_at_a_time_match_row_by_row():
    # Tuple/list rows go through one compiled comprehension per batch (bench case 2): odd values in the
    # middle of a batch, lists beside tuples, declared order unlike the positions, one column.
    rows: list = [(i, f"s{i}", i * 0.5, "2026-01-02") for i in range(3000)]
    rows[1500] = ["7", 8, "0.25", dt.date(2026, 1, 3)]
    rows[2999] = (None, None, float("nan"), None)
    headers = [Header("d", "date"), Header("i", "integer"), Header("s", "string"), Header("f", "number")]
    t = table_of(build(rows, columns=["i", "s", "f", "d"], headers=headers, row_limit=0, inline_max_bytes=10**9))
    assert len(t) == 3000 and list(t[1]) == ["d", "i", "s", "f"]
    assert t[1] == {"d": "2026-01-02", "i": 1, "s": "s1", "f": 0.5}
    assert t[1500] == {"d": "2026-01-03", "i": 7, "s": "8", "f": 0.25}
    assert t[2999] == {"d": None, "i": None, "s": None, "f": None}
    assert table_of(build([(i,) for i in range(300)], columns=["a"], row_limit=0))[299] == {"a": 299}


def test_bad_rows_late_in_a_batch_are_the_same_errors():
    from analytics_acp.errors import UpstreamError

    good = [(i, i) for i in range(300)]
    with pytest.raises(UpstreamError, match="3 values but the tool named 2 columns"):
        build([*good, (1, 2, 3), *good], columns=["a", "b"])
    with pytest.raises(UpstreamError, match="mixed"):
        build([*good, {"a": 1, "b": 2}, *good], columns=["a", "b"])  # a dict of two keys must not unpack as a row


def test_declared_column_fast_path_still_converts_odd_values():
    # The compiled row function tests the common class inline; anything else goes to the converter.
    rows = [(i, str(i), i * 0.5) for i in range(50)] + [("7", 8, "0.25"), (None, None, float("nan"))]
    built = build(rows, columns=["i", "s", "f"], headers=[Header("i", "integer"), Header("s", "string"), Header("f", "number")])
    t = table_of(built)
    assert t[10] == {"i": 10, "s": "10", "f": 5.0}
    assert t[50] == {"i": 7, "s": "8", "f": 0.25}
    assert t[51] == {"i": None, "s": None, "f": None}


def test_undeclared_fast_path_still_records_new_kinds():
    rows = [{"v": i} for i in range(100)] + [{"v": 0.5}] + [{"v": i} for i in range(100)] + [{"v": "x"}]
    built = build(rows, row_limit=0)
    assert types_of(built) == {"v": "string"}
    assert table_of(built)[0]["v"] == "0" and table_of(built)[100]["v"] == "0.5" and table_of(built)[-1]["v"] == "x"


def test_columns_fix_order_for_dict_rows_too_and_namedtuples_work():
    built = build([{"b": 1, "a": 2, "c": 3}], columns=["a", "b"])
    assert built.model_response["columns"] == ["a", "b", "c"]
    assert table_of(built) == [{"a": 2, "b": 1, "c": 3}]
    from collections import namedtuple

    Row = namedtuple("Row", "x y")
    built = build([Row(1, "u"), Row(2, "v")], columns=["x", "y"])
    assert table_of(built) == [{"x": 1, "y": "u"}, {"x": 2, "y": "v"}]
