"""Connect a client (issue 35.6): write or merge the bridge's entry, or show the snippet to copy."""

from __future__ import annotations

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from ..clientconfig import CLIENTS, ClientConfigError, snippet, status, write
from .common import render, ui


async def clients_page(request: Request) -> Response:
    """GET /clients : each client's file, whether it already starts this bridge, and the snippet."""
    paths = ui(request).paths
    rows = [{"status": status(paths, c), "snippet": snippet(paths, c)} for c in CLIENTS]
    return render(request, "clients.html", {"rows": rows})


async def write_client(request: Request, form: FormData) -> Response:
    """POST /clients/{client}/write : merge the entry into that client's file (backup first)."""
    state = ui(request)
    client = next((c for c in CLIENTS if c.id == request.path_params["client"]), None)
    if client is None:
        state.say("Unknown client.")
        return RedirectResponse("/clients", status_code=303)
    try:
        path, backup, comments = write(state.paths, client)
    except ClientConfigError as exc:
        state.say(str(exc))
        return RedirectResponse(f"/clients#client-{client.id}", status_code=303)
    message = f"{client.name}: the acp-bridge entry is in {path}"
    message += f" (the previous file is kept as {backup.name})." if backup else "."
    if comments:
        message += " Its comments were not kept in the new file; the backup has them."
    message += f" Restart {client.name} (or reload its MCP servers) to start the bridge."
    state.say(message)
    return RedirectResponse(f"/clients#client-{client.id}", status_code=303)
