"""Columns marked ``"type": "infer"`` (8.6; issue 14.1/14.2): typed over every value, text read by the 16.6 rule.

The rule itself (inference.py) is the one the ACP Bridge uses for hand-dropped CSVs; the
bridge's own test feeds the same columns through both paths (tools/bridge/tests).
"""

from __future__ import annotations

import random

import pytest
from analytics_acp.results import build_table
from analytics_acp.results.inference import TEXT_CHECKS, TextTypeGuess, infer_type, text_kind
from analytics_acp.tablefile import read_table_uri

SAMPLES = ["0", "7", "-3", "+12", "007", "1.5", "-0.25", "1e3", ".5", "-.5", "5.", "1_000", "1e999", "5 ", "01.5", "true",
           "FALSE", "yes", "N", "2026-07-01", "2026-13-01", "2026-07-01T10:00:00", "2026-07-01 10:00:00Z", "abc", "", "nan",
           "inf", "1,5", "٣"]


def build(values, hint=None, inline=1 << 20, tmp_path=None, binary=None):
    header = {"name": "v", "type": "infer", **({"hint": hint} if hint else {}), **({"binary": binary} if binary else {})}
    t = build_table(([v] for v in values), headers=[header], columns=["v"], inline_max_bytes=inline, tmp_dir=tmp_path)
    rows = t.table if t.table is not None else read_table_uri(t.system_data()["table_uri"])
    return t.headers[0].type, [r["v"] for r in rows]


def test_batched_text_inference_equals_the_rule_cell_by_cell():
    rng = random.Random(11)
    for _ in range(3000):
        values = [rng.choice(SAMPLES) for _ in range(rng.randint(0, 6))]
        expected = infer_type({k for k in map(text_kind, values) if k})
        one, batched = TextTypeGuess(), TextTypeGuess()
        for v in values:
            one.add(v)
        cut = rng.randint(0, len(values))
        batched.add_many(values[:cut])
        batched.add_many(values[cut:])
        assert one.result() == batched.result() == expected, values


# Issue 38.9, decided by 8.6/16.6: a decimal as SQL, spreadsheets and CSV readers write it is a number; the only
# text that looks numeric and stays text is what reading as a number would change or lose.
NUMBER_TEXTS = [".5", "-.5", "+.5", "5.", "-5.", "0.", "0.5", "-0.0", "1e3", "1E+5", "0.5e-3", "0e1", "-2.5E-3"]
TEXT_NOT_NUMBERS = [".", "-.", "+", "-", ".e5", "5e", "e5", "1e999", "-1e999", "1_000", "1_0.5", "5 ", " 5", "5\n",
                    "\u0661\u0662", "\u0661.5", "0x10", "1.5.2", "1e5.5", "\u22125", "01.5", "00.5", "-01.5", "007e1",
                    "nan", "-inf", "Infinity", "1,5"]


def test_number_texts():
    assert {t: text_kind(t) for t in NUMBER_TEXTS} == dict.fromkeys(NUMBER_TEXTS, "number")
    assert {t: text_kind(t) for t in TEXT_NOT_NUMBERS} == dict.fromkeys(TEXT_NOT_NUMBERS, "string")
    assert build([".5", "-.5", "2"]) == ("number", [0.5, -0.5, 2])
    assert build(["1_000", "5"]) == ("string", ["1_000", "5"])
    assert build(["1e999", "1"]) == ("string", ["1e999", "1"])  # a number would have become null


def test_boolean_words_in_any_case():
    """16.6's booleans: true/false, t/f, yes/no, y/n in any case (0/1 are integers)."""
    words = {"true": True, "t": True, "yes": True, "y": True, "false": False, "f": False, "no": False, "n": False}
    for word, value in words.items():
        for text in (word, word.upper(), word.capitalize()):
            assert text_kind(text) == "boolean", text
            assert build([text, "true"]) == ("boolean", [value, True]), text
    assert [text_kind(t) for t in ("1", "0", "si", "on", "off")] == ["integer", "integer", "string", "string", "string"]


def test_dates_and_datetimes_must_be_real_and_iso():
    """Mutation survivors (issue 38.9): a date-shaped text that is no calendar day or time stays text."""
    texts = {"2026-02-28": "date", "2026-13-01": "string", "2026-02-30": "string", "2026/07/01": "string",
             "2026-07-01T10:00:00": "datetime", "2026-07-01 10:00:00Z": "datetime", "2026-07-01T10:00:00+02:00": "datetime",
             "2026-07-01T25:00:00": "string", "2026-07-01T10:61": "string", "2026-07-01X10:00:00": "string",
             "2026-07-01t10:00:00": "string", "2026-13-01T10:00:00": "string", "2026-07-01T10": "string"}
    assert {t: text_kind(t) for t in texts} == texts


