"""analytics-acp check (14.2 + the package items of 13) against a good server and deliberately broken ones."""

import json
import sys

import pytest
from analytics_acp_build.check import Target, failed, run_check
from analytics_acp_build.cli import check_main
from build_support import manifest, server_folder, zip_tree


def status(items, item):
    found = [i for i in items if i.item == item]
    assert found, f"{item} missing from {[i.item for i in items]}"
    return found[0].status, found[0].evidence


def raw_folder(tmp_path, *flags, http_flags=(), **acp_extra):
    acp = manifest(transport={"type": "stdio", "command": "python", "args": ["server.py", *flags]},
                   http={"args": ["server.py", *flags, *http_flags, "--http", "--port", "7413"]}, **acp_extra)
    return server_folder(tmp_path / "tinyconn", acp=acp)


def test_quick_subset_passes_on_a_bare_sdk_acp_server(tmp_path):
    items = run_check(Target(folder=raw_folder(tmp_path)), quick=True, timeout=30)
    assert [i.item for i in items] == ["package.zip", "package.acp_json", "package.starts"]
    assert not failed(items)
    assert "autocontext_data" in status(items, "package.starts")[1]


def test_not_acp_server_fails_start(tmp_path):
    items = run_check(Target(folder=raw_folder(tmp_path, "--no-acp")), timeout=30)
    st, why = status(items, "package.starts")
    assert st == "fail" and "capabilities.experimental.acp" in why


def test_missing_reserved_tools_fail_start(tmp_path):
    items = run_check(Target(folder=raw_folder(tmp_path, "--no-reserved")), quick=True, timeout=30)
    st, why = status(items, "package.starts")
    assert st == "fail" and "autocontext" in why


@pytest.fixture(scope="module")
def dirty_open_http_items(tmp_path_factory):
    """One full check of a server that both writes into its folder and ignores ACP_HTTP_TOKEN: the two
    tests below only read their own item from it (a full check starts several server processes)."""
    folder = raw_folder(tmp_path_factory.mktemp("dirty-open-http"), "--dirty", http_flags=["--open-http"])
    return run_check(Target(folder=folder), timeout=60)


def test_server_writing_into_its_folder_fails(dirty_open_http_items):
    st, why = status(dirty_open_http_items, "package.read_only_folder")
    assert st == "fail" and "written-at-runtime.txt" in why


def test_clean_server_keeps_its_folder_unchanged(tmp_path):
    items = run_check(Target(folder=raw_folder(tmp_path)), timeout=60)
    assert status(items, "package.read_only_folder")[0] == "pass"
    assert status(items, "package.http_mode")[0] == "pass"


def test_http_mode_without_token_enforcement_fails(dirty_open_http_items):
    st, why = status(dirty_open_http_items, "package.http_mode")
    assert st == "fail" and "not 401" in why


@pytest.fixture(scope="module")
def bad_acp_json_items(tmp_path_factory):
    """One quick check of a folder whose acp.json has capability fields and an icon outside the folder
    (the check still starts the server): the two tests below each read their problem from it."""
    folder = raw_folder(tmp_path_factory.mktemp("bad-acp-json"), credentials={"type": "object"}, tools=["hello"],
                        icon="../icon.svg")
    return run_check(Target(folder=folder), quick=True, timeout=30)


def test_acp_json_with_capability_fields_fails(bad_acp_json_items):
    st, why = status(bad_acp_json_items, "package.acp_json")
    assert st == "fail" and "credentials" in why and "tools" in why


def test_icon_outside_the_folder_fails(bad_acp_json_items):
    st, why = status(bad_acp_json_items, "package.acp_json")
    assert st == "fail" and "'..'" in why


def test_bad_zip_fails_the_zip_item(tmp_path):
    src = raw_folder(tmp_path)
    path = zip_tree(src, tmp_path / "bad.zip", extra=[("../escape.txt", b"x")])
    items = run_check(Target(zip=path), timeout=30)
    assert [(i.item, i.status) for i in items] == [("package.zip", "fail")]


def test_good_zip_is_checked_from_a_temp_extraction(tmp_path):
    path = zip_tree(raw_folder(tmp_path), tmp_path / "good.zip", extra=[("outside.txt", b"ignored")])
    items = run_check(Target(zip=path), quick=True, timeout=30)
    st, why = status(items, "package.zip")
    assert st == "pass" and "1 entries outside it ignored" in why
    assert not failed(items)


def test_cli_json_and_exit_status(tmp_path, capsys):
    assert check_main([str(raw_folder(tmp_path)), "--quick", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] is True and {i["item"] for i in doc["items"]} >= {"package.acp_json", "package.starts"}
    broken = raw_folder(tmp_path / "b", "--no-acp")
    assert check_main([str(broken), "--quick"]) == 1
    out = capsys.readouterr().out
    assert "fail  package.starts" in out and "checklist: " in out


def test_cli_command_target(tmp_path, capsys):
    folder = raw_folder(tmp_path)
    assert check_main(["--quick", "--", sys.executable, str(folder / "server.py")]) == 0
    out = capsys.readouterr().out
    assert "n/a   package.acp_json" in out and "pass  package.starts" in out


def test_cli_usage_errors(tmp_path):
    with pytest.raises(SystemExit) as exc:
        check_main([str(tmp_path / "missing")])
    assert exc.value.code == 2


def test_full_checklist_on_the_core_runtime_server(tmp_path):
    """A good server: the tiny connector served by the core runtime passes every item of the checklist."""
    folder = server_folder(tmp_path / "tinyconn", runtime="core")
    items = run_check(Target(folder=folder), timeout=90)
    bad = failed(items)
    assert not bad, "\n".join(f"{i.item}: {i.evidence}" for i in bad)
    statuses = {i.item: i.status for i in items}
    assert statuses["package.starts"] == statuses["package.read_only_folder"] == "pass"
    assert statuses["handshake.capability"] == "pass" and statuses["results.skills"] == "pass"


@pytest.mark.parametrize("flags,why", [(["--acp-version", "2.0"], "announces ACP 2.0"),
                                       (["--no-acp"], "does not announce capabilities.experimental.acp")])
def test_check_sends_nothing_of_acp_to_a_server_without_acp_1(tmp_path, flags, why):
    """4.3: the probe names why the server is plain MCP and sends it no credentials, _meta.acp or configure."""
    record = tmp_path / "requests.jsonl"
    secret = "HUNTER2-5c1d3f"
    items = run_check(Target(folder=raw_folder(tmp_path, *flags)), credentials={"type": "api_key", "api_key": secret},
                      env={"RAW_ACP_RECORD": str(record)}, timeout=30)
    st, evidence = status(items, "package.starts")
    assert st == "fail" and why in evidence and "plain MCP" in evidence
    sent = record.read_text()
    assert secret not in sent and "acp/configure" not in sent and '"_meta"' not in sent
