"""URL functions of acp_query (issue 24): the keys that join Search Console pages, GA4 landing pages and
the GA4 BigQuery export's page_location.

The same page arrives in three shapes: Search Console ``https://www.example.com/blog/caf%C3%A9/``,
GA4 ``landingPage`` ``/blog/café?utm_source=news`` and the export's ``page_location``
``https://www.example.com/blog/caf%C3%A9?gclid=...``. ``url_key`` maps all three to ``/blog/café``.
Every function is pure and never raises on data: a value it cannot read gives NULL.

Reading a value (``_split``):
- a full URL (``scheme://host/path?query#fragment``, or ``//host/path``): the scheme is dropped;
- a path (``/blog/post?x=1``), or a bare query/fragment (``?x=1``: the root);
- ``host/path`` without a scheme when the first segment looks like a host name (a dot and a
  letters-only or ``xn--`` last label, or ``localhost``): GA4's ``fullPageUrl`` has that shape;
- a Search Console property ``sc-domain:example.com``: a host, no page (``url_key`` is NULL);
- NULL for NULL, non-text values, GA4's placeholders (``(not set)``, ``(other)``, ...), a URL
  without host, a host with characters no host name has (spaces, ``@`` after userinfo is fine),
  a bad port or IPv6 literal, and anything else (``blog/post``: a relative path is ambiguous).
  An empty string is the root (an empty CSV cell is NULL before it gets here).

Decisions where the sources disagree:
- Hosts are Unicode, lower-case (``xn--mnchen-3ya.de`` and ``MÜNCHEN.de`` are both ``münchen.de``):
  readable in answers. Both spellings go through IDNA 2008 with the UTS 46 mapping (the ``idna``
  package), as browsers read hosts, so ``xn--strae-oqa.de`` and ``STRAßE.de`` are both
  ``straße.de`` (Python's own IDNA 2003 codec would make the second ``strasse.de``). A label that
  is not valid IDNA (an underscore) is compared lower-cased as written. Port and trailing dot are dropped.
- Paths are percent-decoded as UTF-8, so ``caf%C3%A9``, ``caf%c3%a9`` and ``café`` are equal; an
  invalid sequence (``%E9`` from Latin-1, ``%ZZ``) is kept as written (hex upper-cased). ``%2F``
  stays encoded: decoding it would change where the segments split. ``+`` in a path is a plus.
  Paths keep their case (servers treat ``/Blog`` and ``/blog`` as different pages).
- A trailing slash is dropped (``/blog/`` is ``/blog``); the root stays ``/``. A last segment
  ``index.html``, ``index.htm`` or ``index.php`` (exactly, lower-case: the default documents of
  Apache, nginx and PHP sites) is the directory: ``/blog/index.html`` is ``/blog``. Other names
  (``default.aspx``, ``home``) are pages of their own; say so in the answer if they matter.
- Query and fragment are dropped by ``url_key``/``url_path``; ``url_param`` reads the query as a
  form (``+`` is a space) and gives the first value of a name, ``''`` for ``?name`` or ``?name=``.
"""

from __future__ import annotations

import ipaddress
import re
import sqlite3
from functools import lru_cache
from typing import Any, NamedTuple

PLACEHOLDERS = frozenset({"(not set)", "(other)", "(not provided)", "(none)", "(direct)", "(data not available)"})
INDEX_FILES = frozenset({"index.html", "index.htm", "index.php"})
STRIP_WWW = "strip-www"
SC_DOMAIN = "sc-domain:"

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")
_HOSTLIKE = re.compile(r"^(?:[^\s/?#.]+\.)+(?:[^\W\d_]{2,}|xn--[a-z0-9-]+)\.?(?::\d*)?$|^localhost(?::\d*)?$", re.IGNORECASE)
_BAD_HOST_CHARS = re.compile(r"[\s<>\"{}|\\^`%/]")
_PERCENT_RUN = re.compile(r"(?:%[0-9A-Fa-f]{2})+")
_ENCODED_SLASH = "%2F"

