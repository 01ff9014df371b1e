"""Add and edit a source (issue 35.3): pick an ACP, fill the form its schemas generate, find resources, sign in, save."""

from __future__ import annotations

from typing import Any

import anyio
from analytics_acp_bridge.fleet.process import ServerUnavailable
from analytics_acp_google.login import LoginError
from starlette.datastructures import FormData, UploadFile
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from .. import sourcesfile
from ..catalog import AcpEntry, Capability
from ..drafts import Draft
from ..forms.fields import build_variants
from ..forms.submit import chosen_variant
from ..security import MAX_UPLOAD_BYTES
from ..signin import GUIDE, client_secrets, remember_client
from ..state import UiState
from . import form_model, saving
from .common import problem, render, ui

PICKER_BOUND_S = 30.0
CONTROL = ("csrf", "draft", "action", "acp", "editing")
CLIENT_UPLOAD = "signin.client.upload"


async def choose_acp(request: Request) -> Response:
    """GET /sources/new : the installed ACPs (entry points and acps/ folders) with icon, name and description."""
    acps = ui(request).acps()
    return render(request, "choose_acp.html", {"acps": list(acps.values())})


def form_url(draft: Draft) -> str:
    """Where the draft's form is shown."""
    base = f"/sources/{draft.editing}/edit" if draft.editing else f"/sources/new/{draft.acp}"
    return f"{base}?draft={draft.id}"


async def _load(request: Request, acp_id: str) -> tuple[AcpEntry, Capability] | Response:
    state = ui(request)
    entry = state.acps().get(acp_id)
    if entry is None:
        return problem(request, "Unknown ACP", f"No installed ACP has the id «{acp_id}» (see Add a source).", 404)
    try:
        capability = await state.capability(entry)
    except ServerUnavailable as exc:
        return problem(request, f"{entry.name} did not start", state.redactor.text(str(exc)), 502)
    return entry, capability


async def _show(request: Request, state: UiState, draft: Draft, stored: dict[str, Any] | None,
                errors: dict[str, str] | None = None, problem_text: str | None = None, confirm: str | None = None,
                status: int = 200) -> Response:
    loaded = await _load(request, draft.acp)
    if isinstance(loaded, Response):
        return loaded
    entry, capability = loaded
    blocks = await state.servers.blocks(entry.launch)
    form = form_model.build(entry, capability, draft, stored, blocks, errors)
    form.problem, form.confirm_cost = problem_text, confirm
    return render(request, "source_form.html", {
        "form": form, "has_client": client_secrets() is not None, "guide": GUIDE, "secret_home": state.secret_home(),
        "title": f"Edit «{draft.editing}»" if draft.editing else f"Add a {entry.name} source",
    }, status=status)


async def new_form(request: Request) -> Response:
    """GET /sources/new/{acp} : the form of a new source of that ACP."""
    state = ui(request)
    draft = state.drafts.get(request.query_params.get("draft"), request.path_params["acp"], None)
    return await _show(request, state, draft, None)


def stored_entry(state: UiState, source_id: str) -> dict[str, Any] | None:
    """The entry of ``source_id`` as written in sources.json (None when absent or the file is unreadable)."""
    try:
        return sourcesfile.find(sourcesfile.read_raw(state.paths.sources), source_id)
    except sourcesfile.SourcesFileError:
        return None


async def edit_form(request: Request) -> Response:
    """GET /sources/{source_id}/edit : the form filled with the stored source (secrets shown as saved)."""
    state = ui(request)
    source_id = request.path_params["source_id"]
    entry = stored_entry(state, source_id)
    if entry is None:
        return problem(request, "Unknown source", f"There is no source «{source_id}» in {state.paths.sources}.", 404)
    draft = state.drafts.get(request.query_params.get("draft"), str(entry.get("acp")), source_id)
    return await _show(request, state, draft, entry)


def secret_inputs(capability: Capability) -> set[str]:
    """Input names of every writeOnly field of the credentials and config forms (all variants)."""
    names: set[str] = set()
    for key in ("credentials", "config"):
        schema = capability.acp.get(f"{key}_schema")
        for variant in build_variants(schema if isinstance(schema, dict) else None, key):
            names.update(f.name for f in variant.fields if f.secret)
    return names


async def absorb(state: UiState, draft: Draft, form: FormData, secret_names: set[str]) -> str | None:
    """Take a submission into the draft: plain values replaced, secrets and uploads kept in memory; an upload problem."""
    values: dict[str, str] = {}
    lists: dict[str, list[str]] = {}
    trouble = None
    for key, value in form.multi_items():
        if key in CONTROL or key == CLIENT_UPLOAD:
            continue
        if isinstance(value, UploadFile):
            if not value.filename:
                continue
            data = await value.read(MAX_UPLOAD_BYTES + 1)
            target = key.removesuffix(".upload")
            if len(data) > MAX_UPLOAD_BYTES:
                trouble = f"The file uploaded for {target.rsplit('.', 1)[-1]} is larger than {MAX_UPLOAD_BYTES // 1024} KiB."
                continue
            try:
                text = data.decode("utf-8-sig").strip()
            except UnicodeDecodeError:
                trouble = f"The file uploaded for {target.rsplit('.', 1)[-1]} is not UTF-8 text."
                continue
            if target in secret_names:
                draft.secrets[target] = text
                state.redactor.add({text})
            else:
                values[target] = text
            continue
        if key in ("blocks", "tables"):
            lists.setdefault(key, []).append(value)
        elif key in secret_names:
            if value.strip():
                draft.secrets[key] = value.strip()
                state.redactor.add({value.strip()})
        else:
            values[key] = value
    draft.values, draft.lists = values, lists
    return trouble


