"""The set-up page in Chromium (issue 35, Done means): add a SQLite source, a GA4 source with an uploaded key and the
picker, a Google sign-in on the fake OAuth server, Test against a fake that is down, a folder ACP dropped into acps/.

One page (in this process) and one browser for the module; each test adds its own sources. Fields are found by
their schema titles (``get_by_label``), as assistive technology finds them.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import sys
from pathlib import Path

import pytest
from uiharness import FIXTURE_ACP, SECRET, environ, make_sqlite, module_env, serve_page, server_starts, shot

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """The Google fakes (GA4 with three properties, the OAuth server), a project with a SQLite file, the page."""
    from ga4support import SA_EMAIL, build_fake
    from googlefakes import keys
    from googlefakes.authserver import OAuthFake
    from googlefakes.oauth import TokenEndpoint
    from googlefakes.server import FakeServer

    base = tmp_path_factory.mktemp("uipage")
    project = base / "proj"
    make_sqlite(project / "data" / "ventas.sqlite")
    (base / "keys").mkdir()
    with FakeServer(hang_s=10) as google, OAuthFake(email="analyst@example.com") as oauth:
        google.oauth = TokenEndpoint(google)
        google.oauth.register_service_account(SA_EMAIL, keys.public_key_pem(0))
        build_fake(google)
        oauth.api_tokens = google.tokens  # the GA4 fake accepts what the OAuth fake issues
        key = base / "keys" / "ga4-key.json"
        key.write_text(json.dumps(keys.service_account_info(google.oauth.token_uri, SA_EMAIL)))
        client_id, client_secret = oauth.add_client()
        client_file = base / "keys" / "client_secret.json"
        client_file.write_text(json.dumps(oauth.client_secrets(client_id, client_secret)))
        # Secrets go to a test keyring (a file-backed backend, also readable by a bridge started as a process).
        env = {**module_env(base / "config"), "ACP_CACHE_DIR": str(base / "cache"),
               "PYTHON_KEYRING_BACKEND": "uikeyring.FileKeyring", "ANALYTICS_ACP_TEST_KEYRING": str(base / "keyring.json"),
               "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parent), os.environ.get("PYTHONPATH", "")])}
        with file_keyring(), environ(env), serve_page(project) as page:  # the previous backend read before the env
            yield {"page": page, "project": project, "google": google, "oauth": oauth, "key": key,
                   "client_file": client_file, "env": env, "base": base}


@contextlib.contextmanager
def file_keyring():
    import keyring
    from analytics_acp import secret_store
    from uikeyring import FileKeyring

    previous = keyring.get_keyring()
    keyring.set_keyring(FileKeyring())
    secret_store._cache.clear()
    try:
        yield
    finally:
        keyring.set_keyring(previous)
        secret_store._cache.clear()


@pytest.fixture(scope="module")
def browser():
    from googlefakes.signin import chromium

    with chromium() as b:
        yield b


def _sources(world) -> dict:
    path = world["project"] / "sources.json"
    return json.loads(path.read_text()) if path.exists() else {"sources": []}  # a test run alone starts with none


def _entry(world, source_id: str) -> dict:
    return next(e for e in _sources(world)["sources"] if e["id"] == source_id)


def _add(tab, acp_name: str, source_id: str) -> None:
    tab.get_by_role("link", name="Add a source").first.click()
    if acp_name == "SQL databases":
        shot(tab, "choose-acp")
    tab.get_by_role("link", name=acp_name).click()
    tab.get_by_label("Source id").fill(source_id)


def _save(tab, source_id: str) -> None:
    """Click Save and wait for the page that follows: saved, or the form with why not (in the failure message)."""
    tab.get_by_role("button", name="Save").click()
    tab.wait_for_load_state()
    text = tab.locator("main").inner_text()
    assert f"Saved source «{source_id}»" in text, text


def _card(tab, source_id: str):
    return tab.locator(f"#source-{source_id}")


def test_add_a_sqlite_source_with_the_picker_then_bridge_check_passes_and_a_bridge_answers(tab, world):
    _add(tab, "SQL databases", "ventas")
    sqlite = tab.get_by_role("group", name="SQLite file")
    sqlite.get_by_label("Database file").fill(str(world["project"] / "data" / "ventas.sqlite"))
    tab.get_by_role("button", name="Find resources").click()
    tab.get_by_role("radio", name="ventas ventas", exact=True).check()
    tab.get_by_role("group", name="Autocontext").get_by_label("frequent_values").uncheck()  # 5.2 autocontext_blocks
    shot(tab, "add-source-sqlite")
    _save(tab, "ventas")
    assert _card(tab, "ventas").get_by_test_id("verdict").inner_text().startswith("ok")
    shot(tab, "sources")
    entry = _entry(world, "ventas")
    assert entry["credentials"] == {"type": "sqlite", "path": str(world["project"] / "data" / "ventas.sqlite")}
    assert entry["default_resource_id"] == "ventas"
    assert "frequent_values" not in entry["autocontext_blocks"] and "database_info" in entry["autocontext_blocks"]
    # The written file passes `analytics-acp bridge --check` (its entry point, run here), and a bridge started on it answers.
    env = {**os.environ, **world["env"]}
    sources = world["project"] / "sources.json"
    code, out = _in_thread(_bridge_check, sources, world["project"])
    assert code == 0 and "ok     ventas (databases)" in out, out
    answer = _bridge_call(world, "ventas__execute_sql", {"sql": "SELECT COUNT(*) AS n FROM ventas"}, env)
    assert answer["rows"] == [{"n": 90}] or "90" in json.dumps(answer)


def _in_thread(fn, *args):
    """Run ``fn`` in a thread of its own: Playwright's sync API already runs an event loop in this one."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(fn, *args).result()


