"""`analytics-acp login google` / `logout google` (issue 29) against a fake OAuth server, Chromium as the user's browser.

Every run is the real command in a subprocess with its own config folder; every test checks that
no secret (client secret, codes, PKCE verifier, tokens) reached stdout or stderr.
"""

from __future__ import annotations

import json
import socket
import stat
import sys
from pathlib import Path

import pytest
from analytics_acp.plugins import load_connector
from analytics_acp.schemas import validate_credentials
from analytics_acp_google.credentials import build_credentials
from analytics_acp_google.errors import to_acp_error
from googlefakes.authserver import OAuthFake
from googlefakes.signin import LoginRun, assert_no_secret, browser_decide, chromium, http_decide, login_env, run_cli

GOOGLE_ACPS = ("bigquery", "ga4", "gsc")


@pytest.fixture
def oauth():
    with OAuthFake(email="analyst@example.com") as fake:
        fake.client_id, fake.client_secret = fake.add_client()
        yield fake


@pytest.fixture
def home(tmp_path):
    """The user's config folder (ANALYTICS_ACP_CONFIG_DIR) and a client-secrets file pointing at the fake."""
    return tmp_path / "config"


@pytest.fixture
def secrets_file(tmp_path, oauth) -> Path:
    path = tmp_path / "client_secret.json"
    path.write_text(json.dumps(oauth.client_secrets(oauth.client_id, oauth.client_secret)))
    return path


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


def _signins(home: Path) -> list[Path]:
    return sorted((home / "google").glob("*")) if (home / "google").exists() else []


def _clean(run_out: str, oauth: OAuthFake) -> None:
    assert_no_secret(run_out, oauth.secrets_seen())


def _sign_in_http(oauth, secrets_file, home, *extra: str, decision: str = "allow") -> tuple[int, str, str]:
    """A whole sign-in with the consent page answered over plain HTTP (for tests about what comes after)."""
    run = LoginRun(["login", "google", "--no-browser", "--client-secrets", str(secrets_file), "--timeout", "60", *extra],
                   login_env(home))
    http_decide(run.wait_for_url(oauth.url + "/o/auth"), decision)
    code = run.finish()
    return code, run.stdout, run.stderr


@pytest.fixture
def signed_in(oauth, secrets_file, home, monkeypatch):
    """``signed_in(*extra)``: a sign-in as set-up for tests about what comes after it (list, logout, a second
    sign-in): the login command's own code (``login_main``) in this process, the consent answered over HTTP
    where it would open the browser. Returns its exit code. What a sign-in prints and exits with is proven
    by the tests that run the command as a process; this saves a Python start (about 1 CPU-s) per set-up."""
    import threading
    import webbrowser

    from analytics_acp_google.login_cli import login_main

    for name, value in (("ANALYTICS_ACP_CONFIG_DIR", str(home)), ("OAUTHLIB_INSECURE_TRANSPORT", "1"),
                        ("OAUTHLIB_RELAX_TOKEN_SCOPE", "1"),  # as login_env gives the process; restored after the test
                        ("DISPLAY", ":0")):  # a desktop: the command opens the browser (webbrowser.open, below)
        monkeypatch.setenv(name, value)

    def consent(url: str, *args, **kwargs) -> bool:
        threading.Thread(target=http_decide, args=(url, "allow"), daemon=True).start()
        return True

    monkeypatch.setattr(webbrowser, "open", consent)
    return lambda *extra: login_main(["google", "--client-secrets", str(secrets_file), "--timeout", "60", *extra])


