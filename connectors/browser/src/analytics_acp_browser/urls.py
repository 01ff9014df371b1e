"""URL safety and origins: which URLs the browser may open, and the resource_id of a site.

Only http and https are ever navigated to (file:, chrome:, data:, javascript:, about: ...
are refused with ACP_INVALID_ARGUMENTS). The resource_id of this connector is the page
origin ``scheme://host[:port]`` (6.1), normalized from any URL the user or model writes.

Host patterns (config ``allowed_hosts`` / ``blocked_hosts``, comma separated):
``example.com`` matches that host only; ``*.example.com`` matches example.com and every
subdomain; other ``*``/``?`` wildcards follow fnmatch; ``host:port`` also pins the port.
"""

from __future__ import annotations

import fnmatch
from urllib.parse import urljoin, urlsplit

from analytics_acp.errors import InvalidArguments

ALLOWED_SCHEMES = ("http", "https")
_DEFAULT_PORTS = {"http": 80, "https": 443}
# Second-level labels under which registrations happen (co.uk, com.au ...): a small list,
# enough for first/third-party heuristics without shipping the public suffix list.
_SECOND_LEVEL = {"co", "com", "org", "net", "gov", "ac", "edu", "gob", "ne", "or"}


def _idna(host: str) -> str:
    host = host.strip().rstrip(".").lower()
    if not host:
        return host
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError as exc:
        raise InvalidArguments(f"The host {host!r} is not a valid domain name.") from exc


def _scheme_error(scheme: str) -> InvalidArguments:
    return InvalidArguments(
        f"Only http and https URLs can be opened; {scheme}: URLs are refused. Pass a web page URL such as https://example.com/."
    )


