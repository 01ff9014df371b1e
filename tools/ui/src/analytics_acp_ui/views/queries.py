"""Saved queries (issue 37.2; 14.3's saved-query editor): pick a source and a tool, fill the form its ``inputSchema``
generates (the set-up forms' generator, ``forms``), *Run* it through the bridge's own call path (runs.py) or *Save* it.

The tool defaults to the ACP's ``extraction_tools[0]`` (14.3). A paid query the cost limit refused (9.2) offers a
higher limit for that run only, and runs only once the person ticks the confirmation. The result is the dataset's
own page (the bridge's dataset view).
"""

from __future__ import annotations

import json
import math
from typing import Any

from analytics_acp_bridge.calls.exposure import public_name
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from .. import queries
from ..forms import build_variants, parse
from ..forms.display import show_defaults, show_stored, show_submitted
from ..runs import Run
from .activity import plain_error
from .common import problem, render, ui
from .datasets import store

PREFIX = "args"


async def _sources(request: Request) -> tuple[Any, list[dict[str, Any]]]:
    """The page's bridge and its sources that publish tools: id, label, ACP, tools (wire dicts), default tool."""
    bridge = await ui(request).runner.bridge()
    by_name = {t["name"]: t for t in bridge.catalog.tools}
    out = []
    for source in bridge.fleet.sources.sources:
        names = bridge.catalog.of_source(source.id)
        if not names:
            continue
        proc = bridge.fleet.processes.get(source.acp)
        extraction = (proc.capability.get("extraction_tools") or []) if proc is not None else []
        first = public_name(source.id, extraction[0]) if extraction else None
        default = first if first in by_name else names[0]
        tools = [by_name[n] for n in names]
        tools.sort(key=lambda t: t["name"] != default)  # the default first, the others in name order
        out.append({"id": source.id, "label": source.label or source.id, "acp": source.acp, "tools": tools,
                    "default": default, "resource": source.default_resource_id})
    return bridge, out


def _tool_name(public: str, source: str) -> str:
    return public[len(source) + 2:] if public.startswith(f"{source}__") else public


def _editor(request: Request, sources: list[dict[str, Any]], source_id: str | None, tool: str | None,
            **context: Any) -> tuple[dict[str, Any] | None, dict[str, Any] | None, dict[str, Any]]:
    """The chosen source and tool (the source's default tool when none or another's is asked)."""
    source = next((s for s in sources if s["id"] == source_id), sources[0] if sources else None)
    chosen = None
    if source is not None:
        wanted = public_name(source["id"], tool) if tool and "__" not in tool else tool
        chosen = next((t for t in source["tools"] if t["name"] == wanted), None)
        chosen = chosen or next(t for t in source["tools"] if t["name"] == source["default"])
    return source, chosen, {"sources": sources, "source": source, "tool": chosen, **context}


def _form(request: Request, context: dict[str, Any], variants: list[Any], status: int = 200) -> Response:
    tool = context["tool"]
    resource = (context.get("source") or {}).get("resource")
    for f in variants[0].fields if variants and resource else []:
        if f.key == "resource_id" and not f.placeholder:  # 6.2: left empty, the source's default resource is used
            f.placeholder = f"{resource} (the source's default resource)"
    return render(request, "query_form.html", {
        **context, "fields": variants[0].fields if variants else [],
        "short_tool": _tool_name(tool["name"], context["source"]["id"]) if tool else "",
        "description": (tool or {}).get("description") or ""}, status=status)


async def queries_page(request: Request) -> Response:
    """GET /queries : the saved queries (run, edit, delete) and the way to a new one."""
    s = store(request)
    try:
        saved = queries.load(s.dir)
        error = None
    except queries.QueriesFileError as exc:
        saved, error = [], str(exc)
    scrub = ui(request).runner.scrub  # saved masked; scrubbed again with today's secrets (a file edited by hand)
    rows = [{**q, "args_text": json.dumps(scrub.value(q.get("arguments") or {}), ensure_ascii=False)[:600]} for q in saved]
    return render(request, "queries.html", {"saved": rows, "file_error": error, "file": str(queries.path_of(s.dir))})


async def new_query(request: Request) -> Response:
    """GET /queries/new?source=&tool= : the editor of a new query (the tool's schema defaults filled in)."""
    _, sources = await _sources(request)
    if not sources:
        return problem(request, "No source to query", "No source publishes tools yet: add one on the Sources page.", 404)
    source, tool, context = _editor(request, sources, request.query_params.get("source"), request.query_params.get("tool"))
    variants = build_variants(tool.get("inputSchema") if tool else None, PREFIX, lists=True)
    show_defaults(variants)
    return _form(request, {**context, "query": None, "name": ""}, variants)


async def saved_query(request: Request) -> Response:
    """GET /queries/{query_id} : a saved query in the editor."""
    state = ui(request)
    query = _saved(request)
    if isinstance(query, Response):
        return query
    _, sources = await _sources(request)
    source, tool, context = _editor(request, sources, query.get("source"), query.get("tool"))
    if source is None or source["id"] != query.get("source") or tool is None or \
            _tool_name(tool["name"], source["id"]) != query.get("tool"):
        state.say(f"Source «{query.get('source')}» has no tool {query.get('tool')!r} now; pick another.")
    variants = build_variants(tool.get("inputSchema") if tool else None, PREFIX, lists=True)
    show_stored(variants, tool.get("inputSchema") if tool else None, query.get("arguments"))
    return _form(request, {**context, "query": query, "name": query.get("name") or ""}, variants)