def test_allow_in_chromium_writes_a_private_file_every_google_acp_accepts(oauth, secrets_file, home, browser):
    run = LoginRun(["login", "google", "--no-browser", "--client-secrets", str(secrets_file), "--timeout", "120"], login_env(home))
    url = run.wait_for_url(oauth.url + "/o/auth")
    assert "Signed in to analytics-acp as analyst@example.com." in browser_decide(browser, url, "Allow")
    assert run.finish() == 0, run.stderr
    # The file: 0600 in 0700 folders of the config dir, gcloud's authorized_user shape plus token_uri/email/scopes.
    (path,) = _signins(home)
    assert path == home / "google" / "analyst@example.com.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700 and stat.S_IMODE(home.stat().st_mode) == 0o700
    data = json.loads(path.read_text())
    assert data["type"] == "authorized_user" and data["refresh_token"] in oauth.issued_refresh
    assert (data["client_id"], data["client_secret"]) == (oauth.client_id, oauth.client_secret)
    assert data["token_uri"] == f"{oauth.url}/o/token" and data["email"] == "analyst@example.com"
    declared = {cid: load_connector(cid).info.credentials_schema for cid in GOOGLE_ACPS}
    scopes = [v["x-acp-login"]["scopes"][0] for s in declared.values() for v in s["oneOf"] if "x-acp-login" in v]
    assert sorted(data["scopes"]) == sorted(scopes) and len(scopes) == 3
    # PKCE S256 and the state: sent to the authorization page, the verifier matched at the token endpoint.
    (auth,) = oauth.authorizations
    assert auth["code_challenge_method"] == "S256" and len(auth["code_challenge"]) == 43 and len(auth["state"]) >= 20
    assert auth["redirect_uri"].startswith("http://127.0.0.1:") and auth["access_type"] == "offline"
    assert set(auth["scope"].split()) >= set(scopes) | {"openid"}
    assert oauth.token_requests == [{"grant_type": "authorization_code", "client_auth": "basic", "client_ok": True, "pkce": True}]
    # Every Google connector's credentials_schema accepts the file, and google-auth refreshes with it.
    for schema in declared.values():
        validate_credentials(schema, data)
    import google.auth.transport.requests

    creds = build_credentials(data, scopes[:1])
    creds.refresh(google.auth.transport.requests.Request())
    assert creds.token in oauth.issued_access and oauth.token_requests[-1]["grant_type"] == "refresh_token"
    # What the user reads: the path and a sources.json snippet per Google ACP; never a secret.
    assert str(path) in run.stdout and '"file": "' + str(path) + '"' in run.stdout
    for cid in GOOGLE_ACPS:
        assert f'"acp": "{cid}"' in run.stdout
    _clean(run.stdout + run.stderr, oauth)


def test_deny_in_chromium_is_a_clear_error_and_writes_nothing(oauth, secrets_file, home, browser):
    run = LoginRun(["login", "google", "--no-browser", "--client-secrets", str(secrets_file), "--timeout", "120"], login_env(home))
    assert "not completed" in browser_decide(browser, run.wait_for_url(oauth.url + "/o/auth"), "Deny")
    assert run.finish() == 1
    assert run.stderr.strip() == ("analytics-acp login: Access was denied in the browser: nothing was saved. "
                                  "Run the command again and choose Allow.")
    assert _signins(home) == [] and oauth.token_requests == []
    _clean(run.stdout + run.stderr, oauth)


def test_token_endpoint_down_after_allow_is_one_line_and_writes_nothing(oauth, tmp_path, home, browser):
    with socket.socket() as probe:  # a port nobody listens on: a real refused connection
        probe.bind(("127.0.0.1", 0))
        dead = probe.getsockname()[1]
    path = tmp_path / "client_secret.json"
    path.write_text(json.dumps(oauth.client_secrets(oauth.client_id, oauth.client_secret, token_uri=f"http://127.0.0.1:{dead}/token")))
    run = LoginRun(["login", "google", "--no-browser", "--client-secrets", str(path), "--timeout", "120"], login_env(home))
    page = browser_decide(browser, run.wait_for_url(oauth.url + "/o/auth"), "Allow")
    assert run.finish() == 1
    assert run.stderr.count("\n") == 1 and f"Could not reach the token endpoint 127.0.0.1:{dead} (connection failed)" in run.stderr
    # Issue 34.4: the tab is answered after the code exchange, with its outcome (it said "Signed in" before).
    assert "Signed in" not in page and page.startswith("Sign-in was not completed: Could not reach the token endpoint")
    assert _signins(home) == []
    _clean(run.stdout + run.stderr, oauth)


