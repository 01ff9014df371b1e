"""The kit's reference connector `example` is for tests only (issue 15.8): `serve example` works, but
`analytics-acp connectors` does not list it and the bridge does not offer it."""

import subprocess
import sys
from pathlib import Path

from analytics_acp.plugins import available_connectors, load_connector


def test_example_is_served_but_not_offered(tmp_path):
    assert "example" not in available_connectors() and "databases" in available_connectors()
    assert available_connectors(include_tests=True)["example"] == "acpexample.plugin"
    assert load_connector("example").info.id == "example"
    listing = subprocess.run([sys.executable, "-m", "analytics_acp", "connectors"], capture_output=True, text=True, timeout=120)
    ids = [line.split()[0] for line in listing.stdout.splitlines() if line.strip()]
    assert "databases" in ids and "example" not in ids


def test_bridge_does_not_offer_test_connectors(tmp_path):
    from analytics_acp_bridge.fleet.discovery import discover

    launches = discover(Path(tmp_path))
    assert "databases" in launches and "example" not in launches
