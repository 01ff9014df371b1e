"""The table catalog of ``capture`` (8.7): names, groups, typed headers and model views.

Default selection (``DEFAULT_TABLES``): ``ga4_hits`` and ``datalayer``, the two tables a
tagging audit reads first; the model asks for the others (cookies, network, seo ...) with
``tables`` only when the analysis needs them. Every table is computed on each capture (they
are cheap), so ``not_extracted`` always reports the rows the model did not ask for.
"""

from __future__ import annotations

from typing import Any

from analytics_acp import CatalogEntry, Header, ModelView

from . import ga4, performance, seo

DEFAULT_TABLES = ["ga4_hits", "datalayer"]
FIELD_LIMIT = 8

CATALOG: list[CatalogEntry] = [
    CatalogEntry("ga4_hits", "GA4 hits", "One row per GA4 event sent to /g/collect (GET and each line of batched POST bodies), decoded: en, tid, cid, sid, dl, dt, gcs, ep.*/epn.*, up.*, items.", "GA4"),
    CatalogEntry("datalayer", "dataLayer pushes", "Each element pushed to window.dataLayer, in order, with its page and JSON payload.", "dataLayer"),
    CatalogEntry("cookies", "Cookies", "Cookies with their change during the capture (created/updated/deleted/unchanged), first party, value at exit, expiry.", "Storage"),
    CatalogEntry("storage", "Web storage", "localStorage and sessionStorage keys of each page with their change.", "Storage"),
    CatalogEntry("network", "Network requests", "Every request: URL, method, resource type, status, bytes, timing, third party, blocked or answered locally.", "Network"),
    CatalogEntry("tags", "Detected tags", "Tag vendors and ids: GA4 measurement ids, GTM containers, Google Ads, Meta pixel, consent platforms and consent mode state.", "Tags"),
    CatalogEntry("seo", "SEO", "Per page: status, title, meta description, canonical, robots, hreflang, headings, Open Graph, JSON-LD types.", "SEO"),
    CatalogEntry("performance", "Performance", "Per page: navigation timing, FCP, LCP, CLS and long tasks.", "Performance"),
    CatalogEntry("console", "Console messages", "Console errors and warnings and uncaught page errors.", "Console"),
]
TITLES = {e.name: e.title for e in CATALOG}
NAMES = [e.name for e in CATALOG]


def _h(name: str, kind: str = "string", role: str | None = "attribute", description: str | None = None) -> Header:
    return Header(name=name, type=kind, role=role, description=description)  # type: ignore[arg-type]


def ga4_headers(rows: list[dict[str, Any]]) -> list[Header]:
    """Fixed columns, then every ep./epn./up./upn. parameter in order of appearance, then items."""
    heads = [_h("page_index", "integer", "dimension", "Page of the session the hit was sent from"),
             _h("hit_index", "integer", "attribute", "Order of the event in the capture")]
    for name, kind, description in ga4.KNOWN_COLUMNS:
        heads.append(_h(name, kind, "dimension" if name in ("en", "tid", "dl") else "attribute", description))
    dynamic: dict[str, None] = {}
    for row in rows:
        for key in row:
            if key.startswith(("ep.", "epn.", "up.", "upn.")):
                dynamic[key] = None
    for key in dynamic:
        numeric = key.startswith(("epn.", "upn."))
        heads.append(_h(key, "number" if numeric else "string", "metric" if numeric else "attribute"))
    heads += [
        _h("items", "json", "attribute", "Items (pr1, pr2 ...) decoded to objects"),
        _h("item_count", "integer", "metric"),
        _h("other_params", "json", "attribute", "Parameters not decoded into a column"),
        _h("batch_index", "integer"), _h("batch_size", "integer"),
        _h("method", "string"), _h("endpoint", "string", description="Collect URL without query string"),
        _h("delivery", "string", description="answered_locally (not sent to the vendor), forwarded, or blocked_by_config"),
    ]
    return heads


def ga4_view(rows: list[dict[str, Any]]) -> ModelView:
    """The fields the model sees first: event, page, id, URL, title, consent, then event params."""
    params = [k for k in dict.fromkeys(k for row in rows for k in row) if k.startswith(("ep.", "epn."))]
    return ModelView(fields=["en", "page_index", "tid", "dl", "dt", "gcs", *params, "items", "cid", "sid", "seg", "gcd"])


