"""The steps of ``capture``, run in order on the page.

Each step is an object with ``action`` and its fields:
``click {selector}``, ``fill {selector, value}``, ``press {key, selector?}``,
``scroll {to: "bottom"|"top"} | {y}`` or ``{selector}`` (into view),
``wait_for {selector} | {ms}`` (at most 30000 ms) and ``navigate {url}``.
The argument model (``arguments.Action``) refuses an invalid step before the browser starts
(ACP_INVALID_ARGUMENTS), so a bad step never leaves a half-run flow.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from analytics_acp.errors import InvalidArguments

from .arguments import Action


@dataclass
class Step:
    """One validated step."""

    action: str
    fields: dict[str, Any]

    def describe(self) -> dict[str, Any]:
        """The step as the manifest shows it."""
        return {"action": self.action, **self.fields}


def steps_of(actions: list[Action]) -> list[Step]:
    """The parsed ``actions`` argument (each step checked by ``arguments.Action``) as the steps to run."""
    return [Step(a.action, a.fields()) for a in actions]


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
