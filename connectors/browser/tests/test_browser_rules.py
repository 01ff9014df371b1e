"""Pure rules of the browser connector: URL safety, origins, host patterns, steps, settings,
robots/sitemap parsing, tag detection and cookie/storage diffs. No browser needed."""

import pytest
from analytics_acp.errors import CredentialsInvalid, InvalidArguments
from analytics_acp_browser import actions, blocks, cookies, storage, tags
from analytics_acp_browser.arguments import CaptureArguments
from analytics_acp_browser.settings import Access, Settings
from analytics_acp_browser.urls import HostPolicy, normalize_resource_id, registrable_domain, resolve


@pytest.mark.parametrize("value, expected", [
    ("https://Shop.Example.com/cart?x=1#top", "https://shop.example.com"),
    ("HTTP://example.com:80/", "http://example.com"),
    ("https://example.com:443", "https://example.com"),
    ("https://example.com:8443/a", "https://example.com:8443"),
    ("shop.example.com", "https://shop.example.com"),
    ("shop.example.com/path", "https://shop.example.com"),
    ("localhost:8080", "https://localhost:8080"),
    ("http://127.0.0.1:5000/x", "http://127.0.0.1:5000"),
    ("https://bücher.example/", "https://xn--bcher-kva.example"),
])
def test_resource_id_is_the_origin(value, expected):
    assert normalize_resource_id(value) == expected


@pytest.mark.parametrize("bad", [
    "file:///etc/passwd", "chrome://settings", "data:text/html,<b>x</b>", "javascript:alert(1)",
    "about:blank", "view-source:https://example.com", "ftp://example.com/x",
])
def test_non_web_schemes_are_refused(bad):
    with pytest.raises(InvalidArguments, match="Only http and https"):
        resolve(bad, "https://example.com")
    with pytest.raises(InvalidArguments):
        normalize_resource_id(bad)


def test_relative_urls_resolve_against_the_origin():
    assert resolve(None, "https://a.com") == "https://a.com/"
    assert resolve("/cart?x=1", "https://a.com") == "https://a.com/cart?x=1"
    assert resolve("cart", "https://a.com") == "https://a.com/cart"
    assert resolve("//cdn.a.com/x", "http://a.com") == "http://cdn.a.com/x"
    assert resolve("b.com/page", None) == "https://b.com/page"
    with pytest.raises(InvalidArguments, match="relative"):
        resolve("/cart", None)
    with pytest.raises(InvalidArguments):
        resolve(None, None)


def test_host_patterns():
    policy = HostPolicy(allowed="*.example.com, 127.0.0.1:8080", blocked="ads.example.com")
    assert policy.may_open("https://example.com/")
    assert policy.may_open("https://www.example.com/")
    assert policy.may_open("http://127.0.0.1:8080/")
    assert not policy.may_open("http://127.0.0.1:9090/")  # port pinned
    assert not policy.may_open("https://example.org/")
    assert not policy.may_open("https://ads.example.com/")  # blocked wins over allowed
    assert policy.is_blocked("https://ads.example.com/pixel.gif")
    assert not policy.is_blocked("https://www.example.com/")
    with pytest.raises(InvalidArguments, match="not allowed"):
        policy.check_page("https://evil.test/")
    assert HostPolicy().may_open("https://anything.test/")
    assert HostPolicy(allowed="shop-??.test").may_open("https://shop-01.test/")


def test_registrable_domain():
    assert registrable_domain("www.shop.example.co.uk") == "example.co.uk"
    assert registrable_domain("a.b.example.com") == "example.com"
    assert registrable_domain("127.0.0.1") == "127.0.0.1"


