"""analytics-acp install/uninstall (13.1.1): the server must start before anything is replaced; every refusal
leaves the previous version intact and no staging folder behind."""

import json
import shutil

import pytest
from analytics_acp_build.cli import install_main, uninstall_main
from analytics_acp_build.install import InstallError, install_zip, uninstall
from build_support import add_zip64_entry, manifest, mark_encrypted, server_folder, symlink_entry, zip_tree


def good_zip(tmp_path, version="1.0.0", **kwargs):
    src = server_folder(tmp_path / f"src-{version}", version=version, **kwargs)
    return zip_tree(src, tmp_path / f"tinyconn-{version}.zip")


@pytest.fixture(scope="module")
def installed_once(tmp_path_factory):
    """A servers dir with tinyconn 1.0.0 installed by a real install_zip (which starts the server), made once."""
    base = tmp_path_factory.mktemp("installed")
    servers = base / "servers"
    done = install_zip(good_zip(base), servers)
    assert done.id == "tinyconn" and not done.replaced and "hello" in done.tools
    return servers


@pytest.fixture
def servers(installed_once, tmp_path):
    """A servers dir with tinyconn 1.0.0 installed: a copy of the one install (an install verifies by
    starting the server, about a CPU-second each; the tests only need the installed result to replace)."""
    servers = tmp_path / "servers"
    shutil.copytree(installed_once, servers, symlinks=True)
    return servers


def assert_old_version_intact(servers):
    folder = servers / "tinyconn"
    assert json.loads((folder / "acp.json").read_text())["version"] == "1.0.0"
    assert (folder / "VERSION").read_text() == "1.0.0"
    assert (folder / "server.py").is_file() and (folder / "lib" / "analytics_acp_tinyconn" / "plugin.py").is_file()
    assert sorted(p.name for p in servers.iterdir()) == ["tinyconn"]  # no .tinyconn.install-* left


def test_install_then_upgrade_replaces_the_folder(servers, tmp_path):
    assert (servers / "tinyconn" / "acp.json").is_file()
    done = install_zip(good_zip(tmp_path, "1.1.0"), servers)
    assert done.replaced and done.version == "1.1.0"
    assert (servers / "tinyconn" / "VERSION").read_text() == "1.1.0"
    assert sorted(p.name for p in servers.iterdir()) == ["tinyconn"]


def bad_traversal(tmp_path):
    return zip_tree(server_folder(tmp_path / "b", version="2.0.0"), tmp_path / "bad.zip", extra=[("tinyconn/../../escaped.txt", b"x")])


def bad_absolute(tmp_path):
    return zip_tree(server_folder(tmp_path / "b", version="2.0.0"), tmp_path / "bad.zip", extra=[("/tmp/escaped.txt", b"x")])


def bad_symlink(tmp_path):
    return zip_tree(server_folder(tmp_path / "b", version="2.0.0"), tmp_path / "bad.zip",
                    extra=[symlink_entry("tinyconn/lib/evil", "/etc")])


def bad_zip64(tmp_path):
    path = zip_tree(server_folder(tmp_path / "b", version="2.0.0"), tmp_path / "bad.zip")
    add_zip64_entry(path, "tinyconn/data.bin")
    return path


def bad_encrypted(tmp_path):
    path = zip_tree(server_folder(tmp_path / "b", version="2.0.0"), tmp_path / "bad.zip")
    mark_encrypted(path, "tinyconn/server.py")
    return path


def bad_no_manifest(tmp_path):
    src = server_folder(tmp_path / "b", version="2.0.0")
    (src / "acp.json").unlink()
    return zip_tree(src, tmp_path / "bad.zip")


def bad_id(tmp_path):
    return zip_tree(server_folder(tmp_path / "b", acp=manifest(id="TinyConn")), tmp_path / "bad.zip")


def bad_dead_server(tmp_path):
    return zip_tree(server_folder(tmp_path / "b", version="2.0.0", dead=True), tmp_path / "bad.zip")


