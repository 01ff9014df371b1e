"""The dataset view's reads (issue 36.2): pages of a whole dataset, its chart, typed errors, acp-data only.

``DatasetView`` (view/pages.py) is what the app-only tools acp_dataset_page and acp_dataset_summary answer
and what the local page calls directly; these tests drive it in-process over a real DatasetStore and
TableCache (no server), against the order computed by hand.
"""

from __future__ import annotations

import csv
import random

import pytest
from analytics_acp.errors import InvalidArguments, TableNotFound
from analytics_acp_bridge.query.cache import TableCache
from analytics_acp_bridge.store.datasets import DatasetStore
from analytics_acp_bridge.view.pages import DatasetView

HEADERS = [{"name": "day", "type": "date"}, {"name": "chan", "type": "string"}, {"name": "n", "type": "integer"},
           {"name": "v", "type": "number"}, {"name": "ok", "type": "boolean"}]
N = 311


def _rows():
    rng = random.Random(36)
    return [{"day": f"2026-01-{1 + i % 28:02d}" if i % 17 else None, "chan": rng.choice(["Organic", "Paid", "Email", None]),
             "n": rng.randint(0, 9) if i % 13 else None, "v": round(rng.random() * 10, 2), "ok": i % 2 == 0}
            for i in range(N)]


ROWS = _rows()


@pytest.fixture(scope="module")
def view(tmp_path_factory):
    store = DatasetStore(tmp_path_factory.mktemp("proj"))
    store.write_dataset("sales", HEADERS, ROWS, {"origin": "query", "title": "Sales"})
    return DatasetView(store, TableCache())


def expected(column=None, desc=False, text=None):
    """The rows in the view's order, computed by hand: NULLs first, ties by position; descending is the reverse."""
    index = list(range(N))
    if text:
        def matches(row):
            if any(row[c] is not None and text.lower() in str(row[c]).lower() for c in ("day", "chan")):
                return True
            try:
                return any(row[c] == float(text) for c in ("n", "v") if row[c] is not None)
            except ValueError:
                return False
        index = [i for i in index if matches(ROWS[i])]
    if column:
        index.sort(key=lambda i: (ROWS[i][column] is not None, ROWS[i][column] or 0, i))
        if desc:
            index.reverse()
    return [[ROWS[i][h["name"]] for h in HEADERS] for i in index]