def test_actions_validation():
    """Each step is checked by the argument model (issue 38.1): refused before the browser starts."""
    steps = actions.steps_of(CaptureArguments.parse({"actions": [
        {"action": "click", "selector": "#buy"},
        {"action": "fill", "selector": "#q", "value": "shoes"},
        {"action": "press", "key": "Enter"},
        {"action": "scroll", "to": "bottom"},
        {"action": "wait_for", "ms": 200},
        {"action": "navigate", "url": "/cart"},
    ]}).actions)
    assert [s.action for s in steps] == ["click", "fill", "press", "scroll", "wait_for", "navigate"]
    assert steps[1].fields == {"selector": "#q", "value": "shoes"}
    bad = [
        ([{"action": "hover", "selector": "a"}], r"^Invalid actions\.0\.action: must be one of click, fill, press"),
        ([{"action": "click"}], r"^Invalid actions\.0: click needs selector\."),
        ([{"action": "fill", "selector": "#q"}], "fill needs value"),
        ([{"action": "click", "selector": "#a", "value": "x"}], "click does not take value"),
        ([{"action": "click", "selector": "#a", "js": "alert(1)"}], r"^Invalid actions\.0: unknown key js\. Accepted: action, selector"),
        ([{"action": "click", "selector": "  "}], "selector is empty"),
        ([{"action": "wait_for", "ms": 60000}], r"^Invalid actions\.0\.ms: must be at most 30000\."),
        ([{"action": "wait_for"}], "either selector or ms"),
        ([{"action": "wait_for", "ms": 5, "state": "visible"}], "state only applies to wait_for selector"),
        ([{"action": "scroll", "to": "left"}], r"^Invalid actions\.0\.to: must be one of top, bottom\."),
        ([{"action": "scroll", "to": "top", "y": 3}], "exactly one"),
        ([{"action": "scroll", "y": True}], r"^Invalid actions\.0\.y: must be of type integer\."),
        ("click", r"^Invalid actions: must be of type array\."),
        ([{"action": "click", "selector": "#a"}] * 51, r"^Invalid actions: must have at most 50 item\(s\)\."),
    ]
    for raw, message in bad:
        with pytest.raises(InvalidArguments, match=message):
            CaptureArguments.parse({"actions": raw})
    with pytest.raises(InvalidArguments, match=r"^Invalid wait_until: must be one of load, domcontentloaded"):
        CaptureArguments.parse({"wait_until": "idle"})


def test_settings_defaults_and_credentials():
    s = Settings.from_config({"headless": True, "user_agent": "", "settle_ms": 50, "unknown": 1})
    assert s.settle_ms == 50 and s.user_agent is None and s.forward_hits is False
    assert s.context_options() == {"viewport": {"width": 1366, "height": 768}, "locale": "en-US"}
    assert Access.from_credentials(None).http_credentials is None
    assert Access.from_credentials({}).cookies is None
    a = Access.from_credentials({"basic_username": "u", "basic_password": "p", "extra_cookies": "a=1; b=2"})
    assert a.http_credentials == {"username": "u", "password": "p"}
    assert a.cookies == [{"name": "a", "value": "1"}, {"name": "b", "value": "2"}]
    j = Access.from_credentials({"extra_cookies": '[{"name": "s", "value": "v", "domain": ".x.com", "evil": 1}]'})
    assert j.cookies == [{"name": "s", "value": "v", "domain": ".x.com"}]
    with pytest.raises(CredentialsInvalid) as info:
        Access.from_credentials({"basic_username": "u"})
    with pytest.raises(CredentialsInvalid) as info:
        Access.from_credentials({"extra_cookies": "[{not json SECRETVALUE"})
    assert "SECRETVALUE" not in info.value.message
    with pytest.raises(CredentialsInvalid):
        Access.from_credentials({"extra_cookies": "novalue"})


def test_robots_parsing():
    text = ("# comment\nUser-agent: Googlebot\nUser-agent: *\nDisallow: /admin\nDisallow: /cart # carts\n"
            "Allow: /\nDisallow:\n\nUser-agent: BadBot\nDisallow: /\nSitemap: https://a.com/s.xml\n")
    out = blocks.parse_robots(text)
    assert out["user_agents"] == ["Googlebot", "*", "BadBot"]
    assert out["disallow_count"] == 2 and out["allow_count"] == 1
    assert out["disallow_sample"] == ["/admin", "/cart"]
    assert out["blocks_everything"] is False
    assert out["sitemaps"] == ["https://a.com/s.xml"]
    assert blocks.parse_robots("User-agent: *\nDisallow: /\n")["blocks_everything"] is True


