"""acp.json (13.1.1, 13.2) and SKILL.md (13.4) rules of the core, shared by build, install, check and the bridge."""

from __future__ import annotations

import json

import pytest
from analytics_acp.manifest import (
    ManifestError,
    icon_problem,
    load_manifest,
    manifest_problems,
    parse_manifest,
    transport_problems,
)
from analytics_acp.skills import read_skills, skill_frontmatter, skill_problems

GOOD = {
    "acp_version": "1.0",
    "id": "bigquery",
    "name": "BigQuery",
    "version": "1.0.0",
    "publisher": "IKAUE",
    "description": "Read-only SQL over BigQuery.",
    "icon": "icon.svg",
    "transport": {"type": "stdio", "command": "node", "args": ["server.mjs"]},
    "http": {"args": ["server.mjs", "--http", "--port", "7413"]},
}


def test_the_spec_example_of_13_2_has_no_problems(tmp_path):
    (tmp_path / "icon.svg").write_text("<svg/>")
    assert manifest_problems(GOOD, tmp_path) == []


def test_bom_is_tolerated_13_1_1(tmp_path):
    (tmp_path / "acp.json").write_bytes(b"\xef\xbb\xbf" + json.dumps(GOOD).encode())
    assert load_manifest(tmp_path)["id"] == "bigquery"


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        (b"{not json", "not valid JSON"),
        (b"[1]", "JSON object"),
        (b"\xff\xfe", "not UTF-8"),
        (json.dumps({**GOOD, "id": "Big Query"}).encode(), "must match"),
        (json.dumps({**GOOD, "id": "9lives"}).encode(), "must match"),
        (json.dumps({**GOOD, "name": "  "}).encode(), "name"),
    ],
)
def test_install_step_1_rejects_bad_id_name_or_encoding(raw, needle):
    with pytest.raises(ManifestError, match=needle):
        parse_manifest(raw)


def test_missing_file_is_a_manifest_error(tmp_path):
    with pytest.raises(ManifestError, match="Cannot read"):
        load_manifest(tmp_path)


def test_fields_the_capability_owns_are_reported():
    problems = manifest_problems({**GOOD, "tools": [], "credentials": {}, "icon": None})
    assert any("credentials, tools" in p for p in problems)


def test_missing_required_fields_are_each_reported():
    problems = manifest_problems({"id": "x"})
    for key in ("acp_version", "name", "version", "description", "transport"):
        assert f"missing required field {key!r}" in problems


@pytest.mark.parametrize(
    ("transport", "ok"),
    [
        ({"type": "stdio", "command": "./server", "args": []}, True),
        ({"type": "http", "url": "https://acp.example/mcp", "headers": {"Authorization": "Bearer x"}}, True),
        ({"type": "stdio", "command": ""}, False),
        ({"type": "stdio", "command": "x", "args": "--http"}, False),
        ({"type": "http", "url": "ftp://x"}, False),
        ({"type": "websocket"}, False),
        ("stdio", False),
    ],
)
def test_transport_shapes(transport, ok):
    assert (transport_problems(transport) == []) is ok


@pytest.mark.parametrize(
    ("icon", "needle"),
    [
        ("/etc/icon.svg", "not a relative path"),
        ("https://x/icon.svg", "not a relative path"),
        ("C:icon.svg", "not a relative path"),
        ("../icon.svg", "'..'"),
        ("icon.gif", "svg, png or webp"),
        ("missing.png", "does not exist"),
        ("big.png", "larger than 256 KB"),
        ("link.svg", "outside the server folder"),
    ],
)
def test_icon_rules(tmp_path, icon, needle):
    folder = tmp_path / "srv"
    folder.mkdir()
    (folder / "big.png").write_bytes(b"\0" * (256 * 1024 + 1))
    (tmp_path / "outside.svg").write_text("<svg/>")
    (folder / "link.svg").symlink_to(tmp_path / "outside.svg")
    assert needle in icon_problem(folder, icon)


def _skill(root, folder, text):
    (root / folder).mkdir(parents=True)
    (root / folder / "SKILL.md").write_text(text, encoding="utf-8")


def test_skills_valid_invalid_and_ignored(tmp_path):
    root = tmp_path / "skills"
    _skill(root, "ga4-reporting", "---\nname: ga4-reporting\ndescription: When to pull GA4.\nicon: i.svg\n---\nBody\n")
    (root / "ga4-reporting" / "i.svg").write_text("<svg/>")
    _skill(root, "Bad_Name", "---\nname: Bad_Name\ndescription: x\n---\n")
    _skill(root, "mismatch", "---\nname: other\ndescription: x\n---\n")
    _skill(root, "nodesc", "---\nname: nodesc\n---\n")
    _skill(root, "nofront", "# just markdown\n")
    _skill(root, "badicon", "---\nname: badicon\ndescription: Still published.\nicon: ../x.svg\n---\n")
    (root / "empty").mkdir()
    skills, problems = read_skills(root)
    assert [s.name for s in skills] == ["badicon", "ga4-reporting"]
    assert skills[0].icon is None  # an unusable icon drops the icon, not the skill (13.4)
    assert skills[1].icon == (root / "ga4-reporting" / "i.svg").resolve()
    assert skills[1].description == "When to pull GA4."
    joined = "\n".join(problems)
    for name in ("Bad_Name", "mismatch", "nodesc", "nofront", "empty"):
        assert f"skills/{name}" in joined
    assert skill_problems(root) == problems


def test_frontmatter_needs_the_fence_at_the_top():
    assert skill_frontmatter("\ufeff---\nname: a\n---\n") == {"name": "a"}
    assert skill_frontmatter("text\n---\nname: a\n---\n") is None
    assert skill_frontmatter("---\nname: [unclosed\n---\n") is None
