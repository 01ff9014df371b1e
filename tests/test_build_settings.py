"""Fast parts of the build (no freezing): connector discovery, build settings, PyInstaller command line,
acp.json generation and icon rules, skills validation, and the CLI wiring through ``analytics-acp``."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from analytics_acp.skills import skill_problems
from analytics_acp_build.freeze import (
    BuildFailed,
    ConnectorSource,
    list_connectors,
    prune_discovery,
    pyinstaller_args,
    read_connector,
)
from analytics_acp_build.manifest import generate_manifest, icon_problem, manifest_problems
from analytics_acp_build.settings import load_settings
from build_support import TINYCONN


def test_read_connector_from_a_folder_and_from_an_id():
    tiny = read_connector(str(TINYCONN))
    assert (tiny.id, tiny.distribution, tiny.plugin_module) == ("tinyconn", "analytics-acp-tinyconn", "analytics_acp_tinyconn.plugin")
    assert "databases" in list_connectors() and "prediction" in list_connectors()
    db = read_connector("databases")
    assert db.plugin_module == "analytics_acp_databases.plugin" and db.folder.name == "databases"


def test_unknown_connector_lists_the_known_ones():
    with pytest.raises(BuildFailed, match="No connector 'nope'.*databases"):
        read_connector("nope")


def test_connector_build_toml_extends_the_builtin_profile(tmp_path):
    (tmp_path / "build.toml").write_text('[pyinstaller]\nhidden_imports = ["extra_mod"]\nexcludes = ["bigthing"]\n'
                                         '[googleapiclient]\ndiscovery = ["searchconsole.v1"]\n[venv]\nextra_packages = ["six"]\n')
    s = load_settings("databases", tmp_path)
    assert "sqlalchemy.dialects.postgresql.psycopg" in s.hidden_imports and "extra_mod" in s.hidden_imports
    assert {"tkinter", "matplotlib", "bigthing"} <= set(s.excludes)
    assert s.discovery_keep == ["searchconsole.v1"] and s.extra_packages == ["six"]


def test_bad_build_toml_is_a_clear_error(tmp_path):
    (tmp_path / "build.toml").write_text('[pyinstaller]\nexcludes = "tkinter"\n')
    with pytest.raises(ValueError, match="excludes must be a list"):
        load_settings("x", tmp_path)


def test_pyinstaller_command_line(tmp_path):
    source = ConnectorSource("databases", tmp_path, "analytics-acp-databases", "analytics_acp_databases.plugin")
    settings = load_settings("databases", tmp_path)
    decl = {"distributions": ["SQLAlchemy", "pyinstaller", "duckdb_engine"], "entry_point_modules": ["duckdb_engine"],
            "mypyc_modules": ["sqlglot.parser__mypyc"]}
    args = pyinstaller_args(source, settings, decl, tmp_path / "entry.py", tmp_path / "stage")
    pairs = list(zip(args, args[1:], strict=False))
    assert ("--hidden-import", "sqlglot.parser__mypyc") in pairs  # imported from C by the compiled sqlglot.parser
    assert args[:4] == ["-m", "PyInstaller", "--onedir", "--noconfirm"]
    assert ("--name", "databases-server") in pairs and ("--hidden-import", "analytics_acp_databases.plugin") in pairs
    assert ("--exclude-module", "tkinter") in pairs and ("--exclude-module", "analytics_acp_prediction") in pairs
    assert ("--hidden-import", "duckdb_engine") in pairs  # entry point of sqlalchemy.dialects
    # The connector's own package is collected whole; the core is followed by its imports only (its lazy
    # imports are static), so the kit and host-side modules it never imports stay out.
    assert ("--collect-submodules", "analytics_acp_databases") in pairs
    assert ("--collect-submodules", "analytics_acp") not in pairs
    assert ("--copy-metadata", "SQLAlchemy") in pairs and ("--copy-metadata", "pyinstaller") not in pairs
    assert args[-1] == str(tmp_path / "entry.py")


def test_prune_discovery_keeps_only_the_named_documents(tmp_path):
    docs = tmp_path / "_internal" / "googleapiclient" / "discovery_cache" / "documents"
    docs.mkdir(parents=True)
    for name in ("searchconsole.v1", "drive.v3", "youtube.v3"):
        (docs / f"{name}.json").write_text("{}" * 100)
    assert prune_discovery(tmp_path, None) == 0 and len(list(docs.iterdir())) == 3
    assert prune_discovery(tmp_path, ["searchconsole.v1"]) == 400
    assert [p.name for p in docs.iterdir()] == ["searchconsole.v1.json"]


class Info:
    id, name, version, publisher, description = "x", "X source", "1.2.3", "me", "Reads X."


def test_generated_manifest_is_identity_and_transport_only(tmp_path):
    doc = generate_manifest(Info(), "x-server", icon=None)
    assert doc == {"acp_version": "1.0", "id": "x", "name": "X source", "version": "1.2.3", "publisher": "me",
                   "description": "Reads X.", "transport": {"type": "stdio", "command": "./x-server", "args": []},
                   "http": {"args": ["--http", "--port", "7413"]}}
    assert manifest_problems(doc, tmp_path) == []
    doc["defaults"] = {"row_limit": 5}
    assert any("defaults" in p for p in manifest_problems(doc, tmp_path))


@pytest.mark.parametrize("icon, why", [
    ("/etc/icon.svg", "not a relative path"), ("https://x/icon.svg", "not a relative path"),
    ("../icon.svg", "'..'"), ("icon.gif", "not svg, png or webp"), ("missing.svg", "does not exist"),
    ("big.png", "larger than 256 KB"),
])
def test_icon_rules(tmp_path, icon, why):
    (tmp_path / "big.png").write_bytes(b"x" * (256 * 1024 + 1))
    assert why in icon_problem(tmp_path, icon)


def test_icon_ok(tmp_path):
    (tmp_path / "icon.svg").write_text("<svg/>")
    assert icon_problem(tmp_path, "icon.svg") is None


def test_skill_rules(tmp_path):
    good = tmp_path / "good-skill"
    good.mkdir()
    (good / "SKILL.md").write_text("---\nname: good-skill\ndescription: When to do it.\n---\nBody.\n")
    assert skill_problems(tmp_path) == []
    bad = tmp_path / "Bad_Skill"
    bad.mkdir()
    (bad / "SKILL.md").write_text("---\nname: other\n---\n")
    (tmp_path / "empty").mkdir()
    problems = " | ".join(skill_problems(tmp_path))
    assert "Bad_Skill: the folder name" in problems and "differs from the folder name" in problems
    assert "has no description" in problems and "skills/empty has no SKILL.md" in problems


@pytest.mark.parametrize("command", ["build", "install", "uninstall", "check"])
def test_core_cli_dispatches_to_this_package(command):
    exe = Path(sys.executable).with_name("analytics-acp")
    proc = subprocess.run([str(exe), command, "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert f"analytics-acp {command}" in proc.stdout


def test_shared_workspace_packages_are_not_connectors_but_are_installed_with_those_that_need_them(tmp_path):
    # connectors/google has no entry point: `build --all` and the exclude list skip it.
    assert "google" not in list_connectors()
    with pytest.raises(BuildFailed, match="exactly one"):
        read_connector("google")
    from analytics_acp_build.freeze import repo_root, workspace_dependencies

    (tmp_path / "pyproject.toml").write_text('[project]\nname = "analytics-acp-x"\nversion = "0.1.0"\n'
                                             'dependencies = ["analytics-acp", "analytics_acp_google>=0.1", "requests"]\n')
    assert workspace_dependencies(tmp_path) == [(repo_root() / "connectors" / "google").resolve()]
    assert workspace_dependencies(repo_root() / "connectors" / "databases") == []


def test_lazy_references_become_hidden_imports(tmp_path):
    # CI of 2026-12-06: every frozen Google server stopped at start with "no module named
    # 'analytics_acp_google.offline_check'": a lazy reference into another workspace package is
    # invisible to PyInstaller. The declaration (read in the build venv) names each lazy module.
    from analytics_acp_build.freeze import _DECLARATION_SCRIPT

    out = subprocess.run([sys.executable, "-c", _DECLARATION_SCRIPT, "analytics_acp_ga4.plugin", ""],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    decl = json.loads(out.strip().splitlines()[-1])
    assert "analytics_acp_google.offline_check" in decl["lazy_modules"]
    assert "analytics_acp_ga4.report" in decl["lazy_modules"]  # a tool's run
    source = ConnectorSource("ga4", tmp_path, "analytics-acp-ga4", "analytics_acp_ga4.plugin")
    args = pyinstaller_args(source, load_settings("ga4", tmp_path), decl, tmp_path / "entry.py", tmp_path / "stage")
    assert ("--hidden-import", "analytics_acp_google.offline_check") in list(zip(args, args[1:], strict=False))


def test_the_declaration_names_the_code_of_modules_compiled_by_mypyc():
    """sqlglotc's compiled ``sqlglot.parser`` imports ``sqlglot.parser__mypyc`` from C: the declaration read in the
    venv names every such module, so the frozen server has them (without: ModuleNotFoundError at the first query)."""
    import importlib.util

    from analytics_acp_build.freeze import _DECLARATION_SCRIPT

    if importlib.util.find_spec("sqlglot.parser__mypyc") is None:
        pytest.skip("sqlglotc is not installed on this platform (pyproject marker)")
    out = subprocess.run([sys.executable, "-c", _DECLARATION_SCRIPT, "analytics_acp_databases.plugin", ""],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    names = json.loads(out.strip().splitlines()[-1])["mypyc_modules"]
    assert {"sqlglot.parser__mypyc", "sqlglot.tokenizer_core__mypyc", "sqlglot.parsers.sqlite__mypyc"} <= set(names)
    assert all(n.endswith("__mypyc") and importlib.util.find_spec(n) is not None for n in names)