# One line per function for the acp_query tool description (own_tools.py).
# In acp_query's description, read in every conversation: brief (issue 23.3); the README has the full rules.
DESCRIPTIONS = {
    "url_key": "url_key(x): a URL's or path's page key (host, query, trailing slash, index.* dropped)",
    "url_host": "url_host(x[, 'strip-www']): the lower-case host",
    "url_path": "url_path(x): the path",
    "url_param": "url_param(x, name): a query parameter's value",
}


class Parts(NamedTuple):
    """A value read as a URL: host (None for a path) and the raw path."""

    host: str | None
    path: str
    page: bool  # False for a property string (sc-domain:), which names a site, not a page


@lru_cache(maxsize=65536)  # extractions repeat a page on many rows (per date, query, device)
def _split(head: str) -> Parts | None:
    """Read ``head``, a value without its query and fragment (``_head``); None when it is no URL or path."""
    text = head.strip()
    if not text:
        return Parts(None, "/", True)  # an empty path is the root (RFC 3986 6.2.3)
    if text in PLACEHOLDERS:
        return None
    if text.lower().startswith(SC_DOMAIN):
        host = _host(text[len(SC_DOMAIN):])
        return None if host is None else Parts(host, "/", False)
    if _SCHEME.match(text):
        return _with_host(text.split("://", 1)[1])
    if text.startswith("//"):
        return _with_host(text[2:])
    if text.startswith("/"):
        return Parts(None, text, True)
    if _HOSTLIKE.match(text.split("/", 1)[0]):
        return _with_host(text)
    return None


def _cut(text: str, mark: str) -> tuple[str, str | None]:
    head, found, tail = text.partition(mark)
    return head, (tail if found else None)


def _with_host(rest: str) -> Parts | None:
    authority, slash, path = rest.partition("/")
    host = _host(authority.rsplit("@", 1)[-1])  # userinfo is never part of the host
    if host is None:
        return None
    return Parts(host, slash + path if slash else "/", True)


def _host(authority: str) -> str | None:
    """The lower-case Unicode host name of ``host[:port]`` (IPv6 literals keep their brackets), or None."""
    if authority.startswith("["):
        end = authority.find("]")
        if end < 0 or (authority[end + 1:] and not re.fullmatch(r":\d*", authority[end + 1:])) or not _ipv6(authority[1:end]):
            return None  # unclosed, no IPv6 address inside ("[]", "[x]"), or followed by anything but a port
        return authority[: end + 1].lower()
    name, colon, port = authority.partition(":")
    if colon and not port.isdigit() and port != "":
        return None
    name = name.rstrip(".")
    if not name or _BAD_HOST_CHARS.search(name):
        return None
    return _idn(name)


def _ipv6(text: str) -> bool:
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


@lru_cache(maxsize=4096)
def _idn(name: str) -> str:
    """A host in one form: lower-case, IDN labels in Unicode (IDNA 2008 with UTS 46 mapping, as browsers read hosts)."""
    lowered = name.lower()
    if lowered.isascii() and "xn--" not in lowered:
        return lowered  # nearly every host: no IDN library needed
    import idna  # IDNA 2008: Python's own codec is IDNA 2003, which maps straße.de to strasse.de

    try:
        return str(idna.decode(idna.encode(name, uts46=True)))
    except (idna.IDNAError, UnicodeError, ValueError):
        pass
    labels = []
    for label in name.split("."):  # one bad label (an underscore, say) does not spoil the others
        try:
            labels.append(str(idna.decode(idna.encode(label, uts46=True))))
        except (idna.IDNAError, UnicodeError, ValueError):
            labels.append(label.lower())
    return ".".join(labels)


