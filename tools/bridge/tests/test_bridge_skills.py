"""The bridge's own skills (issue 24.2; SKILL.md rules of 13.4), published to the MCP client as resources."""

from __future__ import annotations

import re

import pytest
from analytics_acp.skills import read_skills
from analytics_acp_bridge.query import urlkeys
from analytics_acp_bridge.serving import skillpub
from mcp.shared.exceptions import MCPError


def test_the_skills_folder_follows_13_4():
    skills, problems = read_skills(skillpub.SKILLS_DIR)
    assert problems == []
    assert [s.name for s in skills] == ["search-console-ga4-by-page"]
    assert [r["uri"] for r in skillpub.resources()] == ["skill://search-console-ga4-by-page/SKILL.md"]


def test_the_page_skill_names_the_extractions_the_functions_and_the_time_zones():
    text = skillpub.read("skill://search-console-ga4-by-page/SKILL.md")
    assert text is not None
    for needed in ("search_analytics", '"dimensions": ["page"]', "run_report", "landingPagePlusQueryString", "keyEvents",
                   "Pacific Time", "property's time zone", "url_key(", "save_as", "pages_joined", "page_location"):
        assert needed in text, needed
    used = set(re.findall(r"\b(url_[a-z]+)\(", text))
    assert used <= set(urlkeys.DESCRIPTIONS) and {"url_key", "url_host", "url_param"} <= used
    assert skillpub.read("skill://nothing/SKILL.md") is None


def test_a_broken_skill_is_left_out_and_logged(tmp_path, monkeypatch, caplog):
    (tmp_path / "Bad_Name").mkdir()
    (tmp_path / "Bad_Name" / "SKILL.md").write_text("---\nname: Bad_Name\ndescription: x\n---\n", encoding="utf-8")
    (tmp_path / "good-one").mkdir()
    (tmp_path / "good-one" / "SKILL.md").write_text("---\nname: good-one\ndescription: Does a thing.\n---\nBody\n", encoding="utf-8")
    monkeypatch.setattr(skillpub, "SKILLS_DIR", tmp_path)
    skillpub.skills.cache_clear()
    try:
        with caplog.at_level("WARNING", logger="analytics_acp_bridge.skills"):
            assert [r["name"] for r in skillpub.resources()] == ["good-one"]
        assert "skills/Bad_Name" in caplog.text
    finally:
        skillpub.skills.cache_clear()


async def test_published_as_resources_and_named_in_the_instructions(bridge, tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    async with bridge(project, root=tmp_path / "empty-root") as client:
        init = client.session.initialize_result
        assert init is not None and "skill://search-console-ga4-by-page/SKILL.md" in (init.instructions or "")
        assert init.capabilities.resources is not None
        listed = await client.session.list_resources()
        [resource] = listed.resources
        assert resource.name == "search-console-ga4-by-page" and resource.mime_type == "text/markdown"
        assert resource.description and resource.description.startswith("Join Search Console clicks per page")
        read = await client.session.read_resource(str(resource.uri))
        assert read.contents[0].text.startswith("---\nname: search-console-ga4-by-page\n")
        with pytest.raises(MCPError) as unknown:
            await client.session.read_resource("skill://nothing/SKILL.md")
        assert unknown.value.error.code == -32002 and "skill://search-console-ga4-by-page/SKILL.md" in unknown.value.error.message