def test_text_kinds():
    assert [text_kind(t) for t in ("12", "007", "1.5", "01.5", "yes", "F", "2026-07-01", "2026-07-01 10:00", "n/a", "")] == [
        "integer", "string", "number", "string", "boolean", "boolean", "date", "datetime", "string", None]
    assert list(TEXT_CHECKS) == ["integer", "number", "boolean", "date", "datetime"]


CASES = [
    ([1, 2.5], None, "number", [1, 2.5]),
    ([1, "abc"], None, "string", ["1", "abc"]),
    ([5, "n/a", 7], "integer", "string", ["5", "n/a", "7"]),
    (["2026-01-01", "2026-01-02 10:15:00"], None, "datetime", ["2026-01-01T00:00:00.000Z", "2026-01-02T10:15:00.000Z"]),
    (["2026-01-01", None, "2026-01-02"], "string", "date", ["2026-01-01", None, "2026-01-02"]),
    (["12", "", "13"], None, "integer", [12, None, 13]),
    (["08001", "28013"], None, "string", ["08001", "28013"]),
    (["yes", "No"], None, "boolean", [True, False]),
    ([1, 0, 1], "boolean", "boolean", [True, False, True]),
    ([1, 0, 2], "boolean", "integer", [1, 0, 2]),
    ([12, 13], "number", "number", [12, 13]),
    (["2026-01-01"], "datetime", "datetime", ["2026-01-01T00:00:00.000Z"]),
    (['{"a": 1}', "[1]"], "json", "json", [{"a": 1}, [1]]),
    (['{"a": 1}', "oops"], "json", "string", ['{"a": 1}', "oops"]),
    ([None, None], "integer", "integer", [None, None]),
    ([None, None], "date", "date", [None, None]),  # an all-null column keeps its declared kind (mutation survivor)
    ([None], "datetime", "datetime", [None]),
    ([None], "number", "number", [None]),
    ([b"\x00\x01", "x"], None, "string", ["AAE=", "x"]),
]


@pytest.mark.parametrize(("values", "hint", "kind", "expected"), CASES)
def test_inferred_columns_inline_and_spilled(values, hint, kind, expected, tmp_path):
    assert build(values, hint) == (kind, expected)
    assert build(values, hint, inline=0, tmp_path=tmp_path) == (kind, expected)


def test_late_widening_in_a_spilled_table_converts_every_written_value(tmp_path):
    n = 50_000
    values = [f"2026-01-{1 + i % 28:02d}" for i in range(n)] + ["2026-02-01 12:00:00"]
    kind, out = build(values, inline=256, tmp_path=tmp_path)
    assert kind == "datetime" and len(out) == n + 1
    assert out[0] == "2026-01-01T00:00:00.000Z" and out[-1] == "2026-02-01T12:00:00.000Z"
    ints = list(range(n)) + ["x"]
    kind, out = build(ints, inline=256, tmp_path=tmp_path)
    assert kind == "string" and out[:2] == ["0", "1"] and out[-1] == "x"


def test_role_and_description_of_an_inferred_header_are_kept():
    t = build_table([("2026-01-01", 3)], headers=[{"name": "d", "type": "infer", "role": "dimension", "description": "Day"},
                                                  {"name": "n", "type": "infer", "hint": "number", "role": "metric"}],
                    columns=["d", "n"], inline_max_bytes=1 << 20)
    assert [h.to_json() for h in t.headers] == [
        {"name": "d", "type": "date", "role": "dimension", "description": "Day"},
        {"name": "n", "type": "number", "role": "metric"},
    ]


BINARY_CASES = [  # "binary": "hex": bytes become hex text, then typed as that text would be
    ([b"\x00\xff", "x"], None, "string", ["00ff", "x"]),
    (["web", b"\x0a", "app"], None, "string", ["web", "0a", "app"]),  # after text: the column is text already
    ([b"\x12\x34", b"\x56\x78"], None, "integer", [1234, 5678]),  # hex of digits reads as numbers (16.6)
    ([b"\x12\x34", None, bytearray(b"\xab")], "integer", "string", ["1234", None, "ab"]),
    ([1, b"\x01"], None, "string", ["1", "01"]),  # '01' keeps its leading zero: text
]


@pytest.mark.parametrize(("values", "hint", "kind", "expected"), BINARY_CASES)
def test_binary_hex_writes_bytes_as_hex_text_inline_and_spilled(values, hint, kind, expected, tmp_path):
    assert build(values, hint, binary="hex") == (kind, expected)
    assert build(values, hint, inline=0, tmp_path=tmp_path, binary="hex") == (kind, expected)
    as_text = [bytes(v).hex() if isinstance(v, bytes | bytearray) else v for v in values]
    assert build(as_text, hint) == (kind, expected)  # the same as hex text handed over by the tool
