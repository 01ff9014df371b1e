"""Type inference of hand-dropped CSVs (16.6) is the core's one inference rule (issue 14.2).

The same columns go through both paths: as a CSV dropped into acp-data (the bridge infers the
meta and reads the cells back) and as values of columns marked ``infer`` in the core's result
builder (a SQLite result): same types, same values.
"""

import csv
import random

import pytest
from analytics_acp.results import build_table
from analytics_acp.results.inference import infer_type, text_kind
from analytics_acp_bridge.query.sql import QueryResult
from analytics_acp_bridge.store import csvtypes
from analytics_acp_bridge.store.datasets import DatasetStore

SAMPLES = ["0", "7", "-3", "+12", "007", "1.5", "-0.25", "1e3", ".5", "01.5", "true", "FALSE", "yes", "n", "2026-07-01",
           "2026-13-01", "2026-07-01T10:00:00", "2026-07-01 10:00:00Z", "abc", "", "nan", "inf", "1,5", "٣"]

# name -> cells; every 8.6 mix and the 16.6 leading-zero rule.
COLUMNS = {
    "int": ["1", "2", "", "-3"],
    "num": ["1", "2.5", "3", ""],
    "flag": ["true", "False", "yes", "N"],
    "day": ["2026-01-01", "2026-01-02", "", "2026-01-03"],
    "stamp": ["2026-01-01", "2026-01-02 10:15:00", "2026-01-03T08:00:00Z", ""],
    "zip": ["08001", "28013", "41001", ""],
    "mixed": ["1", "abc", "2026-01-01", "true"],
    "text": ["a", "b", "c", "d"],
}
EXPECTED = {"int": "integer", "num": "number", "flag": "boolean", "day": "date", "stamp": "datetime",
            "zip": "string", "mixed": "string", "text": "string"}


def test_bridge_csvtypes_batched_inference_matches_the_rule():
    rng = random.Random(11)
    for _ in range(3000):
        values = [rng.choice(SAMPLES) for _ in range(rng.randint(0, 6))]
        one_by_one, batched = csvtypes.TypeGuess(), csvtypes.TypeGuess()
        for v in values:
            one_by_one.add(v)
        cut = rng.randint(0, len(values))
        batched.add_many(values[:cut])
        batched.add_many(values[cut:])
        assert one_by_one.result() == batched.result() == infer_type({k for k in map(text_kind, values) if k}), values


def test_bridge_csvtypes_leading_zeros_stay_text_and_date_plus_datetime_is_datetime():
    for values, expected in ((["08001", "28013"], "string"), (["0", "10"], "integer"), (["0.5", "00.5"], "string"),
                             (["1", "2.5"], "number"), ([".5", "-.5", "5."], "number"), (["1_000", "2"], "string"),
                             (["1e999"], "string"), (["2026-07-01", "2026-07-01T00:00:00"], "datetime"),
                             (["2026-07-01 10:00", "2026-07-02"], "datetime"), (["yes", "no", "TRUE"], "boolean")):
        guess = csvtypes.TypeGuess()
        guess.add_many(values)
        assert guess.result() == expected, values


@pytest.fixture
def dropped(tmp_path):
    (tmp_path / "acp-data").mkdir()
    with open(tmp_path / "acp-data" / "dropped.csv", "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(list(COLUMNS))
        writer.writerows(zip(*COLUMNS.values(), strict=True))
    return DatasetStore(tmp_path)


def test_same_columns_same_types_and_values_through_the_bridge_and_the_core(dropped):
    dataset = dropped.get("dropped")
    bridge_types = {h["name"]: h["type"] for h in dataset.meta["headers"]}
    bridge_rows = list(dropped.iter_records(dataset))
    # An empty CSV cell is a null (16.6), so the core gets None where the CSV has nothing.
    values = [[cell or None for cell in row] for row in zip(*COLUMNS.values(), strict=True)]
    core = build_table(values, headers=[{"name": n, "type": "infer"} for n in COLUMNS],
                       columns=list(COLUMNS), inline_max_bytes=1 << 20)
    core_types = {h.name: h.type for h in core.headers}
    assert bridge_types == core_types == EXPECTED
    assert bridge_rows == core.table
    assert core.table[1] == {"int": 2, "num": 2.5, "flag": False, "day": "2026-01-02", "stamp": "2026-01-02T10:15:00.000Z",
                             "zip": "28013", "mixed": "abc", "text": "b"}


def test_acp_query_results_mix_date_and_datetime_into_datetime():
    result = QueryResult(columns=["t", "n"], rows=iter([("2026-01-01", 1), ("2026-01-02 10:15:00", 2.5)]), datasets=[])
    list(result.records())
    assert result.headers() == [{"name": "t", "type": "datetime"}, {"name": "n", "type": "number"}]
