"""MCP Apps in the bridge (issue 36.2-36.3), through real stdio clients: one that negotiates the extension and one
that does not, on the same project and test connector (fixture_acp).

The second sees nothing new (capabilities, tools, resources, results); the first gets the view on the tools
whose results are datasets, the app-only tools, the ``ui://`` resource and the datasets to show in each
result's ``_meta``, with the same texts. The app-only tools answer typed errors, stay inside acp-data and
never carry a secret.
"""

from __future__ import annotations

import json

import pytest
import pytest_asyncio

APPS = {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}
VIEW = "ui://analytics-acp/dataset"
KEY = "analytics-acp/view"
TOKEN = "fx-apps-secret-token-0123456789"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def clients(tmp_path_factory, shared_bridge, write_sources):
    base = tmp_path_factory.mktemp("apps")
    root = shared_bridge.fixture_root(base / "root")
    project = base / "proj"
    (project / "acp-data").mkdir(parents=True)
    # A CSV the user dropped in acp-data, with the source's secret in a cell and in a column name (16.8).
    (project / "acp-data" / "leaky.csv").write_text(f"name,{TOKEN}\nalpha,1\n{TOKEN},2\n", encoding="utf-8")
    write_sources(root / "sources.json", {"defaults": {"row_limit": 4}, "sources": [
        {"id": "fx", "acp": "fixture", "label": "Fixture", "credentials": {"account": "acct", "token": {"env": "APPS_FX_TOKEN"}}},
    ]})
    env = {"APPS_FX_TOKEN": TOKEN}
    async with shared_bridge.open(project, root, env=env, extensions=APPS) as apps, \
            shared_bridge.open(project, root, env=env) as plain:
        yield {"apps": apps, "plain": plain, "project": project}


def _strip_view(tool: dict) -> dict:
    meta = {k: v for k, v in (tool.get("_meta") or {}).items() if k != "ui"}
    out = {k: v for k, v in tool.items() if k != "_meta"}
    return {**out, "_meta": meta} if meta else out


@pytest.mark.asyncio(loop_scope="module")
async def test_only_a_client_that_negotiates_it_sees_the_extension(clients):
    apps, plain = clients["apps"], clients["plain"]
    assert "io.modelcontextprotocol/ui" in (apps.session.initialize_result.capabilities.extensions or {})
    assert not plain.session.initialize_result.capabilities.extensions
    with_view, without = await apps.tools(), await plain.tools()
    assert set(with_view) - set(without) == {"acp_dataset_page", "acp_dataset_summary"}
    for name in ("acp_dataset_page", "acp_dataset_summary"):
        assert with_view[name]["_meta"]["ui"] == {"resourceUri": VIEW, "visibility": ["app"]}
    viewed = {n for n, t in with_view.items() if (t.get("_meta") or {}).get("ui", {}).get("visibility") is None
              and (t.get("_meta") or {}).get("ui")}
    # extractions, a source's tool reading a dataset (table_ref) and acp_query; nothing else
    assert viewed == {"fx__multi", "fx__numbers", "fx__priced", "fx__table_sum", "acp_query"}
    assert {n: _strip_view(with_view[n]) for n in without} == without  # otherwise the very same list
    assert not json.dumps(without).count('"ui"')
    # the model-facing texts never name the app-only tools (hosts hide them; nothing asks for them)
    instructions = apps.session.initialize_result.instructions or ""
    model_facing = instructions + json.dumps([t for n, t in with_view.items() if n not in {"acp_dataset_page", "acp_dataset_summary"}])
    assert "acp_dataset_page" not in model_facing and "acp_dataset_summary" not in model_facing
    listed = {str(r.uri) for r in (await apps.session.list_resources()).resources}
    assert VIEW in listed and VIEW not in {str(r.uri) for r in (await plain.session.list_resources()).resources}
    read = (await apps.session.read_resource(VIEW)).contents[0]
    assert read.mime_type == "text/html;profile=mcp-app" and read.text.startswith("<!DOCTYPE html>")
    assert read.meta == {"ui": {"prefersBorder": True}}  # no ui.csp: the host's restrictive default (no network)
    for needle in ("http://", "https://", "<link", "src=\"http", "@import"):
        assert needle not in read.text.replace("http://www.w3.org/2000/svg", ""), needle


