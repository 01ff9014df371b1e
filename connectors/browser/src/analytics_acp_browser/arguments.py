"""The argument models of ``capture`` and ``screenshot`` (issue 38.1): the core publishes their schemas and hands
each tool its parsed object. Every step of ``actions`` is checked here, so a bad step is refused before the browser
starts and never leaves a half-run flow. A light module (no Playwright): declaration.py imports it at start-up."""

from __future__ import annotations

from typing import Any, Literal

from analytics_acp import ToolArguments
from analytics_acp.constants import ACP_URL_ANNOTATION
from pydantic import Field, model_validator
from pydantic.json_schema import JsonDict

MAX_ACTIONS = 50
MAX_WAIT_MS = 30000
ActionName = Literal["click", "fill", "press", "scroll", "wait_for", "navigate"]
# Per action: the fields it needs and the ones it may take.
FIELDS: dict[str, tuple[set[str], set[str]]] = {
    "click": ({"selector"}, set()),
    "fill": ({"selector", "value"}, set()),
    "press": ({"key"}, {"selector"}),
    "scroll": (set(), {"to", "y", "selector"}),
    "wait_for": (set(), {"selector", "ms", "state"}),
    "navigate": ({"url"}, set()),
}
HTTP_URL: JsonDict = {ACP_URL_ANNOTATION: ["^https?://"]}  # 8.11: the host may check or rewrite what the model passes


class Action(ToolArguments):
    """One step of a capture: ``action`` and the fields that action takes (see ``FIELDS``)."""

    action: ActionName
    selector: str | None = None
    value: str | None = None
    key: str | None = None
    to: Literal["top", "bottom"] | None = None
    y: int | None = None
    ms: int | None = Field(None, ge=0, le=MAX_WAIT_MS)
    state: Literal["attached", "detached", "visible", "hidden"] | None = None
    url: str | None = None

    def fields(self) -> dict[str, Any]:
        """The fields this step was given (a null one counts as not given)."""
        return {k: v for k, v in self.model_dump(exclude={"action"}).items() if v is not None}

    @model_validator(mode="after")
    def _fits_the_action(self) -> Action:
        given = self.fields()
        required, optional = FIELDS[self.action]
        missing = sorted(required - given.keys())
        if missing:
            raise ValueError(f"{self.action} needs {', '.join(missing)}.")
        extra = sorted(given.keys() - required - optional)
        if extra:
            raise ValueError(f"{self.action} does not take {', '.join(extra)}.")
        empty = [k for k in ("selector", "key", "url") if k in given and not given[k].strip()]
        if empty:
            raise ValueError(f"{empty[0]} is empty.")
        if self.action == "scroll" and len(given) != 1:
            raise ValueError("scroll takes exactly one of to, y or selector.")
        if self.action == "wait_for":
            if ("selector" in given) == ("ms" in given):
                raise ValueError("wait_for takes either selector or ms.")
            if "state" in given and "selector" not in given:
                raise ValueError("state only applies to wait_for selector.")
        return self


class CaptureArguments(ToolArguments):
    """capture: the start page, the steps, when a page counts as loaded."""

    url: str | None = Field(None, description="An http(s) URL on the resource_id origin, or a path. Default: the home page.",
                            json_schema_extra=HTTP_URL)
    actions: list[Action] = Field(
        default_factory=list, max_length=MAX_ACTIONS,
        description=("In order, after load: click {selector}; fill {selector, value}; press {key, selector?}; scroll {to} "
                     "or {y} or {selector}; wait_for {selector, state?} or {ms}; navigate {url}. Playwright selectors."))
    wait_until: Literal["load", "domcontentloaded", "networkidle", "commit"] = Field(
        "load", description="When the page counts as loaded.")


class ScreenshotArguments(ToolArguments):
    """screenshot: a page to open first, or the conversation's current one."""

    url: str | None = Field(None, description=(
        "Page to open first (absolute http(s) URL, or a path relative to the current page). "
        "Empty: the page the last capture of this conversation left open."), json_schema_extra=HTTP_URL)
    full_page: bool = Field(False, description="Whole scrollable page instead of the viewport.")
