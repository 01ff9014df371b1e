"""The installed ACPs as the page lists them (13.1, 13.2, 13.4): identity read without starting anything, icons
only when 13.2 allows them, skills by 13.4's rules; a folder ACP wins over an installed connector of the same id."""

from __future__ import annotations

import json

from analytics_acp_ui.catalog import installed

SVG = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"/>'


def _acp(root, name, **manifest):
    folder = root / "acps" / name
    folder.mkdir(parents=True)
    doc = {"acp_version": "1.0", "id": name, "name": name.title(), "version": "1.2.3", "description": f"The {name} ACP.",
           "transport": {"type": "stdio", "command": "python", "args": ["server.py"]}, **manifest}
    (folder / "acp.json").write_text(json.dumps(doc))
    return folder


def test_icons_follow_13_2_and_skills_13_4(tmp_path):
    good = _acp(tmp_path, "good", icon="icon.svg")
    (good / "icon.svg").write_text(SVG)
    skills = good / "skills"
    (skills / "crm-report").mkdir(parents=True)
    (skills / "crm-report" / "SKILL.md").write_text("---\nname: crm-report\ndescription: How to report.\n---\nSteps.\n")
    (skills / "Bad_Name").mkdir()
    (skills / "Bad_Name" / "SKILL.md").write_text("---\nname: Bad_Name\ndescription: x\n---\n")
    (tmp_path / "outside.svg").write_text(SVG)
    _acp(tmp_path, "escapes", icon="../../outside.svg")
    big = _acp(tmp_path, "big", icon="icon.svg")
    (big / "icon.svg").write_text(SVG + " " * 300_000)
    _acp(tmp_path, "gif", icon="icon.gif")
    shadow = _acp(tmp_path, "databases")  # a project folder with an installed connector's id (13.1)
    found = installed(tmp_path)
    assert found["good"].icon == (good / "icon.svg").resolve() and found["good"].icon_type() == "image/svg+xml"
    assert found["good"].name == "Good" and found["good"].version == "1.2.3" and found["good"].origin == "folder"
    assert [s.name for s in found["good"].skills] == ["crm-report"] and found["good"].skill_problems
    assert found["escapes"].icon is None and found["big"].icon is None and found["gif"].icon is None
    assert found["databases"].origin == "folder" and found["databases"].launch.folder == shadow
    assert found["ga4"].origin == "installed" and found["ga4"].icon is not None and found["ga4"].skills