def bad_silent_exit(tmp_path):
    # A command that exits at once without speaking MCP.
    acp = manifest(version="2.0.0", transport={"type": "stdio", "command": "python", "args": ["-c", "pass"]})
    return zip_tree(server_folder(tmp_path / "b", acp=acp), tmp_path / "bad.zip")


def bad_not_acp(tmp_path):
    # A working MCP server that does not announce capabilities.experimental.acp (4.2).
    acp = manifest(version="2.0.0", transport={"type": "stdio", "command": "python", "args": ["server.py", "--no-acp"]})
    return zip_tree(server_folder(tmp_path / "b", acp=acp), tmp_path / "bad.zip")


def bad_same_depth(tmp_path):
    return zip_tree(server_folder(tmp_path / "b", version="2.0.0"), tmp_path / "bad.zip",
                    extra=[("other/acp.json", json.dumps(manifest("tinyconn", "3.0.0")))])


CORPUS = {
    "traversal": (bad_traversal, "leaves the destination"),
    "absolute": (bad_absolute, "absolute path"),
    "symlink": (bad_symlink, "symbolic link"),
    "zip64": (bad_zip64, "zip64"),
    "encrypted": (bad_encrypted, "encrypted"),
    "no-acp-json": (bad_no_manifest, "no acp.json"),
    "bad-id": (bad_id, "id 'TinyConn'"),
    "dead-server": (bad_dead_server, "cannot start|failed to start"),
    "silent-exit": (bad_silent_exit, "failed to start"),
    "not-acp": (bad_not_acp, "does not announce"),
    "ambiguous": (bad_same_depth, "same depth"),
}


@pytest.mark.parametrize("case", sorted(CORPUS))
def test_bad_zip_is_refused_and_the_old_version_survives(servers, tmp_path, case):
    make, message = CORPUS[case]
    with pytest.raises(InstallError, match=message):
        install_zip(make(tmp_path), servers, timeout=30)
    assert_old_version_intact(servers)
    assert not (tmp_path / "escaped.txt").exists()


def test_two_acp_json_at_different_depths_installs_the_shallowest(servers, tmp_path):
    src = server_folder(tmp_path / "b", version="2.0.0")
    path = zip_tree(src, tmp_path / "two.zip", extra=[
        ("tinyconn/vendor/acp.json", json.dumps(manifest("vendored", "9.9.9"))),
        ("outside/notes.txt", b"ignored"),
    ])
    done = install_zip(path, servers)
    assert done.id == "tinyconn" and done.version == "2.0.0" and done.replaced
    assert (servers / "tinyconn" / "vendor" / "acp.json").is_file()
    assert not (servers / "outside").exists() and not (servers / "tinyconn" / "outside").exists()


def test_cli_install_and_uninstall(servers, tmp_path, capsys):
    assert install_main([str(good_zip(tmp_path, "1.2.0")), "--dir", str(servers)]) == 0
    assert "Replaced tinyconn 1.2.0" in capsys.readouterr().out
    assert install_main([str(bad_dead_server(tmp_path)), "--dir", str(servers), "--timeout", "30"]) == 1
    assert "Nothing was changed" in capsys.readouterr().err
    assert (servers / "tinyconn" / "VERSION").read_text() == "1.2.0"
    assert uninstall_main(["tinyconn", "--dir", str(servers)]) == 0
    assert not (servers / "tinyconn").exists() and list(servers.iterdir()) == []
    assert uninstall_main(["tinyconn", "--dir", str(servers)]) == 1


def test_uninstall_refuses_bundled_servers_and_bad_ids(servers):
    (servers / "tinyconn" / ".bundle-hash").write_text("abc")
    with pytest.raises(InstallError, match="bundled"):
        uninstall("tinyconn", servers)
    with pytest.raises(InstallError, match="not a server id"):
        uninstall("../tinyconn", servers)
    assert (servers / "tinyconn" / "acp.json").is_file()


def test_install_help_exits_cleanly():
    with pytest.raises(SystemExit) as exc:
        install_main(["--help"])
    assert exc.value.code == 0