def test_sitemap_parsing():
    body = (b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            b"<url><loc>https://a.com/</loc><lastmod>2026-01-02</lastmod></url>"
            b"<url><loc>https://a.com/b</loc><lastmod>2026-03-01</lastmod></url></urlset>")
    out = blocks.parse_sitemap(body)
    assert out == {"kind": "urlset", "entries": 2, "sample": ["https://a.com/", "https://a.com/b"],
                   "latest_lastmod": "2026-03-01", "hosts": ["a.com"]}
    import gzip

    assert blocks.parse_sitemap(gzip.compress(body))["entries"] == 2
    index = b'<sitemapindex xmlns="x"><sitemap><loc>https://a.com/1.xml</loc></sitemap></sitemapindex>'
    assert blocks.parse_sitemap(index)["kind"] == "sitemapindex"
    assert "DOCTYPE" in blocks.parse_sitemap(b'<!DOCTYPE x [<!ENTITY a "b">]><urlset/>')["error"]
    assert "not valid XML" in blocks.parse_sitemap(b"<urlset>")["error"]


def test_tag_detection():
    network = [
        {"url": "https://www.googletagmanager.com/gtm.js?id=GTM-K9X", "page_index": 0},
        {"url": "https://www.googletagmanager.com/gtag/js?id=G-AAA111", "page_index": 0},
        {"url": "https://www.googletagmanager.com/gtag/js?id=AW-123456", "page_index": 0},
        {"url": "https://connect.facebook.net/en_US/fbevents.js", "page_index": 0},
        {"url": "https://www.facebook.com/tr/?id=998877&ev=PageView", "page_index": 1},
        {"url": "https://cdn.cookielaw.org/scripttemplates/otSDKStub.js", "page_index": 0},
        {"url": "https://www.googleadservices.com/pagead/conversion/123456/?label=x", "page_index": 1},
        {"url": "https://static.hotjar.com/c/hotjar-3141.js?sv=6", "page_index": 0},
        {"url": "https://shop.example.com/app.js", "page_index": 0},
    ]
    hits = [{"tid": "G-AAA111", "gcs": "G100", "page_index": 0}, {"tid": "G-AAA111", "gcs": "G111", "page_index": 1}]
    pushes = [{"payload": ["consent", "default", {"ad_storage": "denied"}], "page_index": 0},
              {"payload": ["consent", "update", {"ad_storage": "granted"}], "page_index": 1}]
    rows = tags.detect(network, hits, pushes, [{"google_tag_ids": ["GTM-K9X", "not-an-id"], "tcf_api": True, "page_index": 0}])
    found = {(r["vendor"], r["tag_id"]) for r in rows}
    assert ("Google Tag Manager", "GTM-K9X") in found
    assert ("Google tag (gtag.js)", "G-AAA111") in found
    assert ("Google Ads", "AW-123456") in found and ("Google Ads", "123456") in found
    assert ("Meta Pixel", "998877") in found and ("Meta Pixel", None) in found
    assert ("OneTrust", None) in found and ("Hotjar", "3141") in found and ("IAB TCF API", None) in found
    ga4_row = next(r for r in rows if r["vendor"] == "Google Analytics 4")
    assert ga4_row["tag_id"] == "G-AAA111" and ga4_row["sources"] == ["hit"]
    consent = next(r for r in rows if r["vendor"] == "Google consent mode")
    assert consent["consent_default"] == {"ad_storage": "denied"}
    assert consent["consent_current"] == {"ad_storage": "granted"}
    assert consent["gcs_seen"] == ["G100", "G111"]
    summary = tags.summary(rows)
    assert summary["gtm_containers"] == ["GTM-K9X"] and summary["ga4_measurement_ids"] == ["G-AAA111"]
    assert summary["meta_pixels"] == ["998877"] and "OneTrust" in summary["consent_platforms"]
    assert not any(r["vendor"] == "app" for r in rows)


def _c(name, value, domain="shop.example.com", expires=-1):
    return {"name": name, "value": value, "domain": domain, "path": "/", "expires": expires}


