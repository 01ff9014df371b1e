"""Last line of defence for 16.8: no value from sources.json credentials reaches the model.

ACP servers must never echo credentials (5.4), and the bridge never puts them in its own
texts; this scrubber still removes any known secret from every text the client receives.
"""

from __future__ import annotations

from typing import Any

REDACTED = "[redacted]"


class Redactor:
    """Replaces known secret values (longest first) in strings and nested JSON values."""

    def __init__(self, secrets: set[str] | None = None):
        self._secrets: list[str] = []
        self.add(secrets or set())

    def add(self, secrets: set[str]) -> None:
        """Register more secret values."""
        merged = set(self._secrets) | {s for s in secrets if s}
        self._secrets = sorted(merged, key=len, reverse=True)

    def text(self, value: str) -> str:
        """The string with every secret replaced by [redacted]."""
        for secret in self._secrets:
            if secret in value:
                value = value.replace(secret, REDACTED)
        return value

    def value(self, value: Any) -> Any:
        """A JSON-like value with secrets scrubbed from every string (keys included)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(str(k)): self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(v) for v in value]
        return value