async def submit_form(request: Request, form: FormData) -> Response:
    """POST /sources/form : save, find resources (the picker) or sign in, for the draft the form carries."""
    state = ui(request)
    acp_id = str(form.get("acp") or "")
    editing = str(form.get("editing") or "") or None
    draft = state.drafts.get(str(form.get("draft") or ""), acp_id, editing)
    loaded = await _load(request, acp_id)
    if isinstance(loaded, Response):
        return loaded
    entry, capability = loaded
    trouble = await absorb(state, draft, form, secret_inputs(capability))
    stored = stored_entry(state, editing) if editing else None
    action = form.get("action")
    if trouble:
        draft.notice = trouble
        return RedirectResponse(form_url(draft), status_code=303)
    if action == "switch":  # without JavaScript: show the chosen variant's fields
        return RedirectResponse(form_url(draft) + "#credentials", status_code=303)
    if action == "resources":
        await find_resources(state, entry, capability, draft, stored)
        return RedirectResponse(form_url(draft) + "#resource", status_code=303)
    if action == "signin":
        return await start_signin(request, state, capability, draft, form)
    outcome = await saving.save(state, entry, capability, draft, stored)
    if outcome.ok:
        state.drafts.drop(draft.id)
        state.say(outcome.message)
        return RedirectResponse(f"/#source-{outcome.source_id}", status_code=303)
    return await _show(request, state, draft, stored, outcome.errors, outcome.problem, outcome.confirm, status=400)


async def find_resources(state: UiState, entry: AcpEntry, capability: Capability, draft: Draft,
                         stored: dict[str, Any] | None) -> None:
    """6.3: ``autocontext`` without resource, with the form's credentials, bounded; the suggestions go to the draft."""
    meta, errors = saving.live_meta(state, capability, draft, stored)
    draft.suggestions, draft.suggestions_note = [], None
    if errors:
        draft.suggestions_note = "Fill the credentials first: " + " ".join(errors.values())
        return
    try:
        proc = await state.servers.process(entry.launch)
        with anyio.fail_after(PICKER_BOUND_S):
            result = await proc.call("autocontext", {}, meta)
    except TimeoutError:
        draft.suggestions_note = f"No answer within {PICKER_BOUND_S:g} s: type the resource instead."
        return
    except (ServerUnavailable, Exception) as exc:  # any failure leaves free entry, with the reason
        draft.suggestions_note = state.redactor.text(f"The {entry.name} server failed ({type(exc).__name__}: {exc}).")
        return
    if result.is_error:
        err = result.error or {}
        draft.suggestions_note = state.redactor.text(
            f"{err.get('name', 'Error')}: {err.get('message') or result.text}")[:600]
        return
    answer = result.model_response if isinstance(result.model_response, dict) else {}
    resources = [r for r in answer.get("resources") or [] if isinstance(r, dict) and r.get("resource_id")]
    draft.suggestions = state.redactor.value(resources[:25])
    total = answer.get("total_available")
    total = total if isinstance(total, int) and total >= len(draft.suggestions) else len(draft.suggestions)
    if not draft.suggestions:
        draft.suggestions_note = "The credentials see no resource: type one."
    elif total > len(draft.suggestions):  # 6.3: the page of suggestions is not the whole account
        draft.suggestions_note = (f"{len(draft.suggestions)} of the {total} resources these credentials see; "
                                  "one that is not listed can still be typed.")
    else:
        draft.suggestions_note = f"The {total} resource{'s' if total != 1 else ''} these credentials see."


async def start_signin(request: Request, state: UiState, capability: Capability, draft: Draft,
                       form: FormData) -> Response:
    """5.5.5: start the chosen variant's x-acp-login; the browser leaves for the provider and comes back."""
    schema = capability.acp.get("credentials_schema")
    variants = build_variants(schema if isinstance(schema, dict) else None, "credentials")
    index = chosen_variant("credentials", draft.get, len(variants))
    login = variants[index].login if variants else None
    if login is None:
        draft.notice = "This variant has no sign-in."
        return RedirectResponse(form_url(draft), status_code=303)
    upload = form.get(CLIENT_UPLOAD)
    try:
        if isinstance(upload, UploadFile) and upload.filename:
            remember_client(await upload.read(MAX_UPLOAD_BYTES + 1))
        host = request.headers.get("host", f"127.0.0.1:{state.security.port}")
        url = state.signins.start(login["scopes"], f"http://{host}", draft.id, index)
    except LoginError as exc:
        draft.notice = str(exc)
        return RedirectResponse(form_url(draft), status_code=303)
    return RedirectResponse(url, status_code=303)
