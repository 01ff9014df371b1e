"""One-time table URLs over HTTP (8.5): the request's base URL is read only when a file is handed out."""

from analytics_acp.http_app import FILES_PATH, build_http_app
from analytics_acp.plugins import load_connector
from analytics_acp.runtime import build_server


class _Request:
    def __init__(self):
        self.reads = 0

    @property
    def base_url(self):
        self.reads += 1
        return "http://example.test:9/"


def test_base_url_read_only_for_a_file_url(tmp_path):
    acp = build_server(load_connector("databases"))
    build_http_app(acp, port=7413)
    assert acp.file_url_factory is not None
    request = _Request()
    to_url = acp.file_url_factory(request)
    assert request.reads == 0  # a call answered inline never builds the base URL
    table = tmp_path / "t.json"
    table.write_text("[]")
    url = to_url(table)
    assert url.startswith(f"http://example.test:9{FILES_PATH}/") and request.reads == 1
    assert acp.file_url_factory(None)(table).startswith(f"http://127.0.0.1:7413{FILES_PATH}/")
