"""Setup schemas (5.5) and the typed settings a call runs with.

Config: browser executable, headless, viewport, user agent, locale, timeouts, session pool
limits, host rules and ``forward_hits``. Credentials are optional (staging sites): HTTP basic
and extra cookies, both ``writeOnly``; an empty credentials object is valid.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from analytics_acp.errors import CredentialsInvalid
from analytics_acp.state import identity_key

from .urls import HostPolicy

SYSTEM_CHROMIUM = "/usr/bin/chromium"

CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "browser_executable": {
            "type": "string", "format": "path", "title": "Browser executable",
            "description": "Chromium/Chrome binary. Empty: Playwright's own browser if installed, else /usr/bin/chromium.",
            "examples": ["/usr/bin/chromium"],
        },
        "headless": {"type": "boolean", "title": "Headless", "default": True},
        "viewport_width": {"type": "integer", "title": "Viewport width (px)", "default": 1366, "minimum": 200, "maximum": 7680},
        "viewport_height": {"type": "integer", "title": "Viewport height (px)", "default": 768, "minimum": 200, "maximum": 4320},
        "user_agent": {"type": "string", "title": "User agent", "description": "Empty: the browser's own."},
        "locale": {"type": "string", "title": "Locale", "default": "en-US", "examples": ["en-US", "es-ES"]},
        "navigation_timeout_ms": {"type": "integer", "title": "Navigation timeout (ms)", "default": 30000, "minimum": 1000, "maximum": 180000},
        "action_timeout_ms": {"type": "integer", "title": "Action timeout (ms)", "default": 10000, "minimum": 100, "maximum": 120000},
        "settle_ms": {
            "type": "integer", "title": "Settle time after each page (ms)", "default": 1000, "minimum": 0, "maximum": 30000,
            "description": "Wait after the load event (and after each action) so tags can fire their hits.",
        },
        "idle_timeout_s": {"type": "integer", "title": "Session idle timeout (s)", "default": 900, "minimum": 10, "maximum": 86400},
        "max_sessions": {"type": "integer", "title": "Maximum open sessions", "default": 4, "minimum": 1, "maximum": 32},
        "allowed_hosts": {
            "type": "string", "title": "Allowed hosts",
            "description": "Comma-separated host patterns pages may be opened on (example.com, *.example.com). Empty: any host.",
        },
        "blocked_hosts": {
            "type": "string", "title": "Blocked hosts",
            "description": "Comma-separated host patterns never contacted (pages and every request to them are blocked).",
        },
        "forward_hits": {
            "type": "boolean", "title": "Forward analytics hits", "default": False,
            "description": "Off: analytics hits are captured and answered locally, so an audit does not pollute the site's analytics.",
        },
    },
    "required": [],
}

CREDENTIALS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "title": "Staging access (optional)",
    "description": "Only for sites behind HTTP basic authentication or a login cookie. Leave empty for public sites.",
    "properties": {
        "basic_username": {"type": "string", "title": "HTTP basic user"},
        "basic_password": {"type": "string", "title": "HTTP basic password", "writeOnly": True},
        "extra_cookies": {
            "type": "string", "title": "Extra cookies", "writeOnly": True,
            "description": "Cookies added before the first page: 'name=value; name2=value2' or a JSON list of {name, value, domain?, path?}.",
        },
    },
    "required": [],
}


@dataclass
class Settings:
    """The effective config of one call, with the schema defaults applied."""

    browser_executable: str | None = None
    headless: bool = True
    viewport_width: int = 1366
    viewport_height: int = 768
    user_agent: str | None = None
    locale: str | None = "en-US"
    navigation_timeout_ms: int = 30000
    action_timeout_ms: int = 10000
    settle_ms: int = 1000
    idle_timeout_s: int = 900
    max_sessions: int = 4
    allowed_hosts: str | None = None
    blocked_hosts: str | None = None
    forward_hits: bool = False

    @classmethod
    def from_config(cls, config: dict[str, Any] | None) -> Settings:
        """Settings from ``ctx.config`` (unknown keys ignored; empty strings mean unset)."""
        values = {}
        for key in cls.__dataclass_fields__:
            if config and key in config and config[key] not in (None, ""):
                values[key] = config[key]
        return cls(**values)

    @property
    def hosts(self) -> HostPolicy:
        """allowed_hosts / blocked_hosts rules."""
        return HostPolicy(self.allowed_hosts, self.blocked_hosts)

    def launch_key(self) -> tuple[Any, ...]:
        """What needs a new browser process when it changes."""
        return (self.browser_executable, self.headless)

    def context_options(self) -> dict[str, Any]:
        """Options of ``browser.new_context`` (credentials added separately)."""
        options: dict[str, Any] = {"viewport": {"width": self.viewport_width, "height": self.viewport_height}}
        if self.user_agent:
            options["user_agent"] = self.user_agent
        if self.locale:
            options["locale"] = self.locale
        return options


@dataclass
class Access:
    """Optional staging credentials, parsed; never logged or echoed."""

    http_credentials: dict[str, str] | None = None
    cookies: list[dict[str, Any]] | None = None

    @classmethod
    def from_credentials(cls, credentials: dict[str, Any] | None) -> Access:
        """Parse the credentials object; ACP_CREDENTIALS_INVALID (without values) when malformed."""
        if not credentials:
            return cls()
        user, password = credentials.get("basic_username"), credentials.get("basic_password")
        http = None
        if user or password:
            if not user or not password:
                raise CredentialsInvalid("HTTP basic authentication needs both the user and the password.")
            http = {"username": str(user), "password": str(password)}
        return cls(http_credentials=http, cookies=parse_cookies(credentials.get("extra_cookies")))

    def fingerprint(self) -> str:
        """A hash that changes when the credentials change (decides whether a session is reused)."""
        return identity_key(self.http_credentials, self.cookies)[:16]


def parse_cookies(value: Any) -> list[dict[str, Any]] | None:
    """``extra_cookies`` -> a list of {name, value, domain?, path?}; the values are never echoed in errors."""
    if value in (None, ""):
        return None
    text = str(value).strip()
    if text.startswith("["):
        try:
            items = json.loads(text)
        except ValueError as exc:
            raise CredentialsInvalid("extra_cookies is not valid JSON; use a list of {name, value} objects.") from exc
        if not isinstance(items, list) or not all(isinstance(i, dict) and i.get("name") and "value" in i for i in items):
            raise CredentialsInvalid("extra_cookies must be a JSON list of objects with name and value.")
        allowed = {"name", "value", "domain", "path", "secure", "httpOnly", "sameSite", "expires"}
        return [{k: v for k, v in item.items() if k in allowed} for item in items]
    cookies = []
    for part in text.split(";"):
        if not part.strip():
            continue
        name, sep, val = part.strip().partition("=")
        if not sep or not name.strip():
            raise CredentialsInvalid("extra_cookies must look like 'name=value; name2=value2'.")
        cookies.append({"name": name.strip(), "value": val.strip()})
    return cookies or None