@pytest.fixture
def silent_port():
    """A listener that accepts connections and never answers."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        yield silent.getsockname()[1]


@pytest.mark.parametrize("where, expected", [
    ("silent", "The token endpoint 127.0.0.1:{port} did not answer within 1 s: try again later."),
    ("invalid", "Could not reach the token endpoint oauth2.token.invalid (connection failed)"),
])
def test_a_silent_or_unresolvable_token_endpoint_is_one_line(oauth, tmp_path, home, silent_port, where, expected):
    token_uri = f"http://127.0.0.1:{silent_port}/token" if where == "silent" else "http://oauth2.token.invalid/token"
    path = tmp_path / "client_secret.json"
    path.write_text(json.dumps(oauth.client_secrets(oauth.client_id, oauth.client_secret, token_uri=token_uri)))
    env = login_env(home, ANALYTICS_ACP_GOOGLE_TIMEOUT_S="1")
    run = LoginRun(["login", "google", "--no-browser", "--client-secrets", str(path), "--timeout", "60"], env)
    page = http_decide(run.wait_for_url(oauth.url + "/o/auth"))
    assert run.finish() == 1
    assert run.stderr.count("\n") == 1 and expected.format(port=silent_port) in run.stderr, run.stderr
    # Issue 34.4: the loopback page the browser lands on says the same, never "Signed in".
    assert "Signed in" not in page and "Sign-in was not completed: " + expected.format(port=silent_port) in page, page
    assert _signins(home) == []
    _clean(run.stdout + run.stderr, oauth)


def test_no_answer_within_the_timeout_is_a_clear_error(oauth, secrets_file, home):
    # --timeout 1 (was 2): the wait must elapse in full, and 1 s proves the same bound and message.
    code, out, err = run_cli(["login", "google", "--no-browser", "--client-secrets", str(secrets_file), "--timeout", "1"],
                             login_env(home))
    assert code == 1 and oauth.url + "/o/auth" in out
    # The scopes (from each ACP's x-acp-login) are printed before the URL.
    assert out.splitlines()[0] == ("Signing in for bigquery, ga4, gsc with scopes: bigquery, analytics.readonly, "
                                   "webmasters.readonly (plus your email address).")
    assert err.strip() == ("analytics-acp login: No answer from the browser within 1 s: sign-in cancelled. "
                           "Run the command again (--timeout sets the wait).")
    assert _signins(home) == []


def test_a_redirect_with_another_state_is_refused_before_any_code_exchange(oauth, secrets_file, home):
    from urllib.parse import parse_qs, urlsplit

    import requests

    run = LoginRun(["login", "google", "--no-browser", "--client-secrets", str(secrets_file), "--timeout", "60"], login_env(home))
    query = parse_qs(urlsplit(run.wait_for_url(oauth.url + "/o/auth")).query)
    requests.get(query["redirect_uri"][0], params={"code": "4/forged", "state": "not-the-state"}, timeout=30)
    assert run.finish() == 1 and "different state than was sent" in run.stderr
    assert oauth.token_requests == [] and _signins(home) == []


def test_a_port_in_use_is_one_line(oauth, secrets_file, home):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code, out, err = run_cli(["login", "google", "--no-browser", "--client-secrets", str(secrets_file), "--port", str(port)],
                                 login_env(home))
    assert code == 1 and oauth.authorizations == [] and _signins(home) == []
    assert err == (f"analytics-acp login: Port {port} on 127.0.0.1 is in use: pass another --port, "
                   "or leave it out to use a free one.\n")


@pytest.mark.parametrize("content, expected", [
    (None, "not found: create one in the Google Cloud console"),
    ("web", "is a Web application OAuth client; sign-in needs a Desktop app client"),
    ({"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----x"}, "is a service_account file, not an OAuth client"),
    ("{not json", "is not valid JSON"),
    ({"installed": {"client_id": "x"}}, "lacks client_secret, auth_uri, token_uri"),
])
def test_a_missing_or_wrong_kind_of_client_secrets_file_is_one_line(oauth, tmp_path, home, content, expected):
    path = tmp_path / "client_secret.json"
    if content == "web":
        path.write_text(json.dumps(oauth.client_secrets(oauth.client_id, oauth.client_secret, kind="web")))
    elif isinstance(content, str):
        path.write_text(content)
    elif content is not None:
        path.write_text(json.dumps(content))
    code, out, err = run_cli(["login", "google", "--no-browser", "--client-secrets", str(path)], login_env(home))
    assert code == 1 and expected in err and err.count("\n") == 1, err
    assert oauth.authorizations == [] and not home.exists()
    assert_no_secret(out + err, [oauth.client_secret, "BEGIN PRIVATE KEY"])


def test_sources_and_source_update_only_that_source(oauth, secrets_file, home, tmp_path):
    sources = tmp_path / "sources.json"
    original = {"defaults": {"row_limit": 100}, "sources": [
        {"id": "web", "acp": "ga4", "label": "Web", "default_resource_id": "123", "config": {"api_endpoint": "http://x"},
         "credentials": {"type": "service_account", "service_account": {"env": "SA_JSON"}}},
        {"id": "search", "acp": "gsc", "credentials": {"file": "other.json"}},
        {"id": "db", "acp": "databases", "credentials": {"url": {"env": "DB_URL"}}},
    ], "x-note": "kept"}
    sources.write_text(json.dumps(original, indent=4))
    sources.chmod(0o640)
    oauth.id_token = False  # the email then comes from the userinfo endpoint
    code, out, err = _sign_in_http(oauth, secrets_file, home, "--for", "ga4", "--sources", str(sources), "--source", "web")
    assert code == 0, err
    (path,) = _signins(home)
    after = json.loads(sources.read_text())
    expected = json.loads(json.dumps(original))
    expected["sources"][0]["credentials"] = {"file": str(path)}
    assert after == expected and stat.S_IMODE(sources.stat().st_mode) == 0o640
    assert oauth.userinfo_calls == 1 and json.loads(path.read_text())["email"] == "analyst@example.com"
    assert json.loads(path.read_text())["scopes"] == ["https://www.googleapis.com/auth/analytics.readonly"]
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    _clean(out + err, oauth)


@pytest.mark.parametrize("source, expected", [("nope", "No source 'nope' in"), ("db", "uses ACP 'databases', which has no Google sign-in")])
def test_a_bad_source_is_refused_before_the_browser_opens(oauth, secrets_file, home, tmp_path, source, expected):
    sources = tmp_path / "sources.json"
    sources.write_text(json.dumps({"sources": [{"id": "db", "acp": "databases"}]}))
    before = sources.read_bytes()
    code, out, err = run_cli(["login", "google", "--no-browser", "--client-secrets", str(secrets_file),
                              "--sources", str(sources), "--source", source], login_env(home))
    assert code == 1 and expected in err and oauth.authorizations == []
    assert sources.read_bytes() == before and _signins(home) == []


def test_a_config_folder_inside_a_git_work_tree_is_refused_without_out(oauth, secrets_file, tmp_path):
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    code, out, err = run_cli(["login", "google", "--no-browser", "--client-secrets", str(secrets_file)],
                             login_env(tmp_path / "repo" / "cfg"))
    assert code == 1 and "inside the git work tree" in err and "--out" in err and oauth.authorizations == []


def test_list_shows_every_sign_in_and_no_secret(oauth, home, signed_in):
    assert signed_in("--for", "ga4") == 0
    oauth.email = "second@example.com"
    assert signed_in("--for", "gsc,ga4") == 0
    code, out, err = run_cli(["login", "google", "--list"], login_env(home))
    assert code == 0 and err == ""
    lines = out.strip().splitlines()
    assert [line.split()[0] for line in lines] == ["analyst@example.com", "second@example.com"]
    assert "scopes: analytics.readonly " in lines[0] and "scopes: webmasters.readonly, analytics.readonly " in lines[1]
    assert f"file: {home / 'google' / 'second@example.com.json'}" in lines[1] and "last refresh: 20" in lines[1]
    _clean(out, oauth)


def test_logout_revokes_then_deletes_and_the_revoked_file_says_sign_in_again(oauth, home, signed_in):
    assert signed_in("--for", "ga4") == 0
    (path,) = _signins(home)
    data = json.loads(path.read_text())
    code, out, err = run_cli(["logout", "google"], login_env(home))
    assert code == 0, err
    assert oauth.revocations == [{"known": True}] and oauth.revoked == [data["refresh_token"]] and not path.exists()
    assert out == f"Signed out analyst@example.com: the refresh token was revoked and {path} deleted.\n"
    _clean(out + err, oauth)
    # The connectors' answer to a revoked sign-in (the same file, as a source would still reference it).
    import google.auth.transport.requests

    creds = build_credentials({**data, "access_token": None}, data["scopes"])
    with pytest.raises(Exception) as info:
        creds.refresh(google.auth.transport.requests.Request())
    message = to_acp_error(info.value).message
    assert "invalid_grant" in message and "Sign in again with `analytics-acp login google`" in message
    assert data["refresh_token"] not in message and data["client_secret"] not in message


def test_a_failed_revocation_keeps_the_file_unless_forced(oauth, home, signed_in):
    assert signed_in() == 0
    oauth.email = "second@example.com"
    assert signed_in() == 0
    code, out, err = run_cli(["logout", "google"], login_env(home))
    assert code == 1 and "Several sign-ins are stored (analyst@example.com, second@example.com): pass --email." in err
    oauth.revoke_status = 503
    code, out, err = run_cli(["logout", "google", "--email", "analyst@example.com"], login_env(home))
    host = oauth.url.split("//")[1]
    assert code == 1 and f"could not revoke the sign-in of analyst@example.com: {host} answered HTTP 503 (backend_error)" in err
    assert "was kept" in err and len(_signins(home)) == 2
    code, out, err = run_cli(["logout", "google", "--email", "analyst@example.com", "--force"], login_env(home))
    assert code == 0 and "could not revoke" in err and "Deleted" in err
    assert [p.name for p in _signins(home)] == ["second@example.com.json"] and len(oauth.revocations) == 2
    _clean(out + err, oauth)


def test_out_may_name_a_file_in_a_git_work_tree_and_logout_file_revokes_it(oauth, secrets_file, home, tmp_path):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    out = repo / "private" / "me.json"
    code, stdout, err = _sign_in_http(oauth, secrets_file, home, "--for", "gsc", "--out", str(out))
    assert code == 0, err
    assert stat.S_IMODE(out.stat().st_mode) == 0o600 and _signins(home) == []
    assert f"Credentials saved to {out} (mode 0600)" in stdout
    code, stdout, err = run_cli(["logout", "google", "--file", str(out)], login_env(home))
    assert code == 0 and not out.exists() and oauth.revocations == [{"known": True}]
    _clean(stdout + err, oauth)


def test_signing_in_again_with_fewer_acps_says_what_the_replaced_file_covered(oauth, secrets_file, home, signed_in):
    assert signed_in("--for", "ga4,gsc") == 0
    code, out, err = _sign_in_http(oauth, secrets_file, home, "--for", "ga4")
    assert code == 0 and "also covered webmasters.readonly" in out
    assert json.loads((home / "google" / "analyst@example.com.json").read_text())["scopes"] == [
        "https://www.googleapis.com/auth/analytics.readonly"]


def test_debug_logging_of_the_embedding_program_shows_no_secret(oauth, secrets_file, caplog, monkeypatch):
    """In process, with every logger at DEBUG: requests-oauthlib's token-request logging must stay silent."""
    import logging
    import threading

    from analytics_acp_google.login import read_client_secrets, sign_in

    monkeypatch.setenv("OAUTHLIB_INSECURE_TRANSPORT", "1")
    caplog.set_level(logging.DEBUG)
    logging.getLogger("requests_oauthlib").setLevel(logging.NOTSET)
    seen: list[str] = []

    def show(url: str, not_opened: str | None) -> None:
        seen.append(url)
        threading.Thread(target=http_decide, args=(url, "allow"), daemon=True).start()

    result = sign_in(read_client_secrets(secrets_file), ["https://www.googleapis.com/auth/analytics.readonly"],
                     port=0, timeout_s=60, show_url=show, open_browser=False)
    assert result.credentials["refresh_token"] in oauth.issued_refresh and seen
    assert caplog.records  # urllib3 and others did log at DEBUG
    assert_no_secret(caplog.text, oauth.secrets_seen())


