"""Search Console property ids (6.1): ``https://www.example.com/`` (URL prefix) or ``sc-domain:example.com``.

Normalization: lower-case scheme and host, a trailing slash on URL prefixes, ``sc-domain:`` with a
lower-case host. A bare host (``example.com``) becomes the property the credentials can see:
``sc-domain:`` first, else the URL-prefix property of that host (https first, then www).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from analytics_acp import InvalidArguments

DOMAIN_PREFIX = "sc-domain:"
_HOST = re.compile(r"^(?=.{1,253}$)([a-z0-9\u00a1-\uffff]([a-z0-9\u00a1-\uffff-]{0,61}[a-z0-9\u00a1-\uffff])?\.)*"
                   r"[a-z0-9\u00a1-\uffff]([a-z0-9\u00a1-\uffff-]{0,61}[a-z0-9\u00a1-\uffff])?(:\d{1,5})?$")


@dataclass(frozen=True)
class PropertyId:
    """A syntactically normalized id; ``bare`` when the user gave only a host (the form must be looked up)."""

    id: str
    host: str
    bare: bool = False


def _bad(raw: str) -> InvalidArguments:
    return InvalidArguments(
        f"resource_id {raw[:200]!r} is not a Search Console property. Use a URL-prefix property such as "
        "https://www.example.com/ or a domain property such as sc-domain:example.com."
    )


def _host(text: str, raw: str) -> str:
    host = text.strip().strip(".").lower()
    if not host or not _HOST.match(host):
        raise _bad(raw)
    return host


def parse(raw: str) -> PropertyId:
    """Normalize the text of a property id; raise ACP_INVALID_ARGUMENTS for anything else."""
    text = str(raw).strip()
    if not text:
        raise _bad(text)
    if text.lower().startswith(DOMAIN_PREFIX):
        host = _host(text[len(DOMAIN_PREFIX):].rstrip("/"), text)
        return PropertyId(DOMAIN_PREFIX + host, host.split(":")[0])
    if "://" in text:
        parts = urlsplit(text)
        if parts.scheme.lower() not in ("http", "https") or parts.query or parts.fragment:
            raise _bad(text)
        host = _host(parts.netloc, text)
        path = parts.path or "/"
        if not path.endswith("/"):
            path += "/"
        return PropertyId(urlunsplit((parts.scheme.lower(), host, path, "", "")), host.split(":")[0])
    if "/" in text.rstrip("/"):
        raise _bad(text)
    host = _host(text.rstrip("/"), text)
    return PropertyId(DOMAIN_PREFIX + host, host.split(":")[0], bare=True)


def host_of(site_url: str) -> str:
    """The host a property id is about (without ``www.``), for grouping the forms of one site."""
    try:
        host = parse(site_url).host
    except InvalidArguments:
        return site_url.lower()
    return host[4:] if host.startswith("www.") else host


def same_site(site_url: str, sites: list[str]) -> list[str]:
    """Properties among ``sites`` that are forms of the same site as ``site_url`` (domain, http/https, www)."""
    key = host_of(site_url)
    return [s for s in sites if s != site_url and host_of(s) == key]


def resolve_bare(prop: PropertyId, sites: list[str]) -> str:
    """The property a bare host means: sc-domain if visible, else a URL-prefix form of that host."""
    if prop.id in sites:
        return prop.id
    preferred = [f"https://{prop.host}/", f"https://www.{prop.host}/", f"http://{prop.host}/", f"http://www.{prop.host}/"]
    for candidate in preferred:
        if candidate in sites:
            return candidate
    return prop.id  # not visible at all: the call answers ACP_RESOURCE_NOT_FOUND naming what exists


def describe_alternatives(site_url: str, sites: list[str]) -> str:
    """A sentence naming the forms of the same site that the credentials can see, or ''."""
    others = same_site(site_url, sites)
    if not others:
        return ""
    kinds = [f"{s} ({'domain property' if s.startswith(DOMAIN_PREFIX) else 'URL-prefix property'})" for s in others]
    return f" The same site is available as {', '.join(kinds)}: use that resource_id."