def _bridge_check(sources: Path, project: Path) -> tuple[int, str]:
    """``analytics-acp bridge --check``: the command's own entry point, its stdout."""
    import contextlib as _contextlib
    import io

    from analytics_acp_bridge.cli import main

    out = io.StringIO()
    with _contextlib.redirect_stdout(out):
        code = main(["--check", "--sources", str(sources), "--project", str(project)])
    return code, out.getvalue()


def _bridge_call(world, tool: str, arguments: dict, env: dict) -> dict:
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def run() -> dict:
        with anyio.fail_after(120):
            return await call()

    async def call() -> dict:
        params = StdioServerParameters(command=sys.executable, args=[
            "-m", "analytics_acp_bridge", "--project", str(world["project"])], env=env, cwd=str(world["project"]))
        async with stdio_client(params, errlog=sys.stderr) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool(tool, arguments)
        body = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        assert not body.get("isError"), body
        return json.loads(body["content"][0]["text"])

    return _in_thread(anyio.run, run)


def test_add_ga4_with_an_uploaded_key_file_and_a_property_from_the_picker(tab, world):
    _add(tab, "Google Analytics 4", "analytics")
    sa = tab.get_by_role("group", name="Service account")
    sa.get_by_label("Upload instead").set_input_files(str(world["key"]))
    tab.get_by_label("API endpoint (advanced)").fill(world["google"].url)
    tab.get_by_role("button", name="Find resources").click()
    # The picker lists what the credentials see (the fake's accountSummaries), free entry stays.
    picker = tab.get_by_role("radiogroup", name="Suggested resources")
    note = tab.locator("#resource").get_by_role("status")
    note.wait_for()  # the form came back with what the search found (count() alone does not wait for that page)
    assert picker.get_by_role("radio").count() >= 3, note.inner_text()
    assert "Kept for this form" in tab.get_by_role("group", name="Service account").inner_text()  # kept, not shown
    picker.get_by_role("radio", name=re.compile("Store")).check()
    shot(tab, "add-source-ga4-picker")
    _save(tab, "analytics")
    assert "Its secrets are kept in the system keyring (FileKeyring)" in tab.locator(".messages").inner_text()
    entry = _entry(world, "analytics")
    assert entry["default_resource_id"] == "987654321"
    reference = entry["credentials"]["service_account"]
    assert entry["credentials"]["type"] == "service_account" and list(reference) == ["keyring"]
    raw = (world["project"] / "sources.json").read_text()
    assert "PRIVATE KEY" not in raw and "private_key" not in raw
    assert _card(tab, "analytics").get_by_test_id("verdict").inner_text().startswith("ok")
    # Edit: the key shows as saved, never its value; saving unchanged keeps the same reference.
    tab.get_by_role("link", name="Edit analytics").click()
    assert world["key"].read_text()[:40] not in tab.content()
    # The picker again, now with the key's keyring reference, resolved as the bridge resolves the saved entry.
    tab.get_by_role("button", name="Find resources").click()
    tab.locator("#resource").get_by_role("status").wait_for()
    assert tab.get_by_role("radiogroup", name="Suggested resources").get_by_role("radio").count() >= 3
    assert world["key"].read_text()[:40] not in tab.content()
    _save(tab, "analytics")
    assert _entry(world, "analytics")["credentials"]["service_account"] == reference


