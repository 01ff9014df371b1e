"""sources.example.json (16.2) stays a valid sources.json for the installed ACPs."""

from pathlib import Path

from analytics_acp_bridge.sources import load_sources

EXAMPLE = Path(__file__).resolve().parents[1] / "sources.example.json"


def test_bridge_example_sources_file_parses(tmp_path, monkeypatch):
    monkeypatch.setenv("WAREHOUSE_PASSWORD", "example-password")
    monkeypatch.setenv("GSC_SERVICE_ACCOUNT_JSON", '{"type": "service_account", "client_email": "x@p.iam.gserviceaccount.com"}')
    result = load_sources(EXAMPLE, tmp_path)
    assert result.error is None
    assert [(s.id, s.acp, s.error) for s in result.sources] == [
        ("ventas", "databases", None), ("warehouse", "databases", None), ("prevision", "prediction", None),
        ("search", "gsc", None)]
    assert result.sources[1].limits == {"row_limit": 50} and "example-password" in result.secrets
