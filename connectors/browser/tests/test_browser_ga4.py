"""GA4 /g/collect decoding (pure): GET hits, batched POST bodies, params, items."""

from analytics_acp_browser import ga4

URL = ("https://region1.google-analytics.com/g/collect?v=2&tid=G-ABC123&gtm=45je&_p=1700000000123&gcs=G101"
       "&gcd=13r3r3l3l5&cid=1234567890.1700000000&ul=es-es&sr=1920x1080&_s=3&sid=1700000500&sct=7&seg=1"
       "&dl=https%3A%2F%2Fshop.example.com%2Fp%3Fid%3D1&dr=https%3A%2F%2Fwww.google.com%2F&dt=Shop%20%26%20Co&uaa=x86")


def test_get_hit_is_one_event_with_typed_known_params():
    events = ga4.decode_request(URL + "&en=page_view&ep.page_type=product&epn.rating=4.5&_et=1200", "GET", None)
    assert len(events) == 1
    e = events[0]
    assert e["en"] == "page_view"
    assert e["tid"] == "G-ABC123"
    assert e["cid"] == "1234567890.1700000000"
    assert e["sid"] == "1700000500"  # an id: kept as text
    assert e["sct"] == 7 and e["seg"] == 1 and e["_s"] == 3 and e["_et"] == 1200
    assert e["dl"] == "https://shop.example.com/p?id=1"
    assert e["dr"] == "https://www.google.com/"
    assert e["dt"] == "Shop & Co"
    assert e["gcs"] == "G101" and e["gcd"] == "13r3r3l3l5" and e["_p"] == "1700000000123"
    assert e["ep.page_type"] == "product"
    assert e["epn.rating"] == 4.5
    assert "uaa" not in e  # user-agent client hints are noise, dropped
    assert (e["batch_index"], e["batch_size"]) == (0, 1)


def test_batched_post_splits_lines_and_merges_shared_url_params():
    body = ("en=view_item_list&_et=10&ep.list=home\r\n"
            "en=select_item&pr1=idSKU1~nmShirt~pr19.90~qt1\n"
            "en=purchase&tid=G-OTHER&epn.value=42&ep.transaction_id=T-1&cu=EUR\n")
    events = ga4.decode_request(URL, "POST", body)
    assert [e["en"] for e in events] == ["view_item_list", "select_item", "purchase"]
    assert [e["batch_index"] for e in events] == [0, 1, 2]
    assert all(e["batch_size"] == 3 for e in events)
    # shared params from the URL on every line; a line's own param wins
    assert [e["tid"] for e in events] == ["G-ABC123", "G-ABC123", "G-OTHER"]
    assert all(e["cid"] == "1234567890.1700000000" for e in events)
    assert events[0]["ep.list"] == "home" and "ep.list" not in events[1]
    assert events[2]["epn.value"] == 42 and isinstance(events[2]["epn.value"], int)
    assert events[2]["cu"] == "EUR" and events[2]["ep.transaction_id"] == "T-1"


def test_post_with_empty_body_is_the_url_event():
    events = ga4.decode_request(URL + "&en=user_engagement", "POST", "")
    assert [e["en"] for e in events] == ["user_engagement"]


def test_items_decode_to_objects_in_index_order():
    params = {
        "en": "add_to_cart",
        "pr2": "idB~nmCap~pr5~qt3~caHats",
        "pr1": "idSKU_1~nmT-shirt~pr9.99~qt2~brAcme~c2Men~vaBlue~ds1.5~lp1~k0color~v0red~k1size~v1XL~lnRelated~liL1",
        "pr10": "idZ",
    }
    row = ga4.decode_event(params)
    assert row["items"] == [
        {"item_id": "SKU_1", "item_name": "T-shirt", "price": 9.99, "quantity": 2, "item_brand": "Acme",
         "item_category2": "Men", "item_variant": "Blue", "discount": 1.5, "index": 1, "item_list_name": "Related",
         "item_list_id": "L1", "color": "red", "size": "XL"},
        {"item_id": "B", "item_name": "Cap", "price": 5, "quantity": 3, "item_category": "Hats"},
        {"item_id": "Z"},
    ]


def test_user_properties_and_numeric_params():
    row = ga4.decode_event({"en": "login", "up.plan": "gold", "upn.visits": "4", "epn.bad": "n/a", "epn.neg": "-2.50"})
    assert row["up.plan"] == "gold"
    assert row["upn.visits"] == 4
    assert row["epn.bad"] is None  # not a number: null, never a wrong number
    assert row["epn.neg"] == -2.5


def test_unknown_params_are_kept_not_lost():
    row = ga4.decode_event({"en": "x", "_dbg": "1", "mystery": "y"})
    assert row["other_params"] == {"_dbg": "1", "mystery": "y"}


def test_collect_url_detection():
    assert ga4.is_collect_url("https://region1.google-analytics.com/g/collect?v=2")
    assert ga4.is_collect_url("https://sgtm.shop.example.com/g/collect")  # server-side tagging
    assert not ga4.is_collect_url("https://www.google-analytics.com/collect?v=1")  # Universal Analytics
    assert not ga4.is_collect_url("https://shop.example.com/g/collector")


def test_to_number():
    assert ga4.to_number("12") == 12 and isinstance(ga4.to_number("12"), int)
    assert ga4.to_number("12.0") == 12.0 and isinstance(ga4.to_number("12.0"), float)
    assert ga4.to_number("1e3") == 1000.0
    assert ga4.to_number("NaN") is None and ga4.to_number("") is None and ga4.to_number(None) is None
