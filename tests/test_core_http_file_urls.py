"""One-time table URLs over HTTP (8.5): the request's base URL is read only when a file is handed out,
and the URL maker reaches the tools/call handler on the request's scope (the server object holds none)."""

import anyio
from analytics_acp.http_app import FILES_PATH, OneTimeFiles, TableUrls, table_url_factory
from analytics_acp.runtime import FILE_URL_SCOPE_KEY


class _Request:
    def __init__(self):
        self.reads = 0

    @property
    def base_url(self):
        self.reads += 1
        return "http://example.test:9/"


def test_base_url_read_only_for_a_file_url(tmp_path):
    factory = table_url_factory(OneTimeFiles(), "http://127.0.0.1:7413")
    request = _Request()
    to_url = factory(request)
    assert request.reads == 0  # a call answered inline never builds the base URL
    table = tmp_path / "t.json"
    table.write_text("[]")
    url = to_url(table)
    assert url.startswith(f"http://example.test:9{FILES_PATH}/") and request.reads == 1
    assert factory(None)(table).startswith(f"http://127.0.0.1:7413{FILES_PATH}/")


def test_every_http_request_carries_the_url_maker_and_the_callers_scope_is_untouched():
    seen = []

    async def app(scope, receive, send):
        seen.append(scope)

    def factory(request):
        return str

    wrapped = TableUrls(app, factory)
    given = {"type": "http", "path": "/mcp"}
    anyio.run(wrapped, given, None, None)
    anyio.run(wrapped, {"type": "lifespan"}, None, None)
    assert seen[0][FILE_URL_SCOPE_KEY] is factory and FILE_URL_SCOPE_KEY not in given
    assert FILE_URL_SCOPE_KEY not in seen[1]
