"""What every view shares: the state, rendering with the page shell, the ACP icons (13.2)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, PlainTextResponse, Response

from ..state import UiState

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
# Autoescaped everywhere: every text an ACP or a file gives is shown as text, never as markup.
ENV = Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=select_autoescape(default=True),
                  trim_blocks=True, lstrip_blocks=True)
NAV = [("/", "Sources"), ("/sources/new", "Add a source"), ("/clients", "Connect a client"), ("/datasets", "Datasets"),
       ("/activity", "Activity"), ("/queries", "Queries")]


def ui(request: Request) -> UiState:
    """The page's state."""
    state: UiState = request.app.state.ui
    return state


def render(request: Request, template: str, context: dict[str, Any], status: int = 200) -> HTMLResponse:
    """A page: the template inside base.html, with the navigation, the messages and the CSRF token."""
    state = ui(request)
    html = ENV.get_template(template).render(
        nav=NAV, path=request.url.path, csrf=state.security.csrf, messages=state.take_flash(),
        sources_file=str(state.paths.sources), project=str(state.paths.project), **context)
    return HTMLResponse(html, status_code=status)


def problem(request: Request, title: str, message: str, status: int = 400) -> HTMLResponse:
    """A page that only says what went wrong."""
    return render(request, "message.html", {"title": title, "message": message}, status=status)


async def acp_icon(request: Request) -> Response:
    """GET /acps/{acp}/icon : an installed ACP's icon, when 13.2's rules accept it (else 404)."""
    entry = ui(request).acps().get(request.path_params["acp"])
    if entry is None or entry.icon is None:
        return PlainTextResponse("No icon.", status_code=404)
    # SVG is served as an image only (<img>), with its own strict CSP: a script inside it never runs.
    return FileResponse(entry.icon, media_type=entry.icon_type(),
                        headers={"content-security-policy": "default-src 'none'; style-src 'unsafe-inline'"})
