"""Activity (issue 37.1): what the model (and the page) ran through the bridge, newest first, from the bridge's record.

The record is the bridge's (``analytics_acp_bridge.store.activity``: ``acp-data/activity.jsonl``), already
scrubbed of every credential value by the bridge that wrote it; the page scrubs it again with the secrets it
knows. Each entry links to the datasets it saved (the Datasets view); a failed call shows its typed error
(12.1) in plain words; *Save as query* keeps its source, tool and arguments as a saved query.
"""

from __future__ import annotations

import json
import re
from typing import Any

import anyio
from analytics_acp_bridge.store import activity as record
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from .. import queries
from .common import problem, render, ui
from .datasets import store

OUTCOMES = (("ok", "Succeeded"), ("error", "Failed"), ("cancelled", "Cancelled"))
SHOWN = 300  # entries on one page (the record holds a few thousand at most)
# 12.1's errors in the words a person reads first; the ACP's own message follows.
ERROR_WORDS = {
    "ACP_COST_LIMIT_EXCEEDED": "The query would cost more than this source's cost limit allows, so nothing ran.",
    "ACP_CREDENTIALS_MISSING": "The source has no credentials (or cannot read them): set it up on the Sources page.",
    "ACP_CREDENTIALS_INVALID": "The source's credentials were refused: sign in again or fix them on the Sources page.",
    "ACP_RESOURCE_REQUIRED": "The call needs a resource (a property, site, dataset or database) and none was given.",
    "ACP_RESOURCE_NOT_FOUND": "The resource named does not exist or these credentials cannot see it.",
    "ACP_UNKNOWN_BLOCK": "An autocontext block named does not exist for this source.",
    "ACP_INVALID_LIMIT": "A limit (rows, fields or cost) is out of range.",
    "ACP_INVALID_ARGUMENTS": "The arguments were not accepted (a wrong field, type or value).",
    "ACP_UPSTREAM_ERROR": "The data service (or the ACP server) failed while answering.",
    "ACP_READ_ONLY_VIOLATION": "The call would change data, and this source is read-only.",
    "ACP_HOST_TABLES_UNSUPPORTED": "The call needs a dataset from the host, which this path cannot give.",
    "ACP_TABLE_NOT_FOUND": "A dataset named in the call does not exist in acp-data.",
    "ACP_TABLE_TRUNCATED": "A dataset was too large to pass whole.",
    "SERVER_BUSY": "The ACP server had too many calls at once; try again.",
    "MCP_ERROR": "The server answered with an error that is not an ACP error.",
}


def plain_error(error: Any) -> dict[str, str]:
    """A typed error as the page shows it: a sentence, the ACP's message and its name (code)."""
    if not isinstance(error, dict):
        return {"words": "The call failed.", "message": "", "name": ""}
    name = str(error.get("name") or "")
    code = error.get("code")
    return {"words": ERROR_WORDS.get(name, "The call failed."), "message": for_a_person(str(error.get("message") or "")),
            "name": f"{name} ({code})" if isinstance(code, int) else name}


# ACP messages are written for the model ("…or ask the user to raise the limit"); on the page the person
# is the user, and the page offers its own way (the higher-limit form). Such sentences are left out here.
_TRAILING_OR = re.compile(r"\s+or\s*$", re.IGNORECASE)


def for_a_person(message: str) -> str:
    """An ACP message as a person reads it on the page: clauses that tell the model to ask the user dropped."""
    parts = []
    for sentence in re.split(r"(?<=[.!?])\s+", message):
        lowered = sentence.lower()
        if "ask the user" not in lowered:
            parts.append(sentence)
            continue
        head = sentence[: lowered.index("ask the user")]
        head = _TRAILING_OR.sub("", head.rstrip(" ,;:")).rstrip(" ,;:")
        if head.strip():
            parts.append(head.rstrip(".") + ".")
    return " ".join(parts).strip()


def _row(entry: dict[str, Any], known: set[str]) -> dict[str, Any]:
    datasets = [d for d in entry.get("datasets") or [] if isinstance(d, dict) and isinstance(d.get("id"), str)]
    return {
        "id": str(entry.get("id") or ""),
        "time": str(entry.get("time") or "").replace("T", " ").rstrip("Z")[:19],
        "via": "page" if entry.get("via") == "page" else "client",
        "source": entry.get("source") or "",
        "tool": str(entry.get("tool") or ""),
        "arguments": json.dumps(entry.get("arguments") or {}, ensure_ascii=False)[:4000],
        "outcome": str(entry.get("outcome") or ""),
        "rows": entry.get("rows"),
        "cost": entry.get("cost_usd"),
        "limits": entry.get("limits") if isinstance(entry.get("limits"), dict) else {},
        "seconds": (entry.get("duration_ms") or 0) / 1000,
        "datasets": [{**d, "exists": d["id"] in known} for d in datasets],
        "error": plain_error(entry.get("error")) if entry.get("outcome") == "error" else None,
        # A query can be kept when it came from a source tool and its arguments were recorded whole.
        "savable": bool(entry.get("source")) and not entry.get("arguments_cut") and isinstance(entry.get("arguments"), dict),
    }


async def activity_page(request: Request) -> Response:
    """GET /activity?source=&outcome= : the record, newest first, filterable by source and outcome."""
    state = ui(request)
    s = store(request)
    source = request.query_params.get("source") or None
    outcome = request.query_params.get("outcome") or None
    if outcome not in {o for o, _ in OUTCOMES}:
        outcome = None
    # One read of the record (up to three files of a few MiB), off the page's event loop, which also runs queries.
    everything = await anyio.to_thread.run_sync(lambda: record.read(s.dir, limit=10**9))  # bounded by rotation
    picked = [e for e in everything if (source is None or e.get("source") == source)
              and (outcome is None or e.get("outcome") == outcome)][:SHOWN]
    entries = state.redactor.value(picked)
    known = {d.id for d in s.list()}
    sources = sorted({str(e.get("source")) for e in everything if e.get("source")})
    return render(request, "activity.html", {
        "entries": [_row(e, known) for e in entries], "sources": sources, "source": source or "",
        "outcome": outcome or "", "outcomes": OUTCOMES, "file": str(s.dir / record.FILE), "shown": SHOWN})


async def save_entry(request: Request, form: FormData) -> Response:
    """POST /activity/{entry_id}/save : the entry's source, tool and arguments become a saved query (then its editor)."""
    state = ui(request)
    s = store(request)
    entry = record.find(s.dir, request.path_params["entry_id"])
    if entry is None or not _row(entry, set())["savable"]:
        return problem(request, "Cannot save this call", "No call with that id in the activity, or its arguments were "
                       "not recorded whole (a very long argument is cut in the record).", 404)
    try:
        saved = queries.save(s.dir, source=str(entry["source"]), tool=str(entry.get("acp_tool") or entry["tool"]),
                             arguments=state.redactor.value(entry["arguments"]), name=str(form.get("name") or ""))
    except queries.QueriesFileError as exc:
        return problem(request, "Saved queries", str(exc), 409)
    state.say(f"Saved as query «{saved['name']}»: run it or change it here.")
    return RedirectResponse(f"/queries/{saved['id']}", status_code=303)