def split_url(url: str) -> tuple[str, str, int | None, str]:
    """Return (scheme, host, explicit port or None, rest) of an absolute http(s) URL; raise otherwise."""
    if not isinstance(url, str) or not url.strip():
        raise InvalidArguments("The URL is empty. Pass a web page URL such as https://example.com/.")
    text = url.strip()
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    if scheme and scheme not in ALLOWED_SCHEMES:
        raise _scheme_error(scheme)
    if not scheme or not parts.netloc:
        raise InvalidArguments(f"{text!r} is not an absolute URL. Pass a URL like https://example.com/page.")
    try:
        port = parts.port
    except ValueError as exc:
        raise InvalidArguments(f"{text!r} has an invalid port.") from exc
    host = _idna(parts.hostname or "")
    if not host:
        raise InvalidArguments(f"{text!r} has no host.")
    return scheme, host, port, text


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of an absolute http(s) URL (default ports dropped, host lowercased, IDNA)."""
    scheme, host, port, _ = split_url(url)
    if ":" in host and not host.startswith("["):  # IPv6 literal
        host = f"[{host}]"
    if port is None or port == _DEFAULT_PORTS[scheme]:
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


def normalize_resource_id(value: str) -> str:
    """The resource_id for any URL, origin or bare host (``shop.example.com`` -> ``https://shop.example.com``)."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidArguments("resource_id must be a site origin such as https://shop.example.com.")
    text = value.strip()
    scheme = urlsplit(text).scheme.lower()
    # "localhost:8080" parses with scheme "localhost"; a real scheme is followed by "//" or is a known one.
    has_scheme = "://" in text or scheme in ("file", "data", "javascript", "chrome", "about", "blob", "view-source")
    if has_scheme and scheme not in ALLOWED_SCHEMES:
        raise _scheme_error(scheme)
    if not has_scheme:
        text = "https://" + text
    return origin_of(text)


def resolve(url: str | None, base: str | None) -> str:
    """An absolute http(s) URL: ``url`` as is, relative to ``base`` (an origin or page URL), or a bare host."""
    if url is None or (isinstance(url, str) and not url.strip()):
        if not base:
            raise InvalidArguments("Pass url (the page to open) or resource_id (the site origin).")
        return base.rstrip("/") + "/"
    if not isinstance(url, str):
        raise InvalidArguments("url must be a string.")
    text = url.strip()
    if text.startswith("//"):
        text = (urlsplit(base).scheme if base else "https") + ":" + text
    scheme = urlsplit(text).scheme.lower()
    if scheme in ALLOWED_SCHEMES:
        split_url(text)
        return text
    if scheme and not _looks_like_host_port(text):
        raise _scheme_error(scheme)  # javascript:, data:, file:, chrome:, about:, mailto: ...
    head = text.split("/")[0]
    is_relative = text.startswith(("/", "?", "#", ".")) or ("." not in head and not _looks_like_host_port(text))
    if is_relative:
        if not base:
            raise InvalidArguments(f"{text!r} is a relative URL; pass an absolute URL or resource_id.")
        absolute = urljoin(base, text)
    else:
        absolute = "https://" + text  # a bare host such as shop.example.com/cart
    split_url(absolute)
    return absolute


def _looks_like_host_port(text: str) -> bool:
    head = text.split("/")[0]
    host, _, port = head.rpartition(":")
    return bool(host) and port.isdigit()


def parse_patterns(value: str | list[str] | None) -> list[str]:
    """Host patterns from a comma/space separated config string (or a list)."""
    if not value:
        return []
    items = value if isinstance(value, list) else str(value).replace(",", " ").split()
    return [p.strip().lower() for p in items if p and p.strip()]


def host_matches(host: str, port: int | None, pattern: str) -> bool:
    """Whether ``host[:port]`` matches one host pattern (see the module docstring)."""
    host = host.lower()
    pat_host, pat_port = pattern, None
    if pattern.count(":") == 1:
        pat_host, _, raw_port = pattern.partition(":")
        if raw_port.isdigit():
            pat_port = int(raw_port)
        else:
            pat_host = pattern
    if pat_port is not None and port != pat_port:
        return False
    if pat_host.startswith("*."):
        base = pat_host[2:]
        return host == base or host.endswith("." + base)
    if "*" in pat_host or "?" in pat_host:
        return fnmatch.fnmatchcase(host, pat_host)
    return host == pat_host


def effective_port(url: str) -> tuple[str, int]:
    """(host, port with the scheme default) of an absolute URL."""
    scheme, host, port, _ = split_url(url)
    return host, port if port is not None else _DEFAULT_PORTS[scheme]


class HostPolicy:
    """allowed_hosts / blocked_hosts from the config: pages may only be opened on allowed hosts."""

    def __init__(self, allowed: str | list[str] | None = None, blocked: str | list[str] | None = None):
        self.allowed = parse_patterns(allowed)
        self.blocked = parse_patterns(blocked)

    def is_blocked(self, url: str) -> bool:
        """True for a URL on a blocked host (any request to it is aborted)."""
        try:
            host, port = effective_port(url)
        except InvalidArguments:
            return False
        return any(host_matches(host, port, p) for p in self.blocked)

    def may_open(self, url: str) -> bool:
        """True when a page (top-level navigation) may be opened on this URL's host."""
        host, port = effective_port(url)
        if any(host_matches(host, port, p) for p in self.blocked):
            return False
        return not self.allowed or any(host_matches(host, port, p) for p in self.allowed)

    def check_page(self, url: str) -> str:
        """Validate a page URL (scheme and host rules) or raise ACP_INVALID_ARGUMENTS."""
        split_url(url)
        if not self.may_open(url):
            host = split_url(url)[1]
            raise InvalidArguments(
                f"The host {host} is not allowed by this source's configuration (allowed_hosts / blocked_hosts). "
                "Ask the user to change the source settings to audit it."
            )
        return url


def registrable_domain(host: str) -> str:
    """A heuristic registrable domain (``www.shop.example.co.uk`` -> ``example.co.uk``); IPs stay whole."""
    host = host.lower().lstrip(".")
    labels = host.split(".")
    if host.replace(".", "").isdigit() or ":" in host or len(labels) <= 2:
        return host
    if labels[-2] in _SECOND_LEVEL and len(labels[-1]) == 2:
        return ".".join(labels[-3:])
    return ".".join(labels[-2:])


def same_site(host_a: str, host_b: str) -> bool:
    """True when two hosts share a registrable domain (first-party relation)."""
    return registrable_domain(host_a) == registrable_domain(host_b)


def host_of(url: str) -> str | None:
    """Lowercased host of any URL, or None."""
    try:
        return (urlsplit(url).hostname or "").lower() or None
    except ValueError:
        return None
