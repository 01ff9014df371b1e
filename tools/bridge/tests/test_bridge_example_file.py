"""sources.example.json (16.2) stays a valid sources.json for the installed ACPs."""

from pathlib import Path

from analytics_acp_bridge.sources.entries import load_sources

EXAMPLE = Path(__file__).resolve().parents[1] / "sources.example.json"


def test_bridge_example_sources_file_parses(tmp_path, monkeypatch):
    monkeypatch.setenv("WAREHOUSE_PASSWORD", "example-password")
    monkeypatch.setenv("GSC_SERVICE_ACCOUNT_JSON", '{"type": "service_account", "client_email": "x@p.iam.gserviceaccount.com"}')
    # The ga4 source reads gcloud's application-default credentials file as its whole credentials object.
    monkeypatch.setenv("HOME", str(tmp_path))
    adc = tmp_path / ".config" / "gcloud" / "application_default_credentials.json"
    adc.parent.mkdir(parents=True)
    adc.write_text('{"type": "authorized_user", "client_id": "c.apps.googleusercontent.com", "client_secret": "adc-secret", '
                   '"refresh_token": "1//adc-refresh", "account": "", "quota_project_id": "p", "universe_domain": "googleapis.com"}')
    result = load_sources(EXAMPLE, tmp_path)
    assert result.error is None
    assert [(s.id, s.acp, s.error) for s in result.sources] == [
        ("ventas", "databases", None), ("warehouse", "databases", None), ("prevision", "prediction", None),
        ("search", "gsc", None), ("analytics", "ga4", None), ("ga4export", "bigquery", None)]
    assert result.sources[1].limits == {"row_limit": 50} and "example-password" in result.secrets
    assert result.sources[4].credentials["type"] == "authorized_user" and "1//adc-refresh" in result.secrets
    assert result.sources[5].limits["cost_limit_usd"] == 1 and result.sources[5].config["billing_project"] == "my-project"