def _decode_run(match: re.Match[str]) -> str:
    raw = bytes.fromhex(match.group(0).replace("%", ""))
    text = raw.decode("utf-8", "surrogateescape")  # invalid bytes become lone surrogates, put back as %XX below
    out = []
    for ch in text:
        if "\udc80" <= ch <= "\udcff":
            out.append(f"%{ord(ch) - 0xDC00:02X}")
        elif ch == "/":
            out.append(_ENCODED_SLASH)
        else:
            out.append(ch)
    return "".join(out)


def percent_decode(text: str) -> str:
    """``%XX`` sequences decoded as UTF-8; invalid ones kept (upper-case hex), ``%2F`` kept encoded."""
    return _PERCENT_RUN.sub(_decode_run, text) if "%" in text else text


def _form_decode(text: str) -> str:
    decoded = percent_decode(text.replace("+", " "))
    return decoded.replace(_ENCODED_SLASH, "/")  # in a parameter value a slash is only data


def _head(text: str) -> str:
    """The value up to its query or fragment: all url_key, url_host and url_path read (and what they cache on,
    so a page_location whose gclid differs on every row still hits the cache)."""
    cut = len(text)
    for mark in "?#":
        at = text.find(mark, 0, cut)
        if at >= 0:
            cut = at
    return text[:cut]


@lru_cache(maxsize=65536)
def _key(head: str) -> str | None:
    parts = _split(head)
    if parts is None or not parts.page:
        return None
    path = percent_decode(parts.path)  # every Parts path starts with "/" (_split), and decoding keeps it
    rest, _, last = path.rpartition("/")
    if last in INDEX_FILES:
        path = rest + "/"
    path = path.rstrip("/")
    return path or "/"


def url_key(value: Any) -> str | None:
    """The comparable page key of a full URL or a path (see the module docstring); None if unreadable."""
    return _key(_head(value)) if isinstance(value, str) else None


def url_host(value: Any, option: Any = None) -> str | None:
    """The lower-case host; ``option`` 'strip-www' also drops a leading ``www.``. None for paths and unreadable values."""
    if option is not None and option != STRIP_WWW:
        raise ValueError(f"url_host's second argument must be '{STRIP_WWW}'")
    if not isinstance(value, str):
        return None
    parts = _split(_head(value))
    if parts is None or parts.host is None:
        return None
    host = parts.host
    if option == STRIP_WWW and host.startswith("www.") and host.count(".") >= 2:
        host = host[4:]
    return host


def url_path(value: Any) -> str | None:
    """The path as written (no decoding, no slash changes), without query and fragment; '/' for a bare host."""
    if not isinstance(value, str):
        return None
    parts = _split(_head(value))
    return None if parts is None or not parts.page else parts.path


def url_param(value: Any, name: Any) -> str | None:
    """The first value of query parameter ``name`` (form-decoded), '' when it has none, None when absent."""
    if not isinstance(value, str) or not isinstance(name, str) or _split(_head(value)) is None:
        return None
    query = _cut(_cut(value, "#")[0], "?")[1]  # the query ends at the fragment
    if not query:
        return None
    for pair in query.split("&"):
        key, _, raw = pair.partition("=")
        if _form_decode(key) == name:
            return _form_decode(raw)
    return None


FUNCTIONS: list[tuple[str, int, Any]] = [
    ("url_key", 1, url_key),
    ("url_host", 1, url_host),
    ("url_host", 2, url_host),
    ("url_path", 1, url_path),
    ("url_param", 2, url_param),
]


def register(conn: sqlite3.Connection) -> None:
    """Make the URL functions available to SQL on ``conn`` (deterministic: SQLite may reuse their results)."""
    for name, nargs, function in FUNCTIONS:
        conn.create_function(name, nargs, function, deterministic=True)


def description_lines() -> str:
    """The functions as the acp_query tool description lists them, one line each."""
    return "\n".join(f"- {line}" for line in DESCRIPTIONS.values())
