"""A small shop served on 127.0.0.1 for the browser tests, and a CallContext factory.

The pages use a stub gtag.js that sends GA4 hits the way gtag does: a GET /g/collect for the
page_view and a batched sendBeacon POST (one event per line). dataLayer pushes, cookies set /
changed / deleted, localStorage, JSON-LD, a slow resource, console errors and a multi-page
flow (home -> product -> checkout) give every catalog table something to show.
"""

from __future__ import annotations

import base64
import os
import shutil
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

CHROMIUM = "/usr/bin/chromium"


def pytest_collection_modifyitems(config, items):
    """@pytest.mark.browser tests skip without Chromium, except in CI where they must run."""
    if os.path.exists(CHROMIUM) or shutil.which("chromium") or os.environ.get("CI"):
        return
    skip = pytest.mark.skip(reason="Chromium is not installed (apt-get install chromium, or make system-deps)")
    for item in items:
        if "browser" in item.keywords and "connectors/browser" in str(item.fspath):
            item.add_marker(skip)


GTAG_JS = r"""
(function () {
  var id = (document.currentScript && new URL(document.currentScript.src).searchParams.get('id')) || 'G-TEST123';
  window.dataLayer = window.dataLayer || [];
  window.gtag = function () { window.dataLayer.push(arguments); };
  var collect = window.__collect || 'https://region1.google-analytics.com/g/collect';
  var enc = encodeURIComponent;
  var shared = function () {
    return 'v=2&tid=' + id + '&cid=111.222&sid=1700000000&sct=3&seg=1&_p=PLOAD1&gcs=G111&gcd=13l3l3l3l1' +
      '&dl=' + enc(location.href) + '&dt=' + enc(document.title) + '&dr=' + enc(document.referrer);
  };
  var params = function (obj) {
    var out = [];
    Object.keys(obj || {}).forEach(function (k) {
      var v = obj[k];
      if (k === 'items') {
        v.forEach(function (it, i) {
          out.push('pr' + (i + 1) + '=' + enc('id' + it.item_id + '~nm' + it.item_name + '~pr' + it.price + '~qt' + it.quantity));
        });
      } else if (typeof v === 'number') { out.push('epn.' + k + '=' + v); }
      else { out.push('ep.' + k + '=' + enc(v)); }
    });
    return out.join('&');
  };
  window.__sendEvent = function (name, obj) {
    fetch(collect + '?' + shared() + '&en=' + name + (obj ? '&' + params(obj) : ''), {mode: 'no-cors', keepalive: true});
  };
  var origGtag = window.gtag;
  window.gtag = function (cmd, name, obj) {
    origGtag.apply(null, arguments);
    if (cmd === 'event') window.__sendEvent(name, obj);
  };
  gtag('js', new Date());
  gtag('config', id);
  // page_view: one GET hit
  window.__sendEvent('page_view', {page_type: document.body ? document.body.dataset.type || 'unknown' : 'unknown'});
  // a batched POST: two events, one per line, sharing the URL parameters
  window.addEventListener('load', function () {
    navigator.sendBeacon(collect + '?' + shared() + '&_s=2',
      'en=view_item&epn.value=19.98&ep.currency=EUR&pr1=' + enc('idSKU_1~nmT-shirt~pr9.99~qt2~k0color~v0red') +
      '&pr2=' + enc('idSKU_2~nmCap~pr5~qt1') + '\r\nen=scroll&epn.percent_scrolled=90&up.plan=gold&upn.visits=4');
  });
})();
"""

HOME = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Test Shop</title>
<meta name="description" content="A shop for tests">
<link rel="canonical" href="{origin}/">
<link rel="alternate" hreflang="es" href="{origin}/es/">
<meta property="og:title" content="Test Shop OG">
<meta name="robots" content="index,follow">
<script type="application/ld+json">{{"@context":"https://schema.org","@graph":[{{"@type":"Organization","name":"Shop"}},{{"@type":"WebSite"}}]}}</script>
<script>
  {collect}
  window.dataLayer = [{{"pageType": "home", "user": {{"loggedIn": false}}}}];
  gtag = function () {{ dataLayer.push(arguments); }};
  gtag('consent', 'default', {{"ad_storage": "denied", "analytics_storage": "granted"}});
  document.cookie = 'js_cookie=a; path=/';
  document.cookie = 'temp=x; path=/';
  localStorage.setItem('ls_key', 'v1');
  sessionStorage.setItem('ss_key', 's1');
