"""Issue 35.8 at the HTTP level: token once then a cookie, Host, Origin, CSRF, body size; no secret in any answer or log.

One page per module, served in this process; plain HTTP requests (httpx) shaped as an attacker would send them.
"""

from __future__ import annotations

import json
import logging

import httpx
import pytest
from uiharness import SECRET, environ, module_env, serve_page


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    base = tmp_path_factory.mktemp("uisec")
    project = base / "proj"
    project.mkdir()
    # A hand-written source with a literal secret in a writeOnly field: it must never come back.
    (project / "sources.json").write_text(json.dumps({"sources": [
        {"id": "stage", "acp": "browser", "credentials": {"basic_username": "ana", "basic_password": SECRET}}]}))
    with environ(module_env(base / "config")), serve_page(project) as served:
        yield served


@pytest.fixture(scope="module")
def client(page):
    """A client holding the cookie (it presented the token once)."""
    with httpx.Client(base_url=page.base, timeout=120, follow_redirects=False) as c:
        first = c.get(page.url)
        assert first.status_code == 303 and first.headers["location"] == "/"
        yield c


def _origin(page) -> dict[str, str]:
    return {"origin": page.base}


def test_no_token_and_a_wrong_token_are_refused(page):
    for url in (f"{page.base}/", f"{page.base}/?token=wrong", f"{page.base}/clients"):
        answer = httpx.get(url, timeout=30)
        assert answer.status_code == 401 and "token" in answer.text
    # the token works once as a URL, is swapped for an HttpOnly SameSite=Strict cookie, and leaves the URL
    answer = httpx.get(page.url + "&x=1", timeout=30)
    assert answer.status_code == 303 and answer.headers["location"] == "/?x=1"
    cookie = answer.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and page.state.security.token not in cookie


def test_a_foreign_host_is_refused_even_with_the_token_or_cookie(page, client):
    for host in (f"evil.example:{page.port}", "127.0.0.1", "localhost:1", f"127.0.0.1.nip.io:{page.port}"):
        assert httpx.get(page.url, headers={"host": host}, timeout=30).status_code == 403
        assert client.get("/", headers={"host": host}).status_code == 403
    assert client.get("/", headers={"host": f"localhost:{page.port}"}).status_code == 200


def test_state_changing_requests_need_a_same_origin_origin_and_the_csrf_token(page, client):
    csrf = page.state.security.csrf
    url = "/clients/claude-code/write"
    assert client.post(url, data={"csrf": csrf}).status_code == 403  # no Origin at all
    assert client.post(url, data={"csrf": csrf}, headers={"origin": "http://evil.example"}).status_code == 403
    assert client.post(url, data={"csrf": csrf}, headers={"origin": f"http://localhost:{page.port}"}).status_code == 403
    assert client.post(url, data={}, headers=_origin(page)).status_code == 403  # no CSRF token
    assert client.post(url, data={"csrf": "x" * 64}, headers=_origin(page)).status_code == 403
    # without the cookie the token of the form is not enough
    assert httpx.post(page.base + url, data={"csrf": csrf}, headers=_origin(page), timeout=30).status_code == 401
    assert not (page.state.paths.project / ".mcp.json").exists()  # none of them wrote anything


def test_bodies_and_uploads_are_size_limited(page, client):
    from analytics_acp_ui.security import MAX_BODY_BYTES

    big = client.post("/sources/form", content=b"x" * (MAX_BODY_BYTES + 1),
                      headers={**_origin(page), "content-type": "application/x-www-form-urlencoded"})
    assert big.status_code == 413


def test_no_secret_in_any_page_answer_or_log(page, client, caplog):
    caplog.set_level(logging.DEBUG)
    seen = []
    for path in ("/", "/sources/stage/edit", "/sources/new", "/clients", "/datasets", "/sources/new/browser"):
        answer = client.get(path)
        assert answer.status_code == 200, (path, answer.text[:300])
        seen.append(answer.text)
    edit = seen[1]
    assert "Saved; leave empty to keep it." in edit and 'value="ana"' in edit
    assert all(SECRET not in text for text in seen)
    assert SECRET not in caplog.text
