"""Issues 23.5 and 36.5: floats in model_response read as the source meant them (12790.11, not
12790.109999999999; 4858, not 4857.99999999996), while system_data, the host's table, keeps the exact
double (8.5, 8.6 unchanged)."""

import json
import sys
from pathlib import Path

import anyio
import mcp_types
import orjson
from analytics_acp import Extraction, ToolSpec
from analytics_acp.calls import ConnectorRuntime
from analytics_acp.context import ClientInfo
from analytics_acp.effective import SessionConfig
from analytics_acp.envelope import CallRecord, success
from analytics_acp.plugins import load_connector
from analytics_acp.results.numbers import readable, readable_float
from analytics_acp.server_stdio import encode

sys.path.insert(0, str(Path(__file__).parent / "core_fixtures"))
import mini_connector  # noqa: E402

NOISY = 12790.109999999999  # a SUM of prices as the double comes back from a database
SUM_NOISE = 4857.99999999996  # noise past the 15th digit's reach: a longer sum (issue 36.5)
ROWS = [
    {"day": "2026-01-01", "importe": NOISY, "iva": 3494.310000000001, "pedidos": 12, "ratio": 0.25, "big": 2**60},
    {"day": "2026-01-02", "importe": 0.30000000000000004, "iva": 1e-20, "pedidos": 7, "ratio": 2.5, "big": -1},
    {"day": "2026-01-03", "importe": SUM_NOISE, "iva": 3.14159265358979, "pedidos": 1, "ratio": 2 / 3, "big": 0},
]
FULL = ClientInfo(acp=True, version="1.0", stores_system_data=True, multi_table=True, host_tables=True)


def test_floats_get_their_shortest_15_digit_form():
    assert readable_float(NOISY) == 12790.11 and repr(readable_float(NOISY)) == "12790.11"
    assert repr(readable_float(3494.310000000001)) == "3494.31"
    assert repr(readable_float(0.30000000000000004)) == "0.3"
    for short in (0.1, 2.5, 1e-20, 100.0, -0.0, 1234.5678):
        assert readable_float(short) is short  # already short: the very same value
    assert readable_float(float("inf")) == float("inf")


def test_a_computations_noise_reads_as_the_number_people_expect():
    # Issue 36.5: a run of 0s or 9s and a digit or two at the end of 13-15 digits is noise.
    assert readable_float(SUM_NOISE) == 4858 and repr(readable_float(-SUM_NOISE)) == "-4858.0"
    assert repr(readable_float(100.00000000001)) == "100.0"
    assert repr(readable_float(0.1 + 0.7)) == "0.8"  # 0.7999999999999999
    assert repr(readable_float(0.99999999999997)) == "1.0"  # a run of 9s from the first digit
    assert repr(readable_float(1234567.0000001)) == "1234567.0"
    assert repr(readable_float(12345678.9899999)) == "12345678.99"
    assert repr(readable_float(4857.9999999999)) == "4858.0"  # the run reaches the last digit


def test_legitimately_precise_values_are_not_mangled():
    import math

    # Real precision has no noise run: at most the 15-digit rounding of step 1, never fewer digits.
    for value, shown in [(math.pi, "3.14159265358979"), (0.123456789012345, "0.123456789012345"),
                         (2 / 3, "0.666666666666667"), (math.sqrt(2), "1.4142135623731"),
                         (0.1234500000678, "0.1234500000678"),  # five 0s but three digits after them
                         (1.00000000002, "1.00000000002"),  # twelve digits: too short to carry noise
                         (6.02214076e23, "6.02214076e+23"), (1.602176634e-19, "1.602176634e-19"),
                         (5e-324, "5e-324"), (1767225600.25, "1767225600.25")]:
        assert repr(readable_float(value)) == shown, value
    # The largest double is not rounded up to infinity (its 15-digit form overflows).
    assert readable_float(1.7976931348623157e308) == 1.7976931348623157e308
    assert readable_float(-1.7976931348623157e308) == -1.7976931348623157e308


def test_readable_copies_only_what_changes_and_never_mutates():
    rows = json.loads(json.dumps(ROWS))
    out = readable({"rows": rows, "total_rows": 2})
    assert out["rows"][0]["importe"] == 12790.11 and out["rows"][0]["pedidos"] == 12 and out["rows"][0]["big"] == 2**60
    assert rows == ROWS and rows[0]["importe"] == NOISY  # the input (possibly system_data's rows) is untouched
    clean = {"rows": [{"n": 1, "ratio": 0.5}], "notice": "x"}
    assert readable(clean) is clean


