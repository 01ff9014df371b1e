"""Spec 8.2 model_response and 8.5 system_data of a single extraction."""

import datetime as dt
from decimal import Decimal

import pytest
from analytics_acp.declarations import Extraction, Header
from analytics_acp.errors import InvalidLimit
from analytics_acp.results import BuildSettings, Built, build_extraction


def ga4_rows(n):
    for i in range(n):
        day = dt.date(2026, 9, 1) + dt.timedelta(days=i)
        yield (day.strftime("%Y%m%d"), "Organic Search", str(1000 + i), 41.0 + i)


HEADERS = [
    Header("date", "date", role="dimension"),
    Header("sessionDefaultChannelGroup", "string", role="dimension", description="Session default channel group"),
    Header("sessions", "integer", role="metric"),
    Header("keyEvents:purchase", "number", role="metric"),
]


def test_model_response_has_exactly_the_8_2_keys():
    out = Extraction(rows=ga4_rows(254), description="GA4 property 123456789.", headers=HEADERS,
                     dates=["2026-09-01", "2026-09-30"], totals={"sessions": Decimal("51244")},
                     extra={"quota": {"consumed": 14}}, warnings=["Metric 'purchases' mapped to 'ecommercePurchases'."])
    built = build_extraction(out, BuildSettings(row_limit=25))
    assert isinstance(built, Built)
    mr = built.model_response
    assert list(mr) == ["notice", "description", "dates", "total_rows", "returned_rows", "truncated", "columns", "rows",
                        "totals", "extra", "warnings"]
    assert mr["notice"] == "Showing 25 of 254 extracted rows."
    assert mr["dates"] == ["2026-09-01", "2026-09-30"]
    assert (mr["total_rows"], mr["returned_rows"], mr["truncated"]) == (254, 25, True)
    assert mr["columns"] == ["date", "sessionDefaultChannelGroup", "sessions", "keyEvents:purchase"]
    assert mr["rows"][0] == {"date": "2026-09-01", "sessionDefaultChannelGroup": "Organic Search", "sessions": 1000,
                             "keyEvents:purchase": 41.0}
    assert mr["totals"] == {"sessions": 51244} and type(mr["totals"]["sessions"]) is int  # JSON-safe
    assert mr["warnings"] == ["Metric 'purchases' mapped to 'ecommercePurchases'."]
    assert "autocontext" not in mr
    assert (built.total_rows, built.returned_rows, built.truncated) == (254, 25, True)
    assert built.messages == ["Showing 25 of 254 extracted rows."]
    assert built.warnings == [] and built.info_extra == {} and built.files == []
    sd = built.system_data
    assert list(sd) == ["format", "row_count", "headers", "table"]
    assert sd["format"] == "inline" and sd["row_count"] == 254 and len(sd["table"]) == 254
    assert sd["headers"][1] == {"name": "sessionDefaultChannelGroup", "type": "string", "role": "dimension",
                                "description": "Session default channel group"}
    assert [h["name"] for h in sd["headers"]] == mr["columns"]


def test_optional_keys_absent_and_today_by_default():
    built = build_extraction(Extraction(rows=[{"a": 1}], description="d"), BuildSettings())
    mr = built.model_response
    assert list(mr) == ["notice", "description", "dates", "total_rows", "returned_rows", "truncated", "columns", "rows"]
    assert mr["dates"] == [dt.date.today().isoformat()]
    assert mr["notice"] == "Showing all 1 extracted rows." and mr["truncated"] is False


def test_no_rows():
    built = build_extraction(Extraction(rows=iter(()), description="d", headers=HEADERS), BuildSettings())
    mr = built.model_response
    assert mr["notice"] == "The query returned no rows."
    assert mr["rows"] == [] and mr["columns"] == [h.name for h in HEADERS] and mr["truncated"] is False
    assert built.system_data["table"] == [] and built.system_data["row_count"] == 0


def test_no_rows_no_headers():
    built = build_extraction(Extraction(rows=[], description="d"), BuildSettings())
    assert built.model_response["columns"] == [] and built.system_data["headers"] == []


def test_generator_rows_consumed_once_and_tuple_rows():
    gen = ga4_rows(40)
    built = build_extraction(Extraction(rows=gen, description="d", headers=HEADERS), BuildSettings(row_limit=50))
    assert next(gen, None) is None
    assert built.model_response["notice"] == "Showing all 40 extracted rows."
    assert built.model_response["rows"] == built.system_data["table"]


def test_conversion_warnings_reach_model_and_system_info():
    built = build_extraction(
        Extraction(rows=[{"n": "x"}], description="d", headers=[Header("n", "integer")], warnings=["tool warning"]),
        BuildSettings(),
    )
    assert built.model_response["warnings"][0] == "tool warning"
    assert len(built.model_response["warnings"]) == 2 and built.warnings == built.model_response["warnings"][1:]


def test_negative_limits_rejected():
    with pytest.raises(InvalidLimit):
        build_extraction(Extraction(rows=[], description="d"), BuildSettings(row_limit=-1))