@pytest.mark.parametrize("column", [None, "day", "chan", "n", "v"])
@pytest.mark.parametrize("desc", [False, True])
@pytest.mark.parametrize("text", [None, "paid", "5"])
def test_any_window_of_any_order_is_the_right_rows(view, column, desc, text):
    sort = {"column": column, "desc": desc} if column else None
    want = expected(column, desc, text)
    for limit in (7, 50):
        for offset in sorted({0, 1, len(want) // 2, max(len(want) - limit, 0), len(want) - 1}):
            page = view.page("sales", offset=offset, limit=limit, sort=sort, filter=text)
            assert (page["matched_rows"], page["total_rows"], page["offset"]) == (len(want), N, offset)
            assert page["rows"] == want[offset:offset + limit], (limit, offset)


@pytest.mark.parametrize("column,desc", [(None, False), ("chan", False), ("n", True), ("v", False)])
def test_cursors_walk_the_whole_dataset_forward_and_back(view, column, desc):
    sort = {"column": column, "desc": desc} if column else None
    want = expected(column, desc)
    page = view.page("sales", limit=40, sort=sort)
    seen = list(page["rows"])
    while page["next_cursor"]:
        page = view.page("sales", cursor=page["next_cursor"], limit=40)
        assert page["offset"] == len(seen) and page["sort"] == (sort if column else None)
        seen += page["rows"]
    assert seen == want and page["offset"] + len(page["rows"]) == N
    while page["prev_cursor"]:
        page = view.page("sales", cursor=page["prev_cursor"], limit=40)
        assert page["rows"] == want[page["offset"]:page["offset"] + 40]
    assert page["offset"] == 0


def test_rows_are_typed_and_numbers_read_as_people_expect(tmp_path):
    store = DatasetStore(tmp_path)
    headers = [{"name": "day", "type": "date"}, {"name": "total", "type": "number"}, {"name": "paid", "type": "boolean"},
               {"name": "qty", "type": "integer"}]
    store.write_dataset("noisy", headers, [{"day": "2026-01-02", "total": 4857.99999999996, "paid": True, "qty": 3}],
                        {"origin": "query"})
    page = DatasetView(store, TableCache()).page("noisy")
    assert page["rows"] == [["2026-01-02", 4858.0, True, 3]] and page["columns"] == headers
    with (tmp_path / "acp-data" / "noisy.csv").open(encoding="utf-8") as handle:
        assert next(csv.DictReader(handle))["total"] == "4857.99999999996"  # the dataset keeps every bit


def test_a_sort_builds_one_index_in_the_cached_table(tmp_path):
    store = DatasetStore(tmp_path)
    store.write_dataset("sales", HEADERS, ROWS, {"origin": "query"})
    view = DatasetView(store, TableCache())
    view.page("sales", sort={"column": "v"})
    view.page("sales", sort={"column": "v", "desc": True}, offset=100)
    indexes = dict(view.cache.indexes(store.get("sales")))
    assert indexes == {"acp_sort_1": 'CREATE INDEX "acp_sort_1" ON "sales" ("v")'}
    for column in ("day", "chan", "n", "ok"):  # at most four per table; past them a page sorts without one
        assert view.page("sales", sort={"column": column}, limit=3)["rows"] == expected(column)[:3]
    assert sorted(dict(view.cache.indexes(store.get("sales")))) == [f"acp_sort_{i}" for i in range(1, 5)]


@pytest.mark.parametrize("arguments,message", [
    ({"offset": -1}, "offset must be an integer >= 0"),
    ({"offset": True}, "offset must be an integer >= 0"),
    ({"offset": "3"}, "offset must be an integer >= 0"),
    ({"offset": N}, f"offset {N} is past the last row: the dataset has {N} rows"),
    ({"limit": 0}, "limit must be an integer from 1 to 500"),
    ({"limit": 501}, "limit must be an integer from 1 to 500"),
    ({"limit": 2.5}, "limit must be an integer from 1 to 500"),
    ({"sort": {"column": "nope"}}, "has no column 'nope' to sort by. Its columns: day, chan, n, v, ok"),
    ({"sort": {"column": "v", "desc": "yes"}}, 'sort must be {"column"'),
    ({"sort": 3}, 'sort must be {"column"'),
    ({"filter": "x" * 201}, "filter must be text of at most 200 characters"),
    ({"cursor": "not-a-cursor"}, "cursor is not one the bridge gave"),
    ({"cursor": 12}, "cursor is not one the bridge gave"),
    ({"offset": 0, "cursor": "x"}, "Pass offset or cursor, not both"),
])
def test_bad_arguments_are_typed_errors(view, arguments, message):
    with pytest.raises(InvalidArguments) as raised:
        view.page("sales", **arguments)
    assert message in raised.value.message
    assert raised.value.payload()["name"] == "ACP_INVALID_ARGUMENTS"


def test_a_cursor_of_another_sort_is_refused(view):
    cursor = view.page("sales", sort={"column": "v"}, limit=5)["next_cursor"]
    with pytest.raises(InvalidArguments, match="cursor belongs to another sort or filter"):
        view.page("sales", cursor=cursor, sort={"column": "n"})
    with pytest.raises(InvalidArguments, match="cursor belongs to another sort or filter"):
        view.page("sales", cursor=cursor, filter="paid")


@pytest.mark.parametrize("dataset_id", ["nope", "", None, 7, "../sales", "acp-data/sales.csv", "/etc/passwd",
                                        "sales/../../etc/passwd", "outside"])
def test_only_datasets_of_acp_data_by_id(tmp_path, dataset_id):
    store = DatasetStore(tmp_path / "proj")
    store.write_dataset("sales", HEADERS, ROWS[:3], {"origin": "query"})
    outside = tmp_path / "outside.csv"
    outside.write_text("secret\nsk-outside-value\n", encoding="utf-8")
    (store.dir / "outside.csv").symlink_to(outside)  # a link out of acp-data is no dataset
    view = DatasetView(store, TableCache())
    for call in (lambda: view.page(dataset_id), lambda: view.summary(dataset_id)):
        with pytest.raises(TableNotFound) as raised:
            call()
        assert raised.value.payload()["name"] == "ACP_TABLE_NOT_FOUND" and "sk-outside-value" not in raised.value.message


def test_summary_card_and_chart_kinds(tmp_path):
    store = DatasetStore(tmp_path)
    days = [{"fecha": f"2026-{1 + i // 28:02d}-{1 + i % 28:02d}", "canal": "ab"[i % 2], "pedidos": i} for i in range(84)]
    store.write_dataset("ventas", [{"name": "fecha", "type": "date"}, {"name": "canal", "type": "string"},
                                   {"name": "pedidos", "type": "integer"}], days, {"origin": "query", "title": "Ventas"})
    forecast = [{"fecha": f"2026-04-{1 + i:02d}", "forecast": 80.0 + i, "lower": 70.0 + i, "upper": 90.0 + i} for i in range(14)]
    store.write_dataset("prevision", [{"name": "fecha", "type": "date"}] + [{"name": k, "type": "number"}
                                                                              for k in ("forecast", "lower", "upper")],
                        forecast, {"origin": "acp", "arguments": {"table_ref": "ventas", "time_column": "fecha",
                                                                  "value_column": "pedidos"}})
    pages = [{"page": f"/p{i % 15}", "clicks": i, "order_id": i} for i in range(300)]
    store.write_dataset("pages", [{"name": "page", "type": "string"}, {"name": "clicks", "type": "integer"},
                                  {"name": "order_id", "type": "integer"}], pages, {"origin": "query"})
    long = [{"day": f"{2000 + i // 365}-{1 + (i // 28) % 12:02d}-{1 + i % 28:02d}", "n": 1} for i in range(900)]
    store.write_dataset("long", [{"name": "day", "type": "date"}, {"name": "n", "type": "integer"}], long, {"origin": "query"})
    store.write_dataset("ids", [{"name": "id", "type": "integer"}], [{"id": i} for i in range(5)], {"origin": "query"})
    view = DatasetView(store, TableCache())

    card = view.summary("ventas")
    assert (card["dataset_id"], card["title"], card["row_count"], card["file"]) == ("ventas", "Ventas", 84, "acp-data/ventas.csv")
    line = card["chart"]
    assert (line["kind"], line["x"], line["y"], line["grouped"]) == ("line", "fecha", "pedidos", "day")
    assert len(line["points"]) == 84 and line["points"][0] == ["2026-01-01", 0]

    band = view.summary("prevision")["chart"]
    assert band["kind"] == "forecast" and band["history_dataset"] == "ventas" and len(band["forecast"]) == 14
    assert band["forecast"][0] == ["2026-04-01", 80.0, 70.0, 90.0] and len(band["history"]) == 84

    bars = view.summary("pages")["chart"]
    assert (bars["kind"], bars["x"], bars["y"]) == ("bars", "page", "clicks")  # order_id is an id, not a measure
    assert len(bars["bars"]) == 10 and bars["bars"][0] == ["/p14", sum(range(14, 300, 15))]

    assert view.summary("long")["chart"]["grouped"] == "month"  # 900 days: past 500 points
    assert view.summary("ids")["chart"] is None
    with pytest.raises(InvalidArguments, match="has no number column 'canal'"):
        view.summary("ventas", y="canal")


def test_a_forecast_whose_history_is_out_of_reach_has_no_history(tmp_path):
    store = DatasetStore(tmp_path)
    rows = [{"fecha": f"2026-04-{1 + i:02d}", "forecast": 1.0, "lower": 0.0, "upper": 2.0} for i in range(3)]
    store.write_dataset("prevision", [{"name": "fecha", "type": "date"}] + [{"name": k, "type": "number"}
                                                                              for k in ("forecast", "lower", "upper")],
                        rows, {"origin": "acp", "arguments": {"table_ref": "../../etc/passwd", "time_column": "fecha",
                                                              "value_column": "x"}})
    chart = DatasetView(store, TableCache()).summary("prevision")["chart"]
    assert chart["kind"] == "forecast" and chart["history"] == [] and chart["history_dataset"] is None
