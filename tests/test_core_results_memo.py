"""Declared date/datetime conversions are remembered across tables (a pure function of the text),
bounded, and give the same values whether remembered or not (per-call cost, bench case 1)."""

import datetime as dt

from analytics_acp.declarations import Extraction, Header
from analytics_acp.results import BuildSettings, build_extraction
from analytics_acp.results.conversion import MEMO_SIZE, shared_memo, to_date, to_datetime

HEADERS = [Header("day", "date"), Header("at", "datetime")]
AT = "2026-01-06T10:00:00+02:00"


def _table(texts):
    rows = [{"day": t, "at": AT} for t in texts]
    built = build_extraction(Extraction(rows=rows, headers=HEADERS, description="d"), BuildSettings(row_limit=0))
    return built.system_data["table"]


def test_a_second_table_finds_its_dates_converted_and_equal():
    texts = ["20260105", "2026-01-06", " 2026-01-07 "]
    first = _table(texts)
    assert {t for t in texts} <= set(shared_memo("date"))  # remembered beyond the first table
    assert AT in shared_memo("datetime")
    assert _table(texts) == first == [{"day": to_date(t), "at": to_datetime(AT)} for t in texts]
    assert first[0] == {"day": "2026-01-05", "at": "2026-01-06T08:00:00.000Z"}


def test_the_memo_stays_bounded_and_correct_past_its_size():
    base = dt.date(2000, 1, 1)
    texts = [(base + dt.timedelta(days=i)).isoformat() for i in range(MEMO_SIZE + 500)]
    table = _table(texts)
    assert [r["day"] for r in table] == texts
    assert len(shared_memo("date")) <= MEMO_SIZE and len(shared_memo("datetime")) <= MEMO_SIZE
    assert [r["day"] for r in _table(texts[:10])] == texts[:10]


def test_an_unconvertible_text_is_never_remembered_and_still_warns():
    rows = [{"day": "not a date", "at": None}]
    built = build_extraction(Extraction(rows=rows, headers=HEADERS, description="d"), BuildSettings())
    assert built.system_data["table"] == [{"day": "not a date", "at": None}]
    assert "not a date" not in shared_memo("date")
    assert any("day" in w for w in built.warnings)