def test_cookie_diff():
    start = cookies.jar([_c("keep", "1"), _c("upd", "a"), _c("gone", "x")])
    after0 = cookies.jar([_c("keep", "1"), _c("upd", "a"), _c("gone", "x"), _c("_ga", "GA1.1.5", ".example.com", 1893456000)])
    after1 = cookies.jar([_c("keep", "1"), _c("upd", "b"), _c("_ga", "GA1.1.5", ".example.com", 1893456000), _c("_fbp", "fb", ".facebook.com")])
    rows = {r["name"]: r for r in cookies.diff_rows(start, [(0, after0), (1, after1)], after1, "www.example.com")}
    assert rows["keep"]["change"] == "unchanged" and rows["keep"]["page_index"] is None
    assert rows["upd"]["change"] == "updated" and rows["upd"]["page_index"] == 1
    assert (rows["upd"]["value_onload"], rows["upd"]["value_onexit"]) == ("a", "b")
    assert rows["gone"]["change"] == "deleted" and rows["gone"]["value_onexit"] is None and rows["gone"]["page_index"] == 1
    assert rows["_ga"]["change"] == "created" and rows["_ga"]["page_index"] == 0
    assert rows["_ga"]["first_party"] is True and rows["_ga"]["session"] is False
    assert rows["_ga"]["expires"] == "2030-01-01T00:00:00Z"
    assert rows["_fbp"]["first_party"] is False and rows["_fbp"]["session"] is True


def test_storage_diff():
    previous: dict = {}
    first = storage.page_rows(0, {"origin": "https://a.com", "local": {"k": "1", "x": "y"}, "session": {}}, previous)
    assert [(r["key"], r["change"]) for r in first] == [("k", "created"), ("x", "created")]
    second = storage.page_rows(1, {"origin": "https://a.com", "local": {"k": "2"}, "session": {"s": "1"}}, previous)
    assert [(r["storage"], r["key"], r["change"], r["value"], r["previous_value"]) for r in second] == [
        ("local", "k", "updated", "2", "1"), ("local", "x", "deleted", None, "y"), ("session", "s", "created", "1", None)]


def test_plugin_import_stays_lean():
    """Playwright is imported on the first capture, not when the server loads the plugin."""
    import subprocess
    import sys

    code = ("import sys; from analytics_acp.plugins import load_connector; l = load_connector('browser'); "
            "assert sorted(l.tools) == ['capture', 'close_session', 'screenshot'], l.tools; "
            "assert 'playwright' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_default_executable_prefers_playwrights_own_browser(tmp_path):
    """browser_executable empty: Playwright's Chromium when it is on disk, else Debian's."""
    from types import SimpleNamespace

    from analytics_acp_browser.sessions import default_executable

    own = tmp_path / "chrome"
    own.write_bytes(b"")
    assert default_executable(SimpleNamespace(chromium=SimpleNamespace(executable_path=str(own)))) == str(own)
    missing = SimpleNamespace(chromium=SimpleNamespace(executable_path=str(tmp_path / "not-installed")))
    assert default_executable(missing) == "/usr/bin/chromium"


def test_setup_schemas_and_blocks():
    """Credentials are optional and write-only; blocks are per origin with the documented TTLs."""
    from analytics_acp_browser.declaration import block_specs, info, tool_specs
    from analytics_acp_browser.settings import CONFIG_SCHEMA, CREDENTIALS_SCHEMA

    assert CREDENTIALS_SCHEMA["required"] == []
    assert {k for k, v in CREDENTIALS_SCHEMA["properties"].items() if v.get("writeOnly")} == {"basic_password", "extra_cookies"}
    for key in ("browser_executable", "headless", "viewport_width", "viewport_height", "user_agent", "locale",
                "navigation_timeout_ms", "action_timeout_ms", "idle_timeout_s", "max_sessions",
                "allowed_hosts", "blocked_hosts", "forward_hits"):
        assert key in CONFIG_SCHEMA["properties"], key
    assert CONFIG_SCHEMA["properties"]["forward_hits"]["default"] is False
    assert not any(t.needs_credentials for t in tool_specs())
    assert {b.id: b.ttl_s for b in block_specs()} == {"tag_setup": 6 * 3600, "robots_sitemap": 24 * 3600,
                                                       "page_overview": 6 * 3600}
    declared = info()
    assert declared.defaults.tables == ["ga4_hits", "datalayer"] and declared.resource_id.format == "origin"
