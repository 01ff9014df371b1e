"""Zip rules of 13.1.1 as a host reads a server zip (no server is started here)."""

import json
import zipfile

import pytest
from analytics_acp_build.manifest import ManifestError
from analytics_acp_build.ziprules import ZipRefused, extract_plan, read_plan, write_zip
from build_support import add_zip64_entry, manifest, mark_encrypted, server_folder, symlink_entry, zip_tree


@pytest.fixture
def folder(tmp_path):
    return server_folder(tmp_path / "src")


def test_good_zip_plan_strips_the_server_folder(folder, tmp_path):
    plan = read_plan(zip_tree(folder, tmp_path / "ok.zip"))
    assert plan.prefix == "tinyconn/"
    assert plan.manifest["id"] == "tinyconn"
    rels = {rel for _, rel in plan.members}
    assert {"acp.json", "server.py", "icon.svg", "skills/tiny-counting/SKILL.md"} <= rels
    assert not any(rel.startswith("tinyconn/") for rel in rels)


def test_acp_json_at_the_zip_root(folder, tmp_path):
    plan = read_plan(zip_tree(folder, tmp_path / "root.zip", root=None))
    assert plan.prefix == "" and "acp.json" in {rel for _, rel in plan.members}


def test_bom_is_tolerated(tmp_path):
    src = server_folder(tmp_path / "src", bom=True)
    assert (src / "acp.json").read_bytes().startswith(b"\xef\xbb\xbf")
    assert read_plan(zip_tree(src, tmp_path / "bom.zip")).manifest["id"] == "tinyconn"


@pytest.mark.parametrize("name", ["../evil.txt", "tinyconn/../../evil.txt", "tinyconn/..\\..\\evil.txt"])
def test_traversal_is_refused(folder, tmp_path, name):
    with pytest.raises(ZipRefused, match="leaves the destination"):
        read_plan(zip_tree(folder, tmp_path / "t.zip", extra=[(name, b"x")]))


@pytest.mark.parametrize("name", ["/etc/evil", "C:/evil.txt", "\\\\server\\share\\evil"])
def test_absolute_paths_are_refused(folder, tmp_path, name):
    with pytest.raises(ZipRefused, match="absolute path"):
        read_plan(zip_tree(folder, tmp_path / "a.zip", extra=[(name, b"x")]))


def test_symlink_entries_are_refused(folder, tmp_path):
    with pytest.raises(ZipRefused, match="symbolic link"):
        read_plan(zip_tree(folder, tmp_path / "s.zip", extra=[symlink_entry("tinyconn/passwd", "/etc/passwd")]))


def test_zip64_entries_are_refused(folder, tmp_path):
    path = zip_tree(folder, tmp_path / "z64.zip")
    add_zip64_entry(path, "tinyconn/big.bin")
    assert zipfile.ZipFile(path).read("tinyconn/big.bin") == b"x"  # Python itself reads it fine
    with pytest.raises(ZipRefused, match="zip64"):
        read_plan(path)


def test_encrypted_entries_are_refused(folder, tmp_path):
    path = zip_tree(folder, tmp_path / "enc.zip")
    mark_encrypted(path, "tinyconn/server.py")
    assert zipfile.ZipFile(path).getinfo("tinyconn/server.py").flag_bits & 1
    with pytest.raises(ZipRefused, match="encrypted"):
        read_plan(path)


def test_other_compression_methods_are_refused(folder, tmp_path):
    path = tmp_path / "bz.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_BZIP2) as zf:
        zf.writestr("tinyconn/acp.json", json.dumps(manifest()))
    with pytest.raises(ZipRefused, match="stored or deflate"):
        read_plan(path)


def test_no_acp_json_is_refused(tmp_path):
    path = tmp_path / "none.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("tinyconn/server.py", "print()")
    with pytest.raises(ZipRefused, match="no acp.json"):
        read_plan(path)


def test_shallowest_acp_json_wins_and_the_rest_is_ignored(folder, tmp_path):
    other = json.dumps(manifest("deeper"))
    path = zip_tree(folder, tmp_path / "two.zip", extra=[
        ("tinyconn/vendor/deeper/acp.json", other),  # deeper: part of the folder, not a second server
        ("README-outside.txt", b"ignored"),
        ("docs/acp-notes.txt", b"ignored"),
    ])
    plan = read_plan(path)
    assert plan.manifest["id"] == "tinyconn"
    assert set(plan.ignored) == {"README-outside.txt", "docs/acp-notes.txt"}
    rels = {rel for _, rel in plan.members}
    assert "vendor/deeper/acp.json" in rels and "README-outside.txt" not in rels


def test_two_acp_json_at_the_same_depth_are_ambiguous(folder, tmp_path):
    path = zip_tree(folder, tmp_path / "same.zip", extra=[("other/acp.json", json.dumps(manifest("other")))])
    with pytest.raises(ZipRefused, match="same depth"):
        read_plan(path)


@pytest.mark.parametrize("bad", [{"id": "Bad-Id"}, {"id": "9lives"}, {"id": "a/b"}, {"id": ""}, {"name": ""}, {"name": None}])
def test_bad_id_or_name_is_refused(tmp_path, bad):
    src = server_folder(tmp_path / "src", acp=manifest(**bad))
    with pytest.raises(ManifestError, match="id|name"):
        read_plan(zip_tree(src, tmp_path / "bad.zip"))


def test_acp_json_must_be_a_json_object(tmp_path):
    path = tmp_path / "list.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("x/acp.json", "[1, 2]")
    with pytest.raises(ManifestError, match="JSON object"):
        read_plan(path)


def test_extract_keeps_the_executable_bit_and_nothing_outside(folder, tmp_path):
    (folder / "server.py").chmod(0o755)
    path = zip_tree(folder, tmp_path / "x.zip", extra=[("outside.txt", b"no")])
    plan = read_plan(path)
    dest = tmp_path / "dest"
    extract_plan(path, plan, dest)
    assert (dest / "server.py").stat().st_mode & 0o100
    assert (dest / "acp.json").is_file() and not (dest / "outside.txt").exists()
    assert not (tmp_path / "outside.txt").exists()


def test_write_zip_is_plain_deflate_with_the_folder_at_its_root(folder, tmp_path):
    (folder / "server.py").chmod(0o755)
    (folder / "link-to-icon.svg").symlink_to(folder / "icon.svg")
    path = write_zip(folder, tmp_path / "out.zip", root_name="tinyconn")
    with zipfile.ZipFile(path) as zf:
        infos = [i for i in zf.infolist() if not i.is_dir()]
        assert all(i.filename.startswith("tinyconn/") for i in zf.infolist())
        assert {i.compress_type for i in infos} == {zipfile.ZIP_DEFLATED}
        assert all(i.extract_version < 45 for i in zf.infolist())
        link = zf.getinfo("tinyconn/link-to-icon.svg")
        assert not (link.external_attr >> 16) & 0o020000 or (link.external_attr >> 16) & 0o170000 == 0o100000
        assert zf.read("tinyconn/link-to-icon.svg") == (folder / "icon.svg").read_bytes()  # symlink resolved
        assert (zf.getinfo("tinyconn/server.py").external_attr >> 16) & 0o111
    # What we write passes our own host rules.
    plan = read_plan(path)
    assert plan.prefix == "tinyconn/" and not plan.ignored
    assert not list(tmp_path.glob(".out.zip.*"))  # the temp file was renamed, not left behind
