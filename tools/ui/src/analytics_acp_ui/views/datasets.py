"""Datasets (issue 35.7): the datasets of acp-data/ through the bridge's store; download, delete, the images.

Ids and names are looked up in the store's listing, never joined to a path, so nothing outside the
project's acp-data/ folder can be read or deleted (8.8.1's rule, as the bridge applies it).
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from analytics_acp.errors import AcpError, InvalidArguments
from analytics_acp_bridge.store.datasets import META_SUFFIX, Dataset, DatasetStore
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response

from .common import problem, render, ui

# The view's own document: inline script and style (it is one self-contained file), nothing from the network,
# framed only by this page (which sandboxes it without same-origin, so it cannot reach the page's cookie).
VIEW_HEADERS = {"content-security-policy": "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
                                           "img-src data:; frame-ancestors 'self'",
                "x-frame-options": "SAMEORIGIN"}
IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp", ".gif": "image/gif"}
FIRST_ROWS = 20


def store(request: Request) -> DatasetStore:
    """The project's dataset store (the bridge's)."""
    return ui(request).dataset_view().store


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def human(size: int) -> str:
    """A byte count people read."""
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"


def images(files_dir: Path) -> list[Path]:
    """The images of acp-data/files (prediction plots, screenshots), newest first."""
    if not files_dir.is_dir():
        return []
    found = [p for p in files_dir.iterdir() if p.is_file() and not p.name.startswith(".") and p.suffix.lower() in IMAGE_TYPES]
    return sorted(found, key=lambda p: p.stat().st_mtime, reverse=True)


def row(dataset: Dataset) -> dict[str, Any]:
    """One line of the list."""
    return {"id": dataset.id, "source": dataset.meta.get("source") or dataset.meta.get("origin"), "rows": dataset.row_count,
            "columns": len(dataset.headers), "created": dataset.meta.get("created_at") or "", "size": human(_size(dataset.path)),
            "title": dataset.meta.get("title") or dataset.meta.get("description") or ""}


async def datasets_page(request: Request) -> Response:
    """GET /datasets : every dataset with its id, source, rows, columns, creation and size; the images."""
    s = store(request)
    found = sorted(s.list(), key=lambda d: str(d.meta.get("created_at") or ""), reverse=True)
    return render(request, "datasets.html", {"datasets": [row(d) for d in found], "images": images(s.files_dir),
                                             "folder": str(s.dir)})


def _dataset(request: Request) -> tuple[DatasetStore, Dataset | None]:
    s = store(request)
    return s, s.get(request.path_params["dataset_id"])


async def dataset_page(request: Request) -> Response:
    """GET /datasets/{id} : the dataset's columns, metadata and first rows."""
    s, dataset = _dataset(request)
    if dataset is None:
        return problem(request, "Unknown dataset", "No dataset with that id in acp-data.", 404)
    first = list(itertools.islice(s.iter_cells(dataset), FIRST_ROWS))
    return render(request, "dataset.html", {"d": row(dataset), "headers": dataset.headers, "first": first,
                                            "meta": dataset.meta})


async def dataset_csv(request: Request) -> Response:
    """GET /datasets/{id}.csv : the whole CSV, as a download."""
    _, dataset = _dataset(request)
    if dataset is None:
        return PlainTextResponse("No dataset with that id in acp-data.", status_code=404)
    return FileResponse(dataset.path, media_type="text/csv; charset=utf-8", filename=f"{dataset.id}.csv")


async def delete_dataset(request: Request, form: FormData) -> Response:
    """POST /datasets/{id}/delete : remove its CSV and its meta."""
    state = ui(request)
    s, dataset = _dataset(request)
    if dataset is None:
        state.say("No dataset with that id in acp-data.")
        return RedirectResponse("/datasets", status_code=303)
    folder = s.dir.resolve()
    for path in (dataset.path, dataset.path.with_name(dataset.path.stem + META_SUFFIX)):
        if path.resolve().parent == folder:
            path.unlink(missing_ok=True)
    state.say(f"Deleted dataset «{dataset.id}».")
    return RedirectResponse("/datasets", status_code=303)


async def dataset_file(request: Request) -> Response:
    """GET /datasets/files/{name} : an image of acp-data/files (only a listed image; never a path)."""
    s = store(request)
    name = request.path_params["name"]
    found = next((p for p in images(s.files_dir) if p.name == name), None)
    if found is None:
        return PlainTextResponse("No such image in acp-data/files.", status_code=404)
    return FileResponse(found, media_type=IMAGE_TYPES[found.suffix.lower()])


async def view_document(request: Request) -> Response:
    """GET /datasets/view : the bridge's dataset view (MCP Apps HTML), hosted by the Datasets page (viewhost.js)."""
    from analytics_acp_bridge.view import apps

    return HTMLResponse(apps.view_html(), headers=VIEW_HEADERS)


async def view_call(request: Request) -> Response:
    """GET /datasets/view/call?name=&arguments= : the view's tools/call, answered by the bridge's own app-only tools
    (``apps.call``: the same paging as the bridge's MCP clients get), as a CallToolResult. Reads only."""
    import json

    from analytics_acp_bridge.view import apps

    name = request.query_params.get("name", "")
    try:
        if name not in apps.APP_NAMES:
            raise InvalidArguments(f"The dataset view has no tool {name[:60]!r}.")
        try:
            arguments = json.loads(request.query_params.get("arguments") or "{}")
        except ValueError:
            raise InvalidArguments("The view's arguments are not JSON.") from None
        if not isinstance(arguments, dict):
            raise InvalidArguments("The view's arguments must be an object.")
        answer: object = await apps.call(ui(request).dataset_view(), name, arguments)
        is_error = False
    except AcpError as exc:
        answer, is_error = {"error": exc.payload()}, True
    return JSONResponse({"content": [{"type": "text", "text": json.dumps(answer, ensure_ascii=False)}], "isError": is_error})