def test_sign_in_with_google_on_the_fake_oauth_server_comes_back_to_the_form(tab, world):
    oauth = world["oauth"]
    _add(tab, "Google Analytics 4", "signedin")
    tab.get_by_role("radio", name="OAuth").check()
    group = tab.get_by_role("group", name="OAuth")
    assert group.get_by_label("Refresh token").count() == 0  # 5.5.5: x-acp-filled fields are never inputs
    group.get_by_label("Google OAuth client file (JSON)").set_input_files(str(world["client_file"]))
    tab.get_by_label("API endpoint (advanced)").fill(world["google"].url)
    group.get_by_role("button", name="Sign in with Google").click()
    tab.get_by_role("button", name="Allow").click()  # the fake consent page
    tab.wait_for_url(re.compile(re.escape(world["page"].base) + r"/sources/new/ga4\?draft="))  # back on the form
    tab.get_by_text("Signed in as analyst@example.com").first.wait_for()
    assert oauth.authorizations[-1]["scope"].split()[0] == "https://www.googleapis.com/auth/analytics.readonly"
    assert oauth.authorizations[-1]["redirect_uri"] == world["page"].base + "/signin/google/callback"
    shot(tab, "sign-in-google")
    tab.get_by_label("Default resource").fill("123456789")
    _save(tab, "signedin")
    entry = _entry(world, "signedin")["credentials"]
    assert entry["type"] == "oauth" and entry["email"] == "analyst@example.com"
    assert all(list(entry[k]) == ["keyring"] for k in ("refresh_token", "access_token", "client_secret"))
    text = (world["project"] / "sources.json").read_text()
    from googlefakes.signin import assert_no_secret

    assert_no_secret(text + tab.content(), oauth.secrets_seen())


def test_a_denied_sign_in_says_what_to_do_in_the_pages_words(tab, world):
    # The sign-in's messages were written for `login google` ("Run the command again"): on the page they say
    # what to do there; the CLI keeps its own words (connectors/google/tests/test_google_login.py).
    _add(tab, "Google Analytics 4", "denied")
    tab.get_by_role("radio", name="OAuth").check()
    group = tab.get_by_role("group", name="OAuth")
    upload = group.get_by_label("Google OAuth client file (JSON)")
    if upload.count():  # none once a client file was uploaded: the page remembers it (the test above may run first)
        upload.set_input_files(str(world["client_file"]))
    group.get_by_role("button", name="Sign in with Google").click()
    tab.get_by_role("button", name="Deny").click()  # the fake consent page
    tab.wait_for_url(re.compile(re.escape(world["page"].base) + r"/sources/new/ga4\?draft="))  # back on the form
    notice = tab.get_by_text("Access was denied in the browser")
    assert notice.inner_text().strip() == ("Access was denied in the browser: nothing was saved. "
                                           "Try signing in again and choose Allow.")
    assert "command" not in tab.locator("main").inner_text()


def test_test_shows_a_typed_problem_when_the_google_fake_is_down(tab, world):
    with socket.socket() as s:  # a port nobody listens on: refused at once
        s.bind(("127.0.0.1", 0))
        down = f"http://127.0.0.1:{s.getsockname()[1]}"
    data = _sources(world)
    key_ref = {"file": str(world["key"])}
    data["sources"].append({"id": "down", "acp": "ga4", "default_resource_id": "123456789",
                            "credentials": {"type": "service_account", "service_account": key_ref},
                            "config": {"api_endpoint": down}})
    (world["project"] / "sources.json").write_text(json.dumps(data))
    tab.reload()
    with server_starts() as started:
        _card(tab, "down").get_by_role("button", name="Test down").click()
    message = tab.locator(".messages").inner_text()
    assert len(started) == 1, started  # online: a server of its own, as --check --online, for the one source tested
    assert "Test of «down»: ACP_UPSTREAM_ERROR" in message, message
    assert _card(tab, "down").get_by_test_id("verdict").inner_text().startswith("error: ACP_UPSTREAM_ERROR")
    shot(tab, "test-problem")
    tab.once("dialog", lambda d: d.accept())
    with server_starts() as started:
        _card(tab, "down").get_by_role("button", name="Remove down").click()
        tab.get_by_text("Removed source «down»").wait_for()
    assert started == []  # the changed file's offline check ran through the servers the page keeps running
    assert all(e["id"] != "down" for e in _sources(world)["sources"])
    assert world["key"].exists()  # a file the person keeps elsewhere is not the page's to delete