def test_envelope_rounds_model_response_only():
    record = CallRecord(connector_id="mini", tool="extract", kind="extraction", arguments={}, row_limit=25, cost_limit_usd=0)
    shared = [dict(r) for r in ROWS]  # the same row objects in both parts, as the result builder may do
    result = success(record, {"rows": shared}, {"format": "inline", "table": shared})
    text = result["content"][0]["text"]
    assert '"importe":12790.11,' in text and '"iva":3494.31,' in text and '"importe":0.3,' in text
    assert "12790.109999999999" not in text and '"ratio":0.25' in text and f'"big":{2**60}' in text
    assert '"importe":4858.0,' in text and "4857.99" not in text and '"iva":3.14159265358979,' in text
    wire = orjson.loads(orjson.dumps(result))
    assert wire["_meta"]["acp"]["system_data"]["table"][0]["importe"] == NOISY
    assert shared[0]["importe"] == NOISY and shared[2]["importe"] == SUM_NOISE


def test_served_result_text_is_readable_and_host_table_exact():
    loaded = load_connector(mini_connector, extensions=False)
    loaded.tools["prices"] = ToolSpec(name="prices", description="Rows with float noise.", kind="extraction",
                                      run=lambda args, ctx: Extraction(rows=[dict(r) for r in ROWS], description="Prices."))
    runtime = ConnectorRuntime(loaded)
    meta = {"credentials": {"type": "api_key", "api_key": "sk-test-SECRET-123456"}, "autocontext_delivered": True}
    result = anyio.run(lambda: runtime.call("prices", {"resource_id": "acc1"}, meta, SessionConfig(), FULL))
    assert not result["isError"], result["content"][0]["text"]
    model = json.loads(result["content"][0]["text"])
    assert [r["importe"] for r in model["rows"]] == [12790.11, 0.3, 4858] and model["rows"][0]["iva"] == 3494.31
    assert "12790.109999999999" not in result["content"][0]["text"] and "4857.99" not in result["content"][0]["text"]
    # What a host stores (8.5): the line the server writes, parsed back, holds the exact doubles, every bit.
    line = encode(mcp_types.JSONRPCResponse(jsonrpc="2.0", id=1, result=result), None)
    table = json.loads(line)["result"]["_meta"]["acp"]["system_data"]["table"]
    assert table[0]["importe"] == NOISY and table[0]["iva"] == 3494.310000000001 and table[1]["importe"] == 0.30000000000000004
    assert repr(table[0]["importe"]) == "12790.109999999999" and repr(table[2]["importe"]) == "4857.99999999996"
    assert orjson.dumps(table) == orjson.dumps(ROWS)  # byte-identical to the rows the tool returned


def _two_steps(value: float) -> float:
    """The module docstring's rule applied to every value, without the short-repr shortcut."""
    from analytics_acp.results.numbers import _kept_digits

    if value != value or value in (0.0, float("inf"), float("-inf")):
        return value
    short = float(f"{value:.{_kept_digits(value)}g}")
    return value if short == value or short in (float("inf"), float("-inf")) else short


def test_short_floats_skip_the_formatting_and_read_the_same():
    # Issue 39.1: a float whose shortest form has fewer than 13 digits returns at once (case 1's hot path);
    # around that length, and for long and noisy values, the answer is the two steps' answer.
    import random

    rng = random.Random(39)
    values = [1.25, -0.5, 5e-324, 1e22, 123456789012.5, 12345678901.25, 1234567890123.5, 0.1 + 0.2, NOISY, SUM_NOISE]
    values += [round(rng.uniform(-1e9, 1e9), rng.randint(0, 6)) for _ in range(2000)]
    values += [rng.uniform(-1, 1) * 10 ** rng.randint(-20, 20) for _ in range(2000)]
    values += [sum(rng.choice((0.1, 0.2, 19.99, 1.25)) for _ in range(rng.randint(2, 300))) for _ in range(2000)]
    for value in values:
        got, want = readable_float(value), _two_steps(value)
        assert repr(got) == repr(want), value
        if len(repr(value)) <= 13:
            assert got is value


def test_every_class_of_cell_reads_as_before_the_class_fast_path():
    """The per-cell fast path (exact str/int/bool/None returned untouched, a plain float straight to readable_float)
    changes nothing: subclasses of float, containers nested in cells and values of other classes are handled as
    readable() always did."""

    class Price(float):
        pass

    class Label(str):
        pass

    rows = [{"a": Price(NOISY), "b": Label("x"), "c": [0.30000000000000004, {"d": SUM_NOISE}], "e": True,
             "f": None, "g": 2**70, "h": (0.30000000000000004,), "i": NOISY}]
    out = readable(rows)
    assert out[0]["a"] == 12790.11 and out[0]["i"] == 12790.11
    assert out[0]["c"] == [0.3, {"d": 4858}]
    assert out[0]["b"] is rows[0]["b"] and out[0]["e"] is True and out[0]["f"] is None and out[0]["g"] == 2**70
    assert out[0]["h"] is rows[0]["h"]  # a tuple is no JSON container here: left as it was
    assert rows[0]["i"] == NOISY and rows[0]["c"][0] == 0.30000000000000004  # the input is never modified