HEADERS: dict[str, list[Header]] = {
    "datalayer": [
        _h("page_index", "integer", "dimension"), _h("push_index", "integer"), _h("event", "string", "dimension"),
        _h("kind", "string", description="object, or gtag for gtag() argument lists"), _h("keys", "string"),
        _h("payload", "json"), _h("page_url", "string"), _h("time_ms", "number", description="Since navigation start"),
        _h("initial", "boolean", description="Already in the array when it was assigned"),
    ],
    "cookies": [
        _h("name", "string", "dimension"), _h("domain", "string", "dimension"), _h("path", "string"),
        _h("change", "string", "dimension"), _h("first_party", "boolean"), _h("value_onload", "string"),
        _h("value_onexit", "string"), _h("expires", "datetime"), _h("session", "boolean"),
        _h("page_index", "integer", description="First page after which the change was seen"),
        _h("http_only", "boolean"), _h("secure", "boolean"), _h("same_site", "string"), _h("size", "integer", "metric"),
    ],
    "storage": [
        _h("page_index", "integer", "dimension"), _h("origin", "string"), _h("storage", "string", "dimension"),
        _h("key", "string", "dimension"), _h("change", "string"), _h("value", "string"), _h("previous_value", "string"),
        _h("size", "integer", "metric"),
    ],
    "network": [
        _h("page_index", "integer", "dimension"), _h("request_index", "integer"), _h("url", "string"),
        _h("host", "string", "dimension"), _h("method", "string"), _h("resource_type", "string", "dimension"),
        _h("status", "integer"), _h("mime_type", "string"), _h("bytes", "integer", "metric"),
        _h("start_ms", "number", description="Since the capture started"), _h("duration_ms", "number", "metric"),
        _h("third_party", "boolean"), _h("blocked", "boolean"),
        _h("disposition", "string", description="network, answered_locally, blocked_by_config, or failed"),
        _h("failure", "string"), _h("is_navigation", "boolean"),
    ],
    "tags": [
        _h("vendor", "string", "dimension"), _h("category", "string", "dimension"), _h("tag_id", "string", "dimension"),
        _h("first_page_index", "integer"), _h("requests", "integer", "metric"), _h("sources", "json"),
        _h("evidence", "string"), _h("consent_default", "json"), _h("consent_current", "json"), _h("gcs_seen", "json"),
    ],
    "seo": [_h(c, t) for c, t in zip(seo.COLUMNS, [
        "integer", "string", "string", "integer", "string", "string", "string", "string", "string", "string", "string",
        "json", "json", "json", "json", "string", "json", "integer", "integer", "integer", "integer"], strict=True)],
    "performance": [_h(c, t, "metric" if t == "number" or c in ("long_tasks", "transfer_bytes", "resources") else None)
                    for c, t in zip(performance.COLUMNS, [
                        "integer", "string", "number", "number", "number", "number", "number", "number", "string",
                        "number", "integer", "number", "integer", "integer", "string"], strict=True)],
    "console": [
        _h("page_index", "integer", "dimension"), _h("level", "string", "dimension"),
        _h("kind", "string", description="console or pageerror"), _h("text", "string"), _h("source_url", "string"),
        _h("line", "integer"), _h("column", "integer"),
    ],
}

VIEWS: dict[str, ModelView] = {
    "datalayer": ModelView(fields=["page_index", "event", "kind", "keys", "payload", "initial", "push_index", "page_url"]),
    "cookies": ModelView(fields=["name", "domain", "change", "first_party", "value_onexit", "expires", "page_index",
                                 "session", "value_onload", "http_only", "secure", "same_site"]),
    "storage": ModelView(fields=["page_index", "storage", "key", "change", "value", "origin", "previous_value"]),
    "network": ModelView(fields=["page_index", "resource_type", "method", "status", "host", "url", "third_party",
                                 "disposition", "duration_ms", "bytes", "failure"]),
    "console": ModelView(fields=["page_index", "level", "text", "kind", "source_url", "line"]),
}