</script>
<script async src="/gtag/js?id=G-TEST123"></script>
<script async src="/gtm.js?id=GTM-ABC123"></script>
</head><body data-type="home"><h1>Welcome</h1><h2>Offers</h2>
<img src="/slow?ms={slow_ms}" alt="slow">
<a href="/product" id="to-product">Product</a>
<script>console.error('home console error'); console.warn('home warning');</script>
</body></html>"""

PRODUCT = """<!doctype html><html><head><title>Product</title>
<script>window.dataLayer = window.dataLayer || []; dataLayer.push({{"event": "view_item", "ecommerce": {{"value": 9.99}}}});
{collect}
</script>
<script async src="/gtag/js?id=G-TEST123"></script></head>
<body data-type="product"><h1>T-shirt</h1>
<input id="email" type="email"><button id="add" onclick="
  dataLayer.push({{event: 'add_to_cart', email: document.getElementById('email').value}});
  gtag('event', 'add_to_cart', {{value: 9.99, currency: 'EUR', items: [{{item_id: 'SKU_1', item_name: 'T-shirt', price: 9.99, quantity: 1}}]}});
  document.getElementById('done').textContent = 'added';
">Add</button><span id="done"></span>
<a href="/checkout" id="to-checkout">Checkout</a>
<script>localStorage.setItem('ls_key', 'v2'); localStorage.setItem('cart', '1');</script>
</body></html>"""

CHECKOUT = """<!doctype html><html><head><title>Checkout</title>
<script>
  document.cookie = 'js_cookie=b; path=/';
  document.cookie = 'temp=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/';
  document.cookie = 'step=checkout; max-age=3600; path=/';
  window.dataLayer = window.dataLayer || []; dataLayer.push({"event": "begin_checkout"});
  setTimeout(function () { throw new Error('checkout boom'); }, 0);
