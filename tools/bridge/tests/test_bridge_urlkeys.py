"""The URL functions of acp_query (issue 24.1): url_key, url_host, url_path, url_param on real-shaped values.

Each case runs through SQLite on an acp_query connection (the functions as the model calls them),
not only as Python: a value that SQLite hands over differently (an integer, NULL) is covered too.
"""

from __future__ import annotations

import sqlite3

import pytest
from analytics_acp.errors import InvalidArguments
from analytics_acp_bridge.query import urlkeys
from analytics_acp_bridge.serving import own_tools
from analytics_acp_bridge.store.datasets import DatasetStore

# (value, url_key, url_host, url_host strip-www, url_path)
CASES = [
    # Search Console pages: full URLs, trailing slash, encoded accents and spaces, fragments of jump links
    ("https://www.example.com/blog/post/", "/blog/post", "www.example.com", "example.com", "/blog/post/"),
    ("https://www.example.com/blog/post", "/blog/post", "www.example.com", "example.com", "/blog/post"),
    ("https://www.example.com/", "/", "www.example.com", "example.com", "/"),
    ("https://www.example.com", "/", "www.example.com", "example.com", "/"),
    ("https://www.example.com/blog/caf%C3%A9-con-le%C3%B1a/", "/blog/café-con-leña", "www.example.com", "example.com",
     "/blog/caf%C3%A9-con-le%C3%B1a/"),
    ("https://www.example.com/blog/caf%c3%a9-con-le%c3%b1a", "/blog/café-con-leña", "www.example.com", "example.com",
     "/blog/caf%c3%a9-con-le%c3%b1a"),
    ("https://www.example.com/guides/seo%20basics", "/guides/seo basics", "www.example.com", "example.com",
     "/guides/seo%20basics"),
    ("https://www.example.com/faq#:~:text=shipping%20costs", "/faq", "www.example.com", "example.com", "/faq"),
    ("https://www.example.com/faq/#returns", "/faq", "www.example.com", "example.com", "/faq/"),
    ("HTTPS://WWW.Example.COM/Blog/Post", "/Blog/Post", "www.example.com", "example.com", "/Blog/Post"),  # path case kept
    ("http://example.com:8080/shop/?page=2", "/shop", "example.com", "example.com", "/shop/"),
    ("https://user@www.example.com/a", "/a", "www.example.com", "example.com", "/a"),
    ("//cdn.example.com/landing/", "/landing", "cdn.example.com", "cdn.example.com", "/landing/"),
    # GA4 landingPage / pagePath: paths with query strings, the root, index files, placeholders
    ("/blog/post?utm_source=newsletter&utm_medium=email", "/blog/post", None, None, "/blog/post"),
    ("/blog/café", "/blog/café", None, None, "/blog/café"),
    ("/guides/seo basics", "/guides/seo basics", None, None, "/guides/seo basics"),
    ("/", "/", None, None, "/"),
    ("", "/", None, None, "/"),
    ("/index.html", "/", None, None, "/index.html"),
    ("/index.htm", "/", None, None, "/index.htm"),
    ("/blog/index.php?p=1", "/blog", None, None, "/blog/index.php"),
    ("/blog/INDEX.HTML", "/blog/INDEX.HTML", None, None, "/blog/INDEX.HTML"),  # only the lower-case default names
    ("/default.aspx", "/default.aspx", None, None, "/default.aspx"),
    ("?gclid=abc", "/", None, None, "/"),
    ("(not set)", None, None, None, None),
    ("(other)", None, None, None, None),
    # GA4 fullPageUrl: host and path without a scheme
    ("www.example.com/blog/post/?utm_campaign=x", "/blog/post", "www.example.com", "example.com", "/blog/post/"),
    ("shop.example.org", "/", "shop.example.org", "shop.example.org", "/"),
    # BigQuery export page_location: full URL with campaign parameters
    ("https://www.example.com/blog/post/?utm_source=google&utm_medium=cpc&gclid=Cj0KCQ", "/blog/post",
     "www.example.com", "example.com", "/blog/post/"),
    # Search Console properties: a site, not a page
    ("sc-domain:example.com", None, "example.com", "example.com", None),
    ("sc-domain:WWW.Example.com", None, "www.example.com", "example.com", None),
    ("https://www.example.com/", "/", "www.example.com", "example.com", "/"),  # a URL-prefix property is a URL
    # IDN hosts: punycode and Unicode spellings are one host, in Unicode
    ("https://xn--mnchen-3ya.de/stadtf%C3%BChrung/", "/stadtführung", "münchen.de", "münchen.de", "/stadtf%C3%BChrung/"),
    ("https://MÜNCHEN.de/stadtführung", "/stadtführung", "münchen.de", "münchen.de", "/stadtführung"),
    ("https://www.xn--espaa-rta.es/", "/", "www.españa.es", "españa.es", "/"),
    ("https://пример.рф/", "/", "пример.рф", "пример.рф", "/"),
    ("https://xn--strae-oqa.de/", "/", "straße.de", "straße.de", "/"),  # IDNA 2008: ß stays ß
    ("https://STRAßE.de/", "/", "straße.de", "straße.de", "/"),
    ("https://xn--zz-invalid.example.com/", "/", "xn--zz-invalid.example.com", "xn--zz-invalid.example.com", "/"),
    ("https://Foo_Bar.xn--mnchen-3ya.de/", "/", "foo_bar.münchen.de", "foo_bar.münchen.de", "/"),
    ("пример.xn--p1ai/страница", "/страница", "пример.рф", "пример.рф", "/страница"),
    # percent-decoding: invalid UTF-8 and stray % kept as written (hex upper-cased), %2F kept encoded
    ("/caf%E9", "/caf%E9", None, None, "/caf%E9"),
    ("/caf%e9/", "/caf%E9", None, None, "/caf%e9/"),
    ("/100%-natural", "/100%-natural", None, None, "/100%-natural"),
    ("/a%2fb", "/a%2Fb", None, None, "/a%2fb"),
    ("/a+b", "/a+b", None, None, "/a+b"),
    # unreadable: NULL, never an error
    ("blog/post", None, None, None, None),
    ("http:///nohost", None, None, None, None),
    ("https://exa mple.com/", None, None, None, None),
    ("https://[::1/broken", None, None, None, None),
    ("https://example.com:http/", None, None, None, None),
    ("not a url", None, None, None, None),
    ("https://[2001:db8::1]:8443/x/", "/x", "[2001:db8::1]", "[2001:db8::1]", "/x/"),
    # Issue 38.9 (survivors of a mutation study): a host's trailing dot and an empty port are dropped, a host
    # that is only www plus a name keeps its www, and GA4's fullPageUrl with a two-letter TLD is a host
    ("https://www.example.com./blog/", "/blog", "www.example.com", "example.com", "/blog/"),
    ("https://example.com:/blog/", "/blog", "example.com", "example.com", "/blog/"),
    ("https://www.com/x", "/x", "www.com", "www.com", "/x"),
    ("https://www.co/", "/", "www.co", "www.co", "/"),
    ("example.de/blog/", "/blog", "example.de", "example.de", "/blog/"),
    ("www.example.co.uk/x", "/x", "www.example.co.uk", "example.co.uk", "/x"),
    ("www.example.co.uk/x?utm_source=a", "/x", "www.example.co.uk", "example.co.uk", "/x"),
    ("example.de./blog", "/blog", "example.de", "example.de", "/blog"),
    ("shop.example.de:8080/a/", "/a", "shop.example.de", "shop.example.de", "/a/"),
    # mutation survivors: a URL inside the path, IPv6 literals without a port, with an empty one, empty, or bad
    ("https://example.com/go/https://other.com/page", "/go/https://other.com/page", "example.com", "example.com",
     "/go/https://other.com/page"),
    ("https://[::1]/x", "/x", "[::1]", "[::1]", "/x"),
    ("https://[::1]:/x", "/x", "[::1]", "[::1]", "/x"),
    ("https://[::1]x/", None, None, None, None),
    ("https://[]/x", None, None, None, None),
    ("https://[x]/x", None, None, None, None),
    ("https://SHOP.EXAMPLE.BOX/products/BOX/", "/products/BOX", "shop.example.box", "shop.example.box",
     "/products/BOX/"),  # only dots and slashes are stripped, not letters
    ("https://\uff45\uff58\uff41\uff4d\uff50\uff4c\uff45.com/", "/", "example.com", "example.com", "/"),  # UTS 46 maps fullwidth
    ("https://Foo_Bar.\uff25\uff38\uff21\uff2d\uff30\uff2c\uff25.com/", "/", "foo_bar.example.com", "foo_bar.example.com", "/"),
    ("/a%80b%FF", "/a%80b%FF", None, None, "/a%80b%FF"),  # the ends of the invalid-byte range stay encoded
    ("example.x/blog", None, None, None, None),  # a one-letter last label is no TLD: a relative path
    ("example.123/blog", None, None, None, None),
]