@pytest.mark.asyncio(loop_scope="module")
async def test_same_texts_and_the_datasets_to_show_for_apps_only(clients):
    apps, plain = clients["apps"], clients["plain"]
    a_err, a_texts, a_raw = await apps.call("fx__numbers", {"count": 60})
    p_err, p_texts, p_raw = await plain.call("fx__numbers", {"count": 60})
    assert not a_err and not p_err
    mine = a_raw["_meta"][KEY]["datasets"][0]["id"]
    theirs = p_texts[1].split("«")[1].split("»")[0]
    assert a_texts[0] == p_texts[0] and a_texts[1].replace(mine, theirs) == p_texts[1]
    assert "_meta" not in p_raw
    assert a_raw["_meta"] == {KEY: {"datasets": [{"id": mine, "name": None, "title": "Squares", "rows": 60}]}}

    _, _, multi = await apps.call("fx__multi", {"big": 30})
    shown = multi["_meta"][KEY]["datasets"]
    assert [(d["name"], d["rows"]) for d in shown] == [("hits", 3), ("network", 30)]  # one tab each; cookies was empty

    _, _, summed = await apps.call("fx__table_sum", {"table_ref": mine, "column": "sq"})
    assert [d["id"] for d in summed["_meta"][KEY]["datasets"]] == [mine]  # the dataset the tool read

    _, texts, queried = await apps.call("acp_query", {"sql": f"SELECT i FROM {mine} WHERE i < 5"})
    assert queried["_meta"][KEY]["datasets"][0]["id"] == json.loads(texts[0])["dataset"]

    _, _, other = await apps.call("fx__whoami")
    assert "_meta" not in other  # not a dataset tool: no view


@pytest.mark.asyncio(loop_scope="module")
async def test_app_only_tools_page_the_whole_dataset(clients):
    apps = clients["apps"]
    _, _, raw = await apps.call("fx__numbers", {"count": 130})
    dataset = raw["_meta"][KEY]["datasets"][0]["id"]
    is_error, page, _ = await apps.call_json("acp_dataset_page", {"dataset_id": dataset, "offset": 120, "limit": 50})
    assert not is_error and page["rows"] == [[i, i * i] for i in range(120, 130)] and page["total_rows"] == 130
    is_error, page, _ = await apps.call_json("acp_dataset_page", {"dataset_id": dataset, "sort": {"column": "sq", "desc": True},
                                                                  "limit": 3})
    assert page["rows"] == [[129, 129 * 129], [128, 128 * 128], [127, 127 * 127]] and page["next_cursor"]
    is_error, card, _ = await apps.call_json("acp_dataset_summary", {"dataset_id": dataset})
    assert not is_error and (card["row_count"], card["columns"]) == (130, [{"name": "i", "type": "integer"},
                                                                           {"name": "sq", "type": "integer"}])


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("arguments,name,needle", [
    ({"dataset_id": "no_such_dataset"}, "ACP_TABLE_NOT_FOUND", "No dataset 'no_such_dataset' in acp-data"),
    ({"dataset_id": "../sources"}, "ACP_TABLE_NOT_FOUND", "No dataset '../sources'"),
    ({"dataset_id": "/etc/passwd"}, "ACP_TABLE_NOT_FOUND", "No dataset '/etc/passwd'"),
    ({"dataset_id": "leaky", "offset": -5}, "ACP_INVALID_ARGUMENTS", "offset must be an integer >= 0"),
    ({"dataset_id": "leaky", "offset": 99}, "ACP_INVALID_ARGUMENTS", "offset 99 is past the last row"),
    ({"dataset_id": "leaky", "limit": 0}, "ACP_INVALID_ARGUMENTS", "limit must be an integer from 1 to 500"),
    ({"dataset_id": "leaky", "sort": {"column": "nope"}}, "ACP_INVALID_ARGUMENTS", "has no column 'nope' to sort by"),
])
async def test_app_only_tools_answer_typed_errors(clients, arguments, name, needle):
    is_error, body, _ = await clients["apps"].call_json("acp_dataset_page", arguments)
    assert is_error and body["error"]["name"] == name and needle in body["error"]["message"], body


@pytest.mark.asyncio(loop_scope="module")
async def test_a_client_without_apps_cannot_call_them(clients):
    is_error, body, _ = await clients["plain"].call_json("acp_dataset_page", {"dataset_id": "leaky"})
    assert is_error and body["error"]["name"] == "ACP_INVALID_ARGUMENTS" and "Unknown tool" in body["error"]["message"]


@pytest.mark.asyncio(loop_scope="module")
async def test_no_secret_in_the_views_data(clients):
    apps = clients["apps"]
    _, page, _ = await apps.call_json("acp_dataset_page", {"dataset_id": "leaky", "sort": {"column": "name"}})
    _, card, _ = await apps.call_json("acp_dataset_summary", {"dataset_id": "leaky"})
    assert page["rows"][0][0] == "[redacted]" or page["rows"][1][0] == "[redacted]"
    assert "[redacted]" in json.dumps(card["columns"])
    html = (await apps.session.read_resource(VIEW)).contents[0].text
    everything = "\n".join(apps.received) + html
    assert TOKEN not in everything
    cursor = page["next_cursor"] or ""
    assert TOKEN not in cursor and "[redacted]" not in cursor  # a cursor carries a rowid, never a cell
