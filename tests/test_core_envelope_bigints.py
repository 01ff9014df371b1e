"""The model's text (content[0].text, 8.3) with integers beyond 64 bits: valid JSON with the exact
values, as the table file keeps them (orjson refuses such ints; the envelope falls back)."""

import json

from analytics_acp.envelope import CallRecord, success


def _record() -> CallRecord:
    return CallRecord(connector_id="x", tool="t", kind="extraction", arguments={"big": 2**70}, row_limit=5,
                      cost_limit_usd=0)


def test_model_response_with_an_int_beyond_64_bits_is_exact_json():
    response = {"rows": [{"id": 2**70 + 1, "x": float("nan"), "n": 3}], "totals": {1: 2**64}}
    result = success(_record(), response)
    text = result["content"][0]["text"]
    assert json.loads(text) == {"rows": [{"id": 2**70 + 1, "x": None, "n": 3}], "totals": {"1": 2**64}}
    assert "NaN" not in text


def test_ordinary_responses_keep_the_orjson_text():
    result = success(_record(), {"rows": [{"n": 1, "s": "é"}]})
    assert result["content"][0]["text"] == '{"rows":[{"n":1,"s":"é"}]}'