@pytest.fixture
def conn():
    c = sqlite3.connect(":memory:")
    urlkeys.register(c)
    yield c
    c.close()


@pytest.mark.parametrize(("value", "key", "host", "bare", "path"), CASES)
def test_url_functions_on_real_shaped_values(conn, value, key, host, bare, path):
    got = conn.execute("SELECT url_key(?1), url_host(?1), url_host(?1, 'strip-www'), url_path(?1)", (value,)).fetchone()
    assert got == (key, host, bare, path)


@pytest.mark.parametrize(("value", "name", "expected"), [
    ("/blog/post?utm_source=news+letter&utm_medium=email", "utm_source", "news letter"),
    ("https://www.example.com/?utm_campaign=rebajas%20de%20oto%C3%B1o&utm_campaign=second", "utm_campaign", "rebajas de otoño"),
    ("https://www.example.com/?gclid=Cj0KCQ%3D%3D#utm_source=frag", "gclid", "Cj0KCQ=="),
    ("https://www.example.com/?q=a%2Fb", "q", "a/b"),
    ("https://www.example.com/?flag&x=1", "flag", ""),
    ("https://www.example.com/?flag=&x=1", "flag", ""),
    ("https://www.example.com/?x=1", "utm_source", None),
    ("https://www.example.com/#utm_source=frag", "utm_source", None),  # the fragment is no query
    ("/p?caf%C3%A9=1", "café", "1"),
    ("/p?bad=%E9", "bad", "%E9"),
    ("(not set)", "x", None),
])
def test_url_param(conn, value, name, expected):
    assert conn.execute("SELECT url_param(?, ?)", (value, name)).fetchone()[0] == expected