def test_for_names_only_installed_google_acps(oauth, secrets_file, home):
    code, out, err = run_cli(["login", "google", "--no-browser", "--client-secrets", str(secrets_file), "--for", "ga4,databases"],
                             login_env(home))
    assert code == 1 and oauth.authorizations == []
    assert err == "analytics-acp login: --for databases: not an installed Google ACP (installed: bigquery, ga4, gsc).\n"


def test_the_login_modules_import_no_oauth_or_google_library_until_used():
    import subprocess
    import sys

    code = ("import sys, analytics_acp_google.login, analytics_acp_google.login_cli, analytics_acp_google.oauth_store; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('google', 'google_auth_oauthlib', 'oauthlib', 'requests_oauthlib', 'platformdirs', 'requests')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60).stdout
    assert out.strip() == "[]"


def test_a_scope_unticked_on_the_consent_screen_is_named_with_the_acp_it_breaks(oauth, secrets_file, home):
    oauth.grant_only = ["https://www.googleapis.com/auth/analytics.readonly", "openid"]
    code, out, err = _sign_in_http(oauth, secrets_file, home, "--for", "ga4,gsc")
    assert code == 0, err
    assert "Warning: the consent screen did not grant webmasters.readonly: gsc will be refused." in out
    assert json.loads((home / "google" / "analyst@example.com.json").read_text())["scopes"] == [
        "https://www.googleapis.com/auth/analytics.readonly"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="DISPLAY/WAYLAND_DISPLAY decide only on Linux")
def test_without_a_display_it_prints_the_url_and_says_no_browser_opened(oauth, secrets_file, home):
    """Issue 34.4: Linux without DISPLAY/WAYLAND_DISPLAY (SSH, a container) cannot open a browser: the command says
    so with the URL instead of "Opening your browser", and still ends at its --timeout."""
    env = login_env(home)
    for name in ("DISPLAY", "WAYLAND_DISPLAY"):
        env.pop(name, None)
    code, out, err = run_cli(["login", "google", "--client-secrets", str(secrets_file), "--timeout", "1"], env)
    assert code == 1 and "Opening your browser" not in out
    lines = out.splitlines()
    assert lines[1] == ("Could not open a browser (no display: DISPLAY and WAYLAND_DISPLAY are unset). Open this URL in a "
                        "browser on this machine to sign in (waiting 1 s):")
    assert lines[2].startswith(oauth.url + "/o/auth?")
    assert err.strip() == ("analytics-acp login: No answer from the browser within 1 s: sign-in cancelled. "
                           "Run the command again (--timeout sets the wait).")


def test_when_no_browser_is_found_it_says_so(oauth, secrets_file, home, monkeypatch, capsys):
    import webbrowser

    from analytics_acp_google.login_cli import login_main

    for name, value in (("ANALYTICS_ACP_CONFIG_DIR", str(home)), ("OAUTHLIB_INSECURE_TRANSPORT", "1"), ("DISPLAY", ":0")):
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(webbrowser, "open", lambda *args, **kwargs: False)  # webbrowser found no browser to run
    assert login_main(["google", "--client-secrets", str(secrets_file), "--timeout", "0.1"]) == 1
    out = capsys.readouterr().out
    assert "Could not open a browser (no browser was found). Open this URL in a browser" in out
    assert "Opened your browser" not in out and "Opening your browser" not in out
