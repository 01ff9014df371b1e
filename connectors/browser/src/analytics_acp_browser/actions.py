"""The ``actions`` argument of ``capture``: an ordered list of simple steps, validated up front.

Each step is an object with ``action`` and its fields:
``click {selector}``, ``fill {selector, value}``, ``press {key, selector?}``,
``scroll {to: "bottom"|"top"} | {y}`` or ``{selector}`` (into view),
``wait_for {selector} | {ms}`` (at most 30000 ms) and ``navigate {url}``.
Invalid steps are refused before the browser starts (ACP_INVALID_ARGUMENTS), so a bad
step never leaves a half-run flow.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from analytics_acp.errors import InvalidArguments

MAX_ACTIONS = 50
MAX_WAIT_MS = 30000
FIELDS = {
    "click": ({"selector"}, set()),
    "fill": ({"selector", "value"}, set()),
    "press": ({"key"}, {"selector"}),
    "scroll": (set(), {"to", "y", "selector"}),
    "wait_for": (set(), {"selector", "ms", "state"}),
    "navigate": ({"url"}, set()),
}

SCHEMA: dict[str, Any] = {
    "type": "array",
    "maxItems": MAX_ACTIONS,
    "description": (
        "In order, after load: click {selector}; fill {selector, value}; press {key, selector?}; scroll {to} or {y} "
        "or {selector}; wait_for {selector, state?} or {ms}; navigate {url}. Playwright selectors."
    ),
    "items": {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": list(FIELDS)},
            "selector": {"type": "string"},
            "value": {"type": "string"},
            "key": {"type": "string"},
            "to": {"type": "string", "enum": ["top", "bottom"]},
            "y": {"type": "integer"},
            "ms": {"type": "integer", "minimum": 0, "maximum": MAX_WAIT_MS},
            "state": {"type": "string", "enum": ["attached", "detached", "visible", "hidden"]},
            "url": {"type": "string"},
        },
        "required": ["action"],
    },
}


@dataclass
class Step:
    """One validated step."""

    action: str
    fields: dict[str, Any]

    def describe(self) -> dict[str, Any]:
        """The step as the manifest shows it."""
        return {"action": self.action, **self.fields}


def parse(raw: Any) -> list[Step]:
    """Validate the ``actions`` argument; raise ACP_INVALID_ARGUMENTS naming the bad step."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise InvalidArguments("actions must be a list of steps such as [{\"action\": \"click\", \"selector\": \"#buy\"}].")
    if len(raw) > MAX_ACTIONS:
        raise InvalidArguments(f"actions has {len(raw)} steps; at most {MAX_ACTIONS} are allowed. Split the flow into several captures.")
    steps = []
    for index, item in enumerate(raw):
        where = f"actions[{index}]"
        if not isinstance(item, dict) or not isinstance(item.get("action"), str):
            raise InvalidArguments(f"{where} must be an object with an 'action' ({', '.join(FIELDS)}).")
        action = item["action"]
        if action not in FIELDS:
            raise InvalidArguments(f"{where}: unknown action {action!r}. Valid actions: {', '.join(FIELDS)}.")
        required, optional = FIELDS[action]
        fields = {k: v for k, v in item.items() if k != "action"}
        missing = sorted(required - fields.keys())
        if missing:
            raise InvalidArguments(f"{where} ({action}) needs {', '.join(missing)}.")
        extra = sorted(fields.keys() - required - optional)
        if extra:
            raise InvalidArguments(f"{where} ({action}) does not take {', '.join(extra)}.")
        for key in ("selector", "value", "key", "url"):
            if key in fields and not isinstance(fields[key], str):
                raise InvalidArguments(f"{where}: {key} must be a string.")
            if key in ("selector", "key", "url") and key in fields and not fields[key].strip():
                raise InvalidArguments(f"{where}: {key} is empty.")
        if action == "scroll":
            if len(fields) != 1:
                raise InvalidArguments(f"{where} (scroll) takes exactly one of to, y or selector.")
            if "to" in fields and fields["to"] not in ("top", "bottom"):
                raise InvalidArguments(f"{where}: scroll to must be 'top' or 'bottom'.")
            if "y" in fields and (not isinstance(fields["y"], int) or isinstance(fields["y"], bool)):
                raise InvalidArguments(f"{where}: scroll y must be an integer number of pixels.")
        if action == "wait_for":
            if ("selector" in fields) == ("ms" in fields):
                raise InvalidArguments(f"{where} (wait_for) takes either selector or ms.")
            if "ms" in fields:
                ms = fields["ms"]
                if not isinstance(ms, int) or isinstance(ms, bool) or not 0 <= ms <= MAX_WAIT_MS:
                    raise InvalidArguments(f"{where}: ms must be an integer between 0 and {MAX_WAIT_MS}.")
            if "state" in fields and "selector" not in fields:
                raise InvalidArguments(f"{where}: state only applies to wait_for selector.")
            if "state" in fields and fields["state"] not in ("attached", "detached", "visible", "hidden"):
                raise InvalidArguments(f"{where}: state must be attached, detached, visible or hidden.")
        steps.append(Step(action, fields))
    return steps


async def run_step(page: Any, step: Step, timeout_ms: int) -> None:
    """Execute one step on a Playwright page (navigate is handled by the capture itself)."""
    f = step.fields
    if step.action == "click":
        await page.click(f["selector"], timeout=timeout_ms)
    elif step.action == "fill":
        await page.fill(f["selector"], f["value"], timeout=timeout_ms)
    elif step.action == "press":
        if "selector" in f:
            await page.press(f["selector"], f["key"], timeout=timeout_ms)
        else:
            await page.keyboard.press(f["key"])
    elif step.action == "scroll":
        if "selector" in f:
            await page.locator(f["selector"]).first.scroll_into_view_if_needed(timeout=timeout_ms)
        elif "y" in f:
            await page.evaluate("(y) => window.scrollTo(0, y)", f["y"])
        elif f["to"] == "bottom":
            await page.evaluate("() => window.scrollTo(0, document.documentElement.scrollHeight)")
        else:
            await page.evaluate("() => window.scrollTo(0, 0)")
    elif step.action == "wait_for":
        if "ms" in f:
            await page.wait_for_timeout(f["ms"])
        else:
            await page.wait_for_selector(f["selector"], state=f.get("state", "visible"), timeout=timeout_ms)
    else:  # pragma: no cover - parse() only lets known actions through
        raise InvalidArguments(f"Unknown action {step.action!r}.")
