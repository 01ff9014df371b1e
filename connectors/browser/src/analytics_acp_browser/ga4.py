"""GA4 Measurement Protocol (gtag.js ``/g/collect``) hit decoding. Pure: no browser here.

A hit is a request to a path ending in ``/g/collect`` (Google's hosts or a server-side
tagging endpoint on the site's own domain). Its URL query string holds the parameters shared
by every event of the request; a POST body holds one event per line, each line a query
string merged over the shared parameters (the line wins). A GET, or a POST with an empty
body, is one event.

Decoded columns: the well-known keys (``en``, ``tid``, ``cid``, ``sid``, ``dl``, ``dt``,
``dr``, ``gcs``, ``gcd``, ``_p``, ``seg`` ...), event parameters ``ep.<name>`` (string) and
``epn.<name>`` (number), user properties ``up.<name>`` / ``upn.<name>``, and ``items``:
``pr1``, ``pr2`` ... decoded to a JSON array of item objects.

Item format (``pr<N>``): ``~``-separated tokens, each a two-letter key followed by its value,
for example ``idSKU_1~nmT-shirt~pr9.99~qt2``. Keys are mapped to the GA4 item field names
(``ITEM_KEYS``); ``k<i>``/``v<i>`` pairs are custom item parameters (``k0color~v0red`` ->
``{"color": "red"}``). Price, quantity, discount and index become numbers.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlsplit

# Two-letter item keys of gtag.js -> GA4 item fields (documented in the README as well).
ITEM_KEYS = {
    "id": "item_id",
    "nm": "item_name",
    "af": "affiliation",
    "cp": "coupon",
    "ds": "discount",
    "lp": "index",
    "br": "item_brand",
    "ca": "item_category",
    "c2": "item_category2",
    "c3": "item_category3",
    "c4": "item_category4",
    "c5": "item_category5",
    "li": "item_list_id",
    "ln": "item_list_name",
    "va": "item_variant",
    "lo": "location_id",
    "pr": "price",
    "qt": "quantity",
    "pi": "promotion_id",
    "pn": "promotion_name",
    "cn": "creative_name",
    "cs": "creative_slot",
}
ITEM_NUMERIC = {"price", "quantity", "discount", "index"}

# Well-known parameters, in the column order of the ga4_hits table.
KNOWN_COLUMNS: list[tuple[str, str, str]] = [
    ("en", "string", "Event name"),
    ("tid", "string", "Measurement id (G-...)"),
    ("dl", "string", "Document location (page URL)"),
    ("dt", "string", "Document title"),
    ("dr", "string", "Document referrer"),
    ("cid", "string", "Client id (_ga cookie)"),
    ("sid", "string", "Session id"),
    ("sct", "integer", "Session count"),
    ("seg", "integer", "Session engaged (1/0)"),
    ("gcs", "string", "Consent state (G1<ad_storage><analytics_storage>)"),
    ("gcd", "string", "Consent defaults/updates string"),
    ("_p", "string", "Page load id"),
    ("_s", "integer", "Hit sequence number in the page"),
    ("_et", "integer", "Engagement time (ms)"),
    ("_ss", "string", "Session start flag"),
    ("_fv", "string", "First visit flag"),
    ("_nsi", "string", "New session id flag"),
    ("_ee", "string", "Enhanced measurement flag"),
    ("cu", "string", "Currency"),
    ("ul", "string", "User language"),
    ("sr", "string", "Screen resolution"),
    ("uid", "string", "User id"),
    ("npa", "string", "Non-personalized ads flag"),
    ("dma", "string", "DMA flag"),
    ("gtm", "string", "Tag manager build hash"),
    ("v", "string", "Protocol version"),
]
KNOWN = {name for name, _, _ in KNOWN_COLUMNS}
INTEGER_KEYS = {name for name, kind, _ in KNOWN_COLUMNS if kind == "integer"}
# Parameters that only describe the request or the browser; kept out of the table (noise).
DROPPED = {"_z", "uaa", "uab", "uafvl", "uamb", "uam", "uap", "uapv", "uaw", "frm", "are", "pscdl", "_eu", "_gaz", "tfd", "tag_exp"}


def is_collect_url(url: str) -> bool:
    """True for a GA4 hit endpoint: a path ending in ``/g/collect`` (any host, incl. server-side tagging)."""
    try:
        path = urlsplit(url).path
    except ValueError:
        return False
    return path.endswith("/g/collect")


def to_number(value: str | None) -> int | float | None:
    """``"12"`` -> 12, ``"9.90"`` -> 9.9; None when the text is not a number."""
    if value is None:
        return None
    text = str(value).strip()
    if not text:
        return None
    try:
        number = float(text)
    except ValueError:
        return None
    if number != number or number in (float("inf"), float("-inf")):  # NaN / inf are not JSON
        return None
    if number.is_integer() and "." not in text and "e" not in text.lower():
        return int(number)
    return number


def decode_item(value: str) -> dict[str, Any]:
    """One ``pr<N>`` value -> an item object (see the module docstring for the key mapping)."""
    item: dict[str, Any] = {}
    custom_keys: dict[str, str] = {}
    custom_values: dict[str, str] = {}
    for token in value.split("~"):
        if len(token) < 2:
            continue
        key, rest = token[:2], token[2:]
        if token[0] in "kv" and token[1:2].isdigit():
            # k<index><name> / v<index><value>: the index may have several digits.
            digits = ""
            for ch in token[1:]:
                if ch.isdigit():
                    digits += ch
                else:
                    break
            payload = token[1 + len(digits):]
            (custom_keys if token[0] == "k" else custom_values)[digits] = payload
            continue
        field = ITEM_KEYS.get(key, key)
        item[field] = to_number(rest) if field in ITEM_NUMERIC and to_number(rest) is not None else rest
    for index, name in custom_keys.items():
        if name:
            item[name] = custom_values.get(index)
    return item


def _item_index(key: str) -> int | None:
    if key.startswith("pr") and key[2:].isdigit():
        return int(key[2:])
    return None


def decode_event(params: dict[str, str]) -> dict[str, Any]:
    """Decoded event fields (in column order: known keys, then ep/epn/up/upn, then items)."""
    row: dict[str, Any] = {}
    for name, _, _ in KNOWN_COLUMNS:
        if name in params:
            row[name] = to_number(params[name]) if name in INTEGER_KEYS else params[name]
    items: list[tuple[int, dict[str, Any]]] = []
    others: dict[str, Any] = {}
    for key, value in params.items():
        if key in KNOWN or key in DROPPED:
            continue
        index = _item_index(key)
        if index is not None:
            items.append((index, decode_item(value)))
        elif key.startswith(("epn.", "upn.")):
            row[key] = to_number(value)
        elif key.startswith(("ep.", "up.")):
            row[key] = value
        else:
            others[key] = value
    if items:
        row["items"] = [item for _, item in sorted(items, key=lambda pair: pair[0])]
    if others:
        row["other_params"] = others
    return row


def split_events(url: str, body: str | None) -> list[dict[str, str]]:
    """The raw parameter dicts of every event in one request (shared URL params merged under each line)."""
    shared = dict(parse_qsl(urlsplit(url).query, keep_blank_values=True))
    lines = [line for line in (body or "").replace("\r\n", "\n").split("\n") if line.strip()]
    if not lines:
        return [shared]
    events = []
    for line in lines:
        merged = dict(shared)
        merged.update(dict(parse_qsl(line.strip(), keep_blank_values=True)))
        events.append(merged)
    return events


def decode_request(url: str, method: str, body: str | None) -> list[dict[str, Any]]:
    """Decoded events of one ``/g/collect`` request, each with ``batch_index`` and ``batch_size``."""
    raw_events = split_events(url, body if method.upper() == "POST" else None)
    out = []
    for index, params in enumerate(raw_events):
        row = decode_event(params)
        row["batch_index"] = index
        row["batch_size"] = len(raw_events)
        out.append(row)
    return out
