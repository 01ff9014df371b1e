"""The page's Starlette application: routes, the security guard and the lifespan that owns the ACP servers."""

from __future__ import annotations

import contextlib
import logging
import traceback
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from .security import Guard, mutating
from .signin import CALLBACK
from .state import UiState
from .views import activity, clients, common, datasets, queries, signin_views, source_form, sources

STATIC = Path(__file__).resolve().parent / "static"
log = logging.getLogger("analytics_acp_ui")


def routes() -> list[Route | Mount]:
    """Every route; each POST goes through ``mutating`` (the CSRF check)."""
    return [
        Route("/", sources.sources_page),
        Route("/sources/new", source_form.choose_acp),
        Route("/sources/new/{acp}", source_form.new_form),
        Route("/sources/form", mutating(source_form.submit_form), methods=["POST"]),
        Route("/sources/{source_id}/edit", source_form.edit_form),
        Route("/sources/{source_id}/remove", mutating(sources.remove_source), methods=["POST"]),
        Route("/sources/{source_id}/test", mutating(sources.test_source), methods=["POST"]),
        Route("/acps/{acp}/icon", common.acp_icon),
        Route(CALLBACK, signin_views.google_callback),
        Route("/clients", clients.clients_page),
        Route("/clients/{client}/write", mutating(clients.write_client), methods=["POST"]),
        Route("/datasets", datasets.datasets_page),
        Route("/datasets/files/{name}", datasets.dataset_file),
        Route("/datasets/view", datasets.view_document),
        Route("/datasets/view/call", datasets.view_call),
        Route("/datasets/{dataset_id}.csv", datasets.dataset_csv),
        Route("/datasets/{dataset_id}", datasets.dataset_page),
        Route("/datasets/{dataset_id}/delete", mutating(datasets.delete_dataset), methods=["POST"]),
        Route("/activity", activity.activity_page),
        Route("/activity/{entry_id}/save", mutating(activity.save_entry), methods=["POST"]),
        Route("/queries", queries.queries_page),
        Route("/queries/new", queries.new_query),
        Route("/queries/submit", mutating(queries.submit_query), methods=["POST"]),
        Route("/queries/runs/{run_id}", queries.run_page),
        Route("/queries/runs/{run_id}/cancel", mutating(queries.cancel_run), methods=["POST"]),
        Route("/queries/runs/{run_id}/raise", mutating(queries.raise_limit), methods=["POST"]),
        Route("/queries/{query_id}", queries.saved_query),
        Route("/queries/{query_id}/run", mutating(queries.run_saved), methods=["POST"]),
        Route("/queries/{query_id}/delete", mutating(queries.delete_saved), methods=["POST"]),
        Mount("/static", app=StaticFiles(directory=str(STATIC)), name="static"),
    ]


async def failed(request: Request, exc: Exception) -> Response:
    """An unexpected failure: its type on the page, the traceback in the page's log (scrubbed), never a value."""
    log.error("%s %s failed:\n%s", request.method, request.url.path, "".join(traceback.format_exception(exc)))
    return PlainTextResponse(f"The page failed ({type(exc).__name__}); its log (stderr of analytics-acp ui) says where.",
                             status_code=500)


def build_app(state: UiState) -> Starlette:
    """The application for one page run."""
    state.security.public_paths = (CALLBACK,)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with anyio.create_task_group() as tg:
            state.servers.bind(tg)
            state.runner.bind(tg)
            try:
                yield
            finally:
                from analytics_acp.host.stdio import stop_live_servers

                stop_live_servers(bound_s=0.2)  # Ctrl-C ends the page within a second: servers get SIGTERM now
                await state.servers.aclose()
                await state.runner.aclose()
                tg.cancel_scope.cancel()
                state.cleanup()

    app = Starlette(routes=routes(), middleware=[Middleware(Guard, security=state.security)], lifespan=lifespan,
                    exception_handlers={Exception: failed})
    app.state.ui = state
    return app