def test_non_text_and_null_give_null(conn):
    assert conn.execute("SELECT url_key(NULL), url_key(42), url_key(4.2), url_host(X'41'), url_path(NULL), "
                        "url_param(NULL, 'a'), url_param('/?a=1', NULL)").fetchone() == (None,) * 7


def test_the_three_shapes_of_one_page_share_a_key(conn):
    """Issue 24's motivating trio: Search Console, GA4 landingPage and the export's page_location."""
    shapes = ["https://www.example.com/blog/caf%C3%A9/", "/blog/café?utm_source=news", "https://www.example.com/blog/caf%C3%A9?gclid=1",
              "www.example.com/blog/café/index.html"]
    assert {conn.execute("SELECT url_key(?)", (s,)).fetchone()[0] for s in shapes} == {"/blog/café"}


def test_registered_deterministic_so_sqlite_accepts_them_in_indexes_and_generated_columns(conn):
    # SQLite refuses non-deterministic functions in an index expression: this proves deterministic=True.
    conn.execute("CREATE TABLE t (u TEXT)")
    conn.execute("CREATE INDEX k ON t (url_key(u))")
    conn.executemany("INSERT INTO t VALUES (?)", [("/a/",), ("https://x.com/a",), ("/b",)])
    assert conn.execute("SELECT url_key(u), COUNT(*) FROM t GROUP BY 1 ORDER BY 1").fetchall() == [("/a", 2), ("/b", 1)]


def test_acp_query_has_them_and_says_so(tmp_path):
    store = DatasetStore(tmp_path)
    store.write_dataset("gsc_x", [{"name": "page", "type": "string"}, {"name": "clicks", "type": "integer"}],
                        iter([{"page": "https://www.example.com/a/", "clicks": 3}, {"page": "https://www.example.com/a", "clicks": 4}]),
                        {"origin": "acp"})
    response, _ = own_tools.query(store, "SELECT url_key(page) AS k, url_host(page, 'strip-www') AS h, SUM(clicks) AS c "
                                         "FROM gsc_x GROUP BY 1, 2")
    assert response["rows"] == [{"k": "/a", "h": "example.com", "c": 7}]
    description = next(t for t in own_tools.TOOLS if t["name"] == "acp_query")["description"]
    for name in ("url_key(x)", "url_host(x[, 'strip-www'])", "url_path(x)", "url_param(x, name)"):
        assert sum(line.startswith(f"- {name}:") for line in description.splitlines()) == 1
    with pytest.raises(InvalidArguments, match="url_host takes only 'strip-www' as its second argument"):
        own_tools.query(store, "SELECT url_host(page, 'www') FROM gsc_x")


def test_registered_once_per_connection(monkeypatch, tmp_path):
    """One registration per acp_query connection, whatever the number of datasets or calls of the functions."""
    calls = []
    real = urlkeys.register
    monkeypatch.setattr(urlkeys, "register", lambda c: (calls.append(id(c)), real(c)))
    store = DatasetStore(tmp_path)
    for name in ("one_x", "two_x"):
        store.write_dataset(name, [{"name": "u", "type": "string"}], iter([{"u": f"/{i}/"} for i in range(50)]), {"origin": "acp"})
    own_tools.query(store, "SELECT url_key(a.u) AS k FROM one_x a JOIN two_x b ON url_key(a.u) = url_key(b.u)")
    own_tools.query(store, "SELECT url_key(u) AS k FROM one_x")
    assert len(calls) == 2  # two queries, two connections (ids may repeat: the first was closed)


def test_keys_are_cached_on_the_part_before_query_and_fragment(conn):
    """The export's page_location carries a gclid unique per click: the key is still computed once per page."""
    urlkeys._key.cache_clear()
    rows = [(f"https://www.example.com/p{i % 10}/?utm_source=google&gclid=Cj0K{i}#top",) for i in range(1000)]
    conn.execute("CREATE TABLE e (page_location TEXT)")
    conn.executemany("INSERT INTO e VALUES (?)", rows)
    assert conn.execute("SELECT COUNT(DISTINCT url_key(page_location)) FROM e").fetchone()[0] == 10
    assert urlkeys._key.cache_info().misses == 10