</script></head><body><h1>Checkout</h1><div style="height:3000px"></div><p id="bottom">end</p></body></html>"""

# A page for the steps not in the shop flow (press, scroll y / selector / top, wait_for ms) and
# for performance: a blocking Enter handler is a long task, a late banner shifts the layout. Each key
# press pushes the scroll position, so the pushes show where every scroll step left the page.
# The long task runs on a key press, not while the page loads: Chromium starts its long-task
# detector asynchronously after the observer registers, and a task in a document's first
# milliseconds was missed in 4 of 20 loads (by longtask and long-animation-frame alike).
FORM = """<!doctype html><html><head><title>Form</title><script>
window.dataLayer = window.dataLayer || [];
document.addEventListener('keydown', function (e) {
  dataLayer.push({event: 'key', key: e.key, target: e.target.id || 'page', y: Math.round(window.scrollY)});
  if (e.key === 'Enter') { var t0 = performance.now(); while (performance.now() - t0 < 120) {} }
});
setTimeout(function () {
  var b = document.createElement('div'); b.style.height = '300px'; b.textContent = 'late banner';
  document.body.insertBefore(b, document.body.firstChild);
}, 200);
</script></head><body><h1>A form page with a large heading for paint</h1><p>Some text to shift.</p>
<input id="q"><div style="height:5000px"></div><p id="far">far</p></body></html>"""

ROBOTS = "User-agent: *\nDisallow: /checkout\nDisallow: /cart\nAllow: /\n\nUser-agent: BadBot\nDisallow: /\n\nSitemap: {origin}/sitemap.xml\n"
SITEMAP = """<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>{origin}/</loc><lastmod>2026-01-01</lastmod></url><url><loc>{origin}/product</loc><lastmod>2026-02-01</lastmod></url>
<url><loc>{origin}/checkout</loc></url></urlset>"""


class Site:
    """The running test site: its origin and the GA4 hits that reached it (forward_hits)."""

    def __init__(self, server: ThreadingHTTPServer):
        self.server = server
        self.origin = f"http://127.0.0.1:{server.server_address[1]}"
        self.hits: list[dict] = []
        # How long the home page's image takes. It holds up the load event of every visit to "/", so it
        # is 0 unless a test measures it (the ``slow_home`` fixture): most tests load "/" many times.
        self.slow_ms = 0
        self.hanging = threading.Event()  # a request reached /hang (which answers once release is set)
        self.release = threading.Event()


def _handler(site: Site):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _send(self, body: str | bytes, ctype="text/html; charset=utf-8", status=200, headers=None):
            data = body.encode() if isinstance(body, str) else body
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def _collect_js(self, query) -> str:
            if "fp" in query:
                return "window.__collect = location.origin + '/g/collect';"
            return ""

        def do_GET(self):
            parts = urlsplit(self.path)
            query = parse_qs(parts.query)
            path = parts.path
            if path == "/":
                self._send(HOME.format(origin=site.origin, collect=self._collect_js(query), slow_ms=site.slow_ms),
                           headers={"Set-Cookie": "srv=1; Path=/"})
            elif path == "/product":
                self._send(PRODUCT.format(collect=self._collect_js(query)))
            elif path == "/checkout":
                self._send(CHECKOUT, headers={"X-Robots-Tag": "noindex"})
            elif path == "/gtag/js":
                self._send(GTAG_JS, "application/javascript")
            elif path == "/gtm.js":
                self._send("window.google_tag_manager = window.google_tag_manager || {}; window.google_tag_manager['GTM-ABC123'] = {};",
                           "application/javascript")
            elif path == "/slow":
                time.sleep(int(query.get("ms", ["500"])[0]) / 1000)
                self._send(base64.b64decode("R0lGODlhAQABAAAAACw="), "image/gif")
            elif path == "/hang":
                site.hanging.set()
                site.release.wait(30)  # bounded: a test that forgot to release still ends
                self._send("<html><head><title>Late</title></head><body>late</body></html>")
            elif path == "/robots.txt":
                self._send(ROBOTS.format(origin=site.origin), "text/plain")
            elif path == "/sitemap.xml":
                self._send(SITEMAP.format(origin=site.origin), "application/xml")
            elif path == "/redirect":
                self._send("", status=302, headers={"Location": "/product"})
            elif path == "/protected":
                expected = "Basic " + base64.b64encode(b"stage:s3cret-pw").decode()
                if self.headers.get("Authorization") != expected:
                    self._send("no", status=401, headers={"WWW-Authenticate": 'Basic realm="stage"'})
                else:
                    self._send("<html><head><title>Staging</title></head><body><h1>ok</h1>"
                               "<script>document.title = 'Staging ' + document.cookie;</script></body></html>")
            elif path == "/g/collect":
                site.hits.append({"method": "GET", "query": parts.query, "body": ""})
                self._send("", status=204)
            elif path == "/many":
                n = int(query.get("n", ["60"])[0])
                self._send("<html><head><title>Many</title><script>window.dataLayer = window.dataLayer || [];"
                           f"for (var i = 0; i < {n}; i++) dataLayer.push({{event: 'tick_' + i, long: 'x'.repeat(200)}});"
                           "</script></head><body>many</body></html>")
            elif path == "/form":
                self._send(FORM)
            elif path == "/whoami":
                # what the browser sent: proves user_agent and locale reach the requests
                ua, lang = self.headers.get("User-Agent", ""), self.headers.get("Accept-Language", "")
                self._send(f"<html><head><title>UA={ua}|LANG={lang}</title></head><body>who</body></html>")
            elif path == "/missing":
                self._send("<html><head><title>Not found</title></head><body>404</body></html>", status=404)
            else:
                self._send("not found", status=404)

        def do_POST(self):
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length).decode() if length else ""
            if parts.path == "/g/collect":
                site.hits.append({"method": "POST", "query": parts.query, "body": body})
            self._send("", status=204)

    return Handler


@pytest.fixture(scope="session")
def site():
    """The shop on a free loopback port for the whole session."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), None)  # type: ignore[arg-type]
    holder = Site(server)
    server.RequestHandlerClass = _handler(holder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield holder
    server.shutdown()


@pytest.fixture
def slow_home(site):
    """The home page's image answers after 600 ms for this test (network timings are measured)."""
    site.slow_ms = 600
    yield site
    site.slow_ms = 0


FAST = {"settle_ms": 400, "navigation_timeout_ms": 15000, "action_timeout_ms": 5000}


@pytest.fixture(scope="module")
def connector_state():
    """The connector's state for a test module: one browser per module, as one server has one; its stop at the end
    closes the sessions, Chromium, Playwright and the browser thread."""
    from analytics_acp.state import ConnectorState

    state = ConnectorState("browser")
    yield state
    state.close()


@pytest.fixture
def browser(connector_state):
    """The module's ``sessions.Browser`` (its thread and pool), the one make_ctx's contexts use."""
    from analytics_acp_browser.sessions import BROWSER

    return connector_state.get(BROWSER)


@pytest.fixture
def make_ctx(tmp_path, connector_state):
    """The kit's CallContext factory for direct tool calls (the runtime normally builds it)."""
    from analytics_acp.kit import make_ctx as kit_make_ctx

    base = dict(FAST)

    def make(tool="capture", resource_id=None, conversation_id=None, session_id=None, config=None, credentials=None):
        return kit_make_ctx("browser", tool, resource_id=resource_id, conversation_id=conversation_id,
                            session_id=session_id, config={**base, **(config or {})}, credentials=credentials,
                            tmp_dir=tmp_path, connector_state=connector_state)

    make.base = base  # type: ignore[attr-defined]
    return make


@pytest.fixture
def no_settle(make_ctx):
    """make_ctx without the settle wait after each page, for tests of sessions, cookies, errors and screenshots:
    they read what the page's own scripts did before its load event, never a hit or push sent after it, so the
    400 ms wait after every visit (twice when the page changed) proves nothing there."""
    make_ctx.base["settle_ms"] = 0