def test_a_folder_acp_dropped_into_acps_can_be_added_without_touching_the_page(tab, world, caplog):
    target = world["project"] / "acps" / "fixture"
    shutil.copytree(FIXTURE_ACP, target)
    try:
        _add(tab, "Bridge fixture", "fixt")
        tab.get_by_label("account").fill("ana")  # no title in its schema: the key labels the field (5.5.1)
        tab.get_by_label("token").fill(SECRET)
        tab.get_by_label("Default resource").fill("none")
        _save(tab, "fixt")
        entry = _entry(world, "fixt")
        assert entry["acp"] == "fixture" and entry["credentials"]["account"] == "ana"
        assert SECRET not in (world["project"] / "sources.json").read_text() and SECRET not in tab.content()
        assert SECRET not in caplog.text
    finally:
        data = _sources(world)
        data["sources"] = [e for e in data["sources"] if e["id"] != "fixt"]
        (world["project"] / "sources.json").write_text(json.dumps(data))
        shutil.rmtree(target)


def test_required_types_ranges_and_json_are_checked_and_nothing_is_written(tab, world):
    before = (world["project"] / "sources.json").read_text() if (world["project"] / "sources.json").exists() else None
    _add(tab, "SQL databases", "Bad Id")
    tab.get_by_role("radio", name="Database server").check()
    server = tab.get_by_role("group", name="Database server")
    server.get_by_label("Port").fill("99999")
    server.get_by_label("Password").fill(SECRET)
    tab.get_by_label("Table rules").fill("[{not json")
    tab.get_by_label("Rows the model sees").fill("6000")
    tab.get_by_role("button", name="Save").click()
    body = tab.locator("main").inner_text()
    for expected in ("Source id» must be", "«Host» is required.", "«Port» must be at most 65535.",
                     "«Table rules» is not valid JSON", "«Rows the model sees» must be at most 5000."):
        assert expected in body, expected
    assert SECRET not in tab.content()  # the typed password is kept for the form, never sent back
    assert "Kept for this form" in server.inner_text()
    after = (world["project"] / "sources.json").read_text() if (world["project"] / "sources.json").exists() else None
    assert after == before


def test_default_datasets_and_a_raised_cost_limit_that_needs_confirmation(tab, world):
    _add(tab, "Browser (tagging audit)", "audit")
    tab.get_by_label("Default resource").fill("https://shop.example.com")
    tables = tab.get_by_role("group", name="Default datasets")
    # 8.7: grouped by group, starting from defaults.tables
    assert tables.get_by_role("group", name="GA4").get_by_label("GA4 hits").is_checked()
    assert not tables.get_by_label("Cookies").is_checked()
    tables.get_by_label("Cookies").check()
    tables.get_by_label("GA4 hits").uncheck()
    tab.get_by_label("Cost limit (USD)").fill("5")
    tab.get_by_role("button", name="Save").click()
    confirm = tab.get_by_label("I confirm raising the cost limit to $5")
    assert "Raising the cost limit from $0 to $5" in tab.locator("main").inner_text()
    assert not (world["project"] / "sources.json").exists() or all(
        e["id"] != "audit" for e in _sources(world)["sources"])
    assert tab.get_by_role("group", name="Default datasets").get_by_label("Cookies").is_checked()  # the draft kept it
    confirm.check()
    _save(tab, "audit")
    entry = _entry(world, "audit")
    assert entry["cost_limit_usd"] == 5 and entry["tables"] == ["datalayer", "cookies"]
