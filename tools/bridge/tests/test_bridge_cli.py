"""The command (16.2): defaults for --project/--root/--sources and the mcpServers snippet."""

import json
import subprocess

from analytics_acp_bridge.cli import main, parser, resolve_paths


def test_bridge_cli_defaults(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ACP_BRIDGE_PROJECT", raising=False)
    monkeypatch.delenv("ACP_BRIDGE_ROOT", raising=False)
    paths = resolve_paths(parser().parse_args([]))
    assert (paths.project, paths.root, paths.sources) == (tmp_path, tmp_path, tmp_path / "sources.json")
    monkeypatch.setenv("ACP_BRIDGE_PROJECT", str(tmp_path / "p"))
    monkeypatch.setenv("ACP_BRIDGE_ROOT", str(tmp_path / "r"))
    paths = resolve_paths(parser().parse_args([]))
    assert (paths.project, paths.root, paths.sources) == (tmp_path / "p", tmp_path / "r", tmp_path / "r" / "sources.json")
    paths = resolve_paths(parser().parse_args(["--project", "x", "--sources", "s/mine.json"]))
    assert paths.project == tmp_path / "x" and paths.sources == tmp_path / "s" / "mine.json"


def test_bridge_cli_print_config(tmp_path, capsys):
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "sources.json").write_text('{"sources": []}', encoding="utf-8")
    assert main(["--print-config", "--project", str(tmp_path), "--root", str(tmp_path / "root")]) == 0
    config = json.loads(capsys.readouterr().out)
    entry = config["mcpServers"]["acp-bridge"]
    assert entry["args"][-6:] == ["--project", str(tmp_path), "--sources", str(tmp_path / "root" / "sources.json"),
                                  "--root", str(tmp_path / "root")]
    # the printed command really starts this bridge
    out = subprocess.run([entry["command"], *entry["args"][:-6], "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "--print-config" in out.stdout, out.stderr
