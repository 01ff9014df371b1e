"""Dataset CSV rows (16.6): the column-wise writer writes exactly what the csv module writes."""

import csv
import io
from collections import OrderedDict
from types import MappingProxyType

import pytest
from analytics_acp_bridge.store import csvtypes, csvwrite


def _reference(names, rows):
    # The csv module row by row, bools/objects/arrays as 16.6 cell text, missing keys as null.
    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(names)
    for row in rows:
        writer.writerow([csvtypes.cell(v) if type(v) in csvtypes.SPECIAL_TYPES else v for v in map(row.get, names)])
    return out.getvalue()


def _written(names, rows):
    out = io.StringIO(newline="")
    count = csvwrite.write_rows(out, names, iter(rows))
    assert count == len(rows)
    return out.getvalue()


class Text(str):
    """A str subclass: not one of the plain types, so its batch goes through the csv writer."""


PLAIN = [{"i": i, "s": f"v{i}", "f": i / 8, "n": None if i % 3 else i} for i in range(40)]
CASES = {
    "plain": PLAIN,
    "quoting": [{"i": 1, "s": 'say "hi", bye', "f": 1.5, "n": "two\nlines"}, {"i": 2, "s": "cr\r", "f": 0.0, "n": ""}],
    "special": [{"i": True, "s": {"a": ["ñ", 1]}, "f": [1, 2], "n": (3,)}, {"i": False, "s": "x", "f": 2.5, "n": None}],
    "numbers": [{"i": 2**64 + 1, "s": -(2**70), "f": float("nan"), "n": float("inf")},
                {"i": -0.0, "s": 1e16, "f": 1e-05, "n": 123456789.125}],
    "mixed_types": [{"i": 1, "s": "a", "f": 2, "n": None}, {"i": 1.5, "s": 3, "f": None, "n": True}],
    "missing_keys": [{"i": 1}, {"s": "only s"}, {}],
    "str_subclass": [{"i": 1, "s": Text("sub"), "f": 1.0, "n": None}],
    "all_null": [{"i": None, "s": None, "f": None, "n": None}] * 3,
    "non_ascii": [{"i": 1, "s": "añoño €", "f": -2.75, "n": "日本"}],
    # Whole-column number texts from orjson (issue 19.2): repr's text wherever orjson's differs.
    "small_floats": [{"i": 1e-05, "s": -3.7e-06, "f": 1.1e-09, "n": 0.0001}, {"i": 1.5e-05, "s": 2.0, "f": 0.0, "n": -0.0}],
    "float_edges": [{"i": 1e16, "s": 1.2345678901234568e+17, "f": 12.00000001, "n": 5e-324},
                    {"i": 1e22, "s": -1.5e300, "f": 0.1, "n": 100.0}],
    "ints_then_other": [{"i": 1, "s": 2, "f": 3.5, "n": 4}, {"i": True, "s": None, "f": 2**65, "n": 4.0}],
    "text_then_other": [{"i": "a", "s": "b", "f": "c", "n": "d"}, {"i": None, "s": 1, "f": True, "n": "e,f"}],
}


@pytest.mark.parametrize("batch", [1, 3, csvwrite.BATCH_ROWS])
@pytest.mark.parametrize("case", sorted(CASES))
def test_bridge_csvwrite_matches_the_csv_module(case, batch, monkeypatch):
    monkeypatch.setattr(csvwrite, "BATCH_ROWS", batch)
    names = ["i", "s", "f", "n"]
    rows = CASES[case]
    assert _written(names, rows) == _reference(names, rows)


def test_bridge_csvwrite_batches_of_different_kinds_in_one_file(monkeypatch):
    monkeypatch.setattr(csvwrite, "BATCH_ROWS", 4)
    names = ["i", "s", "f", "n"]
    rows = [row for case in sorted(CASES) for row in CASES[case]]
    assert _written(names, rows) == _reference(names, rows)


@pytest.mark.parametrize("values", [[None, "", "x", 1], ["", ""], [1, 2]])
def test_bridge_csvwrite_one_column_keeps_lone_empty_cells_quoted(values):
    rows = [{"a": v} for v in values]
    text = _written(["a"], rows)
    assert text == _reference(["a"], rows)
    if "" in values:
        assert '\r\n""\r\n' in text  # an empty line would read back as no row at all


def test_bridge_csvwrite_mappings_that_are_not_dicts():
    rows = [MappingProxyType({"a": 1, "b": "x"}), OrderedDict(a=True, b=None)]
    assert _written(["a", "b"], rows) == _reference(["a", "b"], rows)


def test_bridge_csvwrite_no_columns_and_no_rows():
    assert _written([], [{"a": 1}, {"a": 2}]) == _reference([], [{"a": 1}, {"a": 2}])
    assert _written(["a", "b"], []) == "a,b\r\n"
