"""The Sources page (issue 35.2): each source with its ACP's icon and name, default resource and verdict; Test, Edit, Remove."""

from __future__ import annotations

from typing import Any

from analytics_acp import secret_store
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from .. import sourcesfile
from ..state import UiState
from ..verdicts import Report, Verdict, check
from .common import render, ui


async def verdicts(state: UiState) -> Report | None:
    """The validator's report on the current sources.json (cached until the file changes), with the online verdicts
    of the sources tested since; None without a file."""
    stamp = state.stamp()
    if stamp is None:
        return None
    cached = state.reports.get("offline")
    if cached is not None and cached[0] == stamp:
        report = cached[1]
    else:
        report = await check(state.paths, state.servers)
        state.reports["offline"] = (stamp, report)
    tested = {sid: v for sid, (at, v) in state.online.items() if at == stamp and sid in report.sources}
    if not tested:
        return report
    return Report(sources={**report.sources, **tested}, file_error=report.file_error)


def _rows(state: UiState, data: dict[str, Any], report: Report | None) -> list[dict[str, Any]]:
    acps = state.acps()
    rows = []
    for entry in sourcesfile.entries(data):
        sid = str(entry.get("id") or "?")
        acp = acps.get(str(entry.get("acp")))
        verdict = report.sources.get(sid) if report is not None else None
        rows.append({
            "id": sid, "label": entry.get("label") or sid, "acp_id": entry.get("acp"),
            "acp_name": acp.name if acp is not None else f"{entry.get('acp')} (not installed)",
            "icon": acp is not None and acp.icon is not None,
            "resource": entry.get("default_resource_id"),
            "verdict": verdict or Verdict(status="unknown"),
            "online": verdict is not None and verdict.online,
            "editable": acp is not None,
        })
    return rows


async def sources_page(request: Request) -> Response:
    """GET / : the sources of sources.json with the validator's verdicts."""
    state = ui(request)
    error = None
    try:
        data = sourcesfile.read_raw(state.paths.sources)
    except sourcesfile.SourcesFileError as exc:
        data, error = {"sources": []}, str(exc)
    report = await verdicts(state) if error is None else None
    return render(request, "sources.html", {
        "rows": _rows(state, data, report), "file_error": error or (report.file_error if report else None),
        "first_run": not state.paths.sources.exists(), "acps": state.acps(),
    })


async def remove_source(request: Request, form: FormData) -> Response:
    """POST /sources/{id}/remove : drop the entry and the secrets the page stored for it."""
    state = ui(request)
    source_id = request.path_params["source_id"]
    try:
        data = sourcesfile.read_raw(state.paths.sources)
    except sourcesfile.SourcesFileError as exc:
        state.say(str(exc))
        return RedirectResponse("/", status_code=303)
    entry = sourcesfile.find(data, source_id)
    if entry is None:
        state.say(f"There is no source «{source_id}» in {state.paths.sources}.")
        return RedirectResponse("/", status_code=303)
    sourcesfile.write(state.paths.sources, sourcesfile.without(data, source_id))
    removed = sum(secret_store.remove(ref) for ref in sourcesfile.references(
        [entry.get("credentials"), entry.get("config")]))
    state.say(f"Removed source «{source_id}»" + (f" and the {removed} secret{'s' if removed != 1 else ''} stored for it."
                                                 if removed else "."))
    return RedirectResponse("/", status_code=303)


async def test_source(request: Request, form: FormData) -> Response:
    """POST /sources/{id}/test : the online check of that source (one bounded authenticated call), its typed answer."""
    state = ui(request)
    source_id = request.path_params["source_id"]
    stamp = state.stamp()
    verdict = None
    if stamp is not None:
        report = await check(state.paths, state.servers, online=True, only={source_id})
        verdict = report.sources.get(source_id)
        if verdict is not None:
            state.online[source_id] = (stamp, verdict)
    if verdict is None:
        state.say(f"There is no source «{source_id}» to test.")
    elif verdict.status == "ok":
        state.say(f"Test of «{source_id}»: ok (it signed in and answered).")
    else:
        state.say(f"Test of «{source_id}»: {verdict.problem or verdict.status}")
    return RedirectResponse(f"/#source-{source_id}", status_code=303)
