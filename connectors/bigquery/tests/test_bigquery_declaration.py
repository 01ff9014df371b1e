"""What the `bigquery` server publishes before any call: start-up without the Google clients, the setup
schema's config part (5.5.1, 10.6) as the initialize capability carries it, and the blocks' descriptors (7.2)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from analytics_acp import InvalidArguments
from analytics_acp.calls import ConnectorRuntime
from analytics_acp.plugins import load_connector
from analytics_acp.runtime_state import RuntimeState
from analytics_acp.runtime_tools import capability
from analytics_acp.schemas import validate_config
from analytics_acp_bigquery import blocks
from bqworld import DATASET, PROJECT


def _runtime() -> RuntimeState:
    return ConnectorRuntime(load_connector("bigquery", extensions=False)).state


def test_start_up_does_not_import_google_clients():
    """Start-up (declaration, initialize capability, tools/list) loads no google-cloud-bigquery, google-auth or api_core."""
    code = ("import sys\nfrom analytics_acp.plugins import load_connector\nfrom analytics_acp.calls import ConnectorRuntime\n"
            "from analytics_acp.runtime_tools import capability, tool_list\n"
            "rt = ConnectorRuntime(load_connector('bigquery', extensions=False))\ncapability(rt.state)\ntool_list(rt.state)\n"
            "import analytics_acp.cli\n"
            "print(sorted(m for m in sys.modules if m.startswith(('google.cloud', 'google.auth', 'google.oauth2', "
            "'google.api_core', 'google.resumable_media', 'grpc', 'pyarrow'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    # The same probe sees the client once the module that uses it is imported (the check can fail).
    probe = ("import sys, analytics_acp_bigquery.execute, google.cloud.bigquery\n"
             "print('google.cloud.bigquery' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip() == "True"


def test_published_config_schema_follows_5_5_1_and_10_6():
    cap = capability(_runtime())
    schema = cap["config_schema"]
    props = schema["properties"]
    # 5.5.1's example: price_per_tib_usd is a number, default 6.25, minimum 0.
    price = props["price_per_tib_usd"]
    assert (price["type"], price["title"], price["default"], price["minimum"]) == ("number", "Price per TiB (USD)", 6.25, 0)
    # 10.6: BigQuery publishes only onlyRead and readAndOnlyAdd (no `full`), onlyRead by default.
    mode = props["access_mode"]
    assert mode["type"] == "string" and mode["enum"] == ["onlyRead", "readAndOnlyAdd"] and mode["default"] == "onlyRead"
    assert len(mode["enumNames"]) == len(mode["enum"])
    # 10.6: table_rules is a JSON text field.
    assert props["table_rules"]["contentMediaType"] == "application/json" and props["table_rules"]["type"] == "string"
    assert list(props) == ["location", "billing_project", "price_per_tib_usd", "access_mode", "table_rules", "api_endpoint", "timeout_s"]
    assert props["timeout_s"]["minimum"] == 5 and props["timeout_s"]["maximum"] == 600  # issue 26.1
    assert schema["required"] == []

    # What the published schema means for a configuration (5.5.3): defaults filled, enum and minimum enforced.
    filled = validate_config(schema, {})
    assert filled["price_per_tib_usd"] == 6.25 and filled["access_mode"] == "onlyRead"
    assert validate_config(schema, {"price_per_tib_usd": 0, "access_mode": "readAndOnlyAdd"})["price_per_tib_usd"] == 0
    with pytest.raises(InvalidArguments, match="access_mode must be one of onlyRead, readAndOnlyAdd"):
        validate_config(schema, {"access_mode": "full"})
    with pytest.raises(InvalidArguments, match="price_per_tib_usd must be at least 0"):
        validate_config(schema, {"price_per_tib_usd": -0.5})


def test_block_descriptors_are_7_2s_and_the_datasets_block_answers_them(world, ctx_for):
    """7.2's autocontext_data example is BigQuery's: the datasets descriptor word for word."""
    engine = _runtime().engine
    assert engine.descriptors("project") == [
        {"id": "datasets", "description": "Project datasets with their location.", "applies_to": ["project"]}]
    by_id = {d["id"]: d for d in engine.descriptors(None)}
    assert by_id["tables"]["description"] == ("Dataset tables and views. Date-sharded tables (name_YYYYMMDD) are grouped "
                                              "as name_* with the shard count and the latest shard.")
    assert by_id["table_schemas"]["description"] == (
        "Schema (columns, type, mode and description) of the table or of the first 15 tables in the dataset. "
        "For sharded tables, the latest shard is used.")
    assert "datasets" not in {d["id"] for d in engine.descriptors("dataset")}
    assert by_id["tables"]["applies_to"] == ["dataset"] and by_id["table_schemas"]["applies_to"] == ["dataset", "table"]  # 7.2
    # What the block says matches its description: every dataset of the project with its location.
    data = blocks.block_datasets(PROJECT, ctx_for("autocontext", resource_id=PROJECT))
    assert data == [{"dataset": f"{PROJECT}.{DATASET}", "location": "EU"}, {"dataset": f"{PROJECT}.sandbox", "location": "EU"}]


def test_connector_ready_imports_the_client_the_first_call_needs():
    """Issue 26.6: the post-initialize warm-up hook imports google-cloud-bigquery (start-up does not)."""
    code = ("import sys\nfrom analytics_acp.plugins import load_connector\nloaded = load_connector('bigquery', extensions=False)\n"
            "before = 'google.cloud.bigquery' in sys.modules\nloaded.hook.connector_ready()\n"
            "print(before, 'google.cloud.bigquery' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True"]