async def submit_query(request: Request, form: FormData) -> Response:
    """POST /queries/submit (action run | save): the form read with the tool's schema, then run or kept."""
    state = ui(request)
    _, sources = await _sources(request)
    source, tool, context = _editor(request, sources, _text(form, "source"), _text(form, "tool"))
    if source is None or tool is None or tool["name"] != _text(form, "tool"):
        return problem(request, "Unknown tool", "That source or tool is not published now; open the editor again.", 404)
    schema = tool.get("inputSchema")
    parsed = parse(schema, PREFIX, lambda name: _text(form, name), lists=True)
    query_id = _text(form, "query") or None
    name = _text(form, "name") or ""
    if parsed.errors:
        variants = build_variants(schema, PREFIX, lists=True)
        show_submitted(variants, 0, lambda n: _text(form, n), parsed.errors)
        saved = {"id": query_id} if query_id else None
        return _form(request, {**context, "query": saved, "name": name}, variants, status=400)
    arguments = parsed.value if isinstance(parsed.value, dict) else {}
    if _text(form, "action") == "save":
        try:
            kept = queries.save(store(request).dir, source=source["id"], tool=_tool_name(tool["name"], source["id"]),
                                arguments=state.runner.scrub.value(arguments), name=name, query_id=query_id)
        except queries.QueriesFileError as exc:
            return problem(request, "Saved queries", str(exc), 409)
        state.say(f"Saved query «{kept['name']}».")
        return RedirectResponse(f"/queries/{kept['id']}", status_code=303)
    run = state.runner.start(source["id"], tool["name"], arguments)
    return RedirectResponse(f"/queries/runs/{run.id}", status_code=303)


async def run_saved(request: Request, form: FormData) -> Response:
    """POST /queries/{query_id}/run : run a saved query as it was saved."""
    state = ui(request)
    query = _saved(request)
    if isinstance(query, Response):
        return query
    source = str(query.get("source") or "")
    run = state.runner.start(source, public_name(source, str(query.get("tool") or "")), dict(query.get("arguments") or {}))
    return RedirectResponse(f"/queries/runs/{run.id}", status_code=303)


async def delete_saved(request: Request, form: FormData) -> Response:
    """POST /queries/{query_id}/delete : forget a saved query."""
    state = ui(request)
    try:
        gone = queries.delete(store(request).dir, request.path_params["query_id"])
    except queries.QueriesFileError as exc:
        return problem(request, "Saved queries", str(exc), 409)
    state.say("Deleted the saved query." if gone else "No saved query with that id.")
    return RedirectResponse("/queries", status_code=303)


def _run(request: Request) -> Run | None:
    return ui(request).runner.runs.get(request.path_params["run_id"])


async def run_page(request: Request) -> Response:
    """GET /queries/runs/{run_id} : a run in progress (the page reloads itself), else its outcome; a run that saved
    one dataset goes to that dataset's page (the dataset view)."""
    run = _run(request)
    if run is None:
        return problem(request, "Unknown run", "No run with that id (runs are kept while the page runs).", 404)
    if run.status == "ok" and len(run.datasets) == 1:
        ui(request).say(f"{run.tool} ran: {run.datasets[0].get('rows') or 0:,} rows, saved as dataset "
                        f"«{run.datasets[0]['id']}».")
        return RedirectResponse(f"/datasets/{run.datasets[0]['id']}", status_code=303)
    return render(request, "run.html", {"run": run, "error": plain_error(run.error) if run.error else None,
                                        "args_text": json.dumps(ui(request).runner.scrub.value(run.arguments),
                                                                ensure_ascii=False)[:4000]})


async def cancel_run(request: Request, form: FormData) -> Response:
    """POST /queries/runs/{run_id}/cancel : stop a running query (cancelled at its ACP server; no dataset)."""
    run = _run(request)
    if run is not None and ui(request).runner.cancel(run.id):
        ui(request).say("Cancelled.")
    return RedirectResponse(f"/queries/runs/{request.path_params['run_id']}", status_code=303)


async def raise_limit(request: Request, form: FormData) -> Response:
    """POST /queries/runs/{run_id}/raise : run a refused paid query again with a higher cost limit, for that run only,
    once the person confirmed it (14.3: never raised without confirmation). Nothing runs without the tick."""
    state = ui(request)
    run = _run(request)
    if run is None or run.estimate is None:
        return problem(request, "Nothing to raise", "That run was not refused by the cost limit.", 404)
    try:
        limit = float(_text(form, "cost_limit_usd") or "nan")
    except ValueError:
        limit = math.nan
    if not math.isfinite(limit) or limit < run.estimate:
        state.say(f"The limit for this run must be a number of at least ${run.estimate:g} (the estimate).")
        return RedirectResponse(f"/queries/runs/{run.id}", status_code=303)
    if _text(form, "confirm") != "yes":
        state.say("Nothing ran: tick the confirmation to run this query once with the higher limit.")
        return RedirectResponse(f"/queries/runs/{run.id}", status_code=303)
    again = state.runner.start(run.source, run.tool, run.arguments, {**(run.limits or {}), "cost_limit_usd": limit})
    return RedirectResponse(f"/queries/runs/{again.id}", status_code=303)


def _text(form: FormData, name: str) -> str | None:
    value = form.get(name)
    return value if isinstance(value, str) else None


def _saved(request: Request) -> dict[str, Any] | Response:
    """The saved query the path names, or the page that says why there is none (unreadable file, unknown id)."""
    try:
        query = queries.get(store(request).dir, request.path_params["query_id"])
    except queries.QueriesFileError as exc:
        return problem(request, "Saved queries", str(exc), 409)
    if query is None:
        return problem(request, "Unknown query", "No saved query with that id.", 404)
    return query
