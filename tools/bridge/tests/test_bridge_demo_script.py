"""`make demo` runs tools/bridge/demo/run_demo.py: the script itself works and says what it shows."""

import json
import os
import subprocess
import sys
from pathlib import Path

DEMO = Path(__file__).resolve().parents[1] / "demo" / "run_demo.py"


def test_bridge_demo_script_runs_the_16_7_session(tmp_path):
    env = {**os.environ, "ACP_BRIDGE_DEMO_DIR": str(tmp_path / "demo")}
    out = subprocess.run([sys.executable, str(DEMO)], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    text = out.stdout
    assert "You saw 25 of 90 rows." in text and "You saw 14 of 14 rows." in text
    assert "(equal)" in text  # acp_query totals == the same SQL on the database
    snippet = json.loads(text[text.index('{\n  "mcpServers"'):text.index("\n}\n") + 2])
    assert snippet["mcpServers"]["acp-bridge"]["args"][-1] == str(tmp_path / "demo")
    data = tmp_path / "demo" / "acp-data"
    kinds = sorted(p.name.split("_2")[0] for p in data.glob("*.csv"))
    assert kinds == ["prevision_forecast", "query", "ventas_execute_sql"]
