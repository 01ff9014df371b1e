"""Skills published to the MCP client as resources (issue 24.2, issue 35.5's bridge part; SKILL.md rules of 13.4):
the bridge's own, the user's (project, global) and every installed ACP's, with 13.4's precedence."""

from __future__ import annotations

import re
import shutil

import pytest
from analytics_acp.skills import read_skills
from analytics_acp_bridge.fleet.discovery import AcpLaunch
from analytics_acp_bridge.query import urlkeys
from analytics_acp_bridge.serving import skillpub
from analytics_acp_bridge.serving.skillpub import SkillCatalog
from mcp.shared.exceptions import MCPError

PAGE_SKILL = "skill://search-console-ga4-by-page/SKILL.md"


def write_skill(folder, name, description="Does a thing.", body="Steps.\n"):
    (folder / name).mkdir(parents=True, exist_ok=True)
    (folder / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}", encoding="utf-8")


def bridge_only(project):
    """A catalog with no ACP installed: the bridge's own skills (and the project's, if any)."""
    return SkillCatalog(project, project, launches=dict, installed=dict)


def test_the_skills_folder_follows_13_4(tmp_path):
    skills, problems = read_skills(skillpub.SKILLS_DIR)
    assert problems == []
    assert [s.name for s in skills] == ["search-console-ga4-by-page"]
    assert [(p.uri, p.scope) for p in bridge_only(tmp_path).published()] == [(PAGE_SKILL, "bridge")]


def test_the_page_skill_names_the_extractions_the_functions_and_the_time_zones(tmp_path):
    catalog = bridge_only(tmp_path)
    text = catalog.read(PAGE_SKILL)
    assert text is not None
    for needed in ("search_analytics", '"dimensions": ["page"]', "run_report", "landingPagePlusQueryString", "keyEvents",
                   "Pacific Time", "property's time zone", "url_key(", "save_as", "pages_joined", "page_location"):
        assert needed in text, needed
    used = set(re.findall(r"\b(url_[a-z]+)\(", text))
    assert used <= set(urlkeys.DESCRIPTIONS) and {"url_key", "url_host", "url_param"} <= used
    assert catalog.read("skill://nothing/SKILL.md") is None


def test_a_broken_skill_is_left_out_and_logged(tmp_path, monkeypatch, caplog):
    (tmp_path / "Bad_Name").mkdir()
    (tmp_path / "Bad_Name" / "SKILL.md").write_text("---\nname: Bad_Name\ndescription: x\n---\n", encoding="utf-8")
    write_skill(tmp_path, "good-one")
    monkeypatch.setattr(skillpub, "SKILLS_DIR", tmp_path)
    skillpub.skills.cache_clear()
    try:
        with caplog.at_level("WARNING", logger="analytics_acp_bridge.skills"):
            assert [r["name"] for r in bridge_only(tmp_path / "proj").resources()] == ["good-one"]
        assert "skills/Bad_Name" in caplog.text
    finally:
        skillpub.skills.cache_clear()


def test_acp_skills_follow_13_4_precedence(tmp_path):
    project, root = tmp_path / "proj", tmp_path / "root"
    write_skill(project / "skills", "shared", "The user's own version.")  # a user's skill hides the ACP's
    write_skill(project / "skills", "both-levels", "Project level.")
    write_skill(root / "skills", "both-levels", "Global level.")  # the project's wins
    write_skill(root / "skills", "global-only")
    for acp_id, names in {"alpha": ["common", "shared", "alpha-howto"], "beta": ["common"], "gsc": ["folder-gsc"],
                          "broken": ["never"]}.items():
        for name in names:
            write_skill(root / "acps" / acp_id / "skills", name, f"{name} of {acp_id}.")
    installed = tmp_path / "site" / "gsc" / "skills"  # an installed connector the folder ACP "gsc" overrides
    write_skill(installed, "installed-gsc")
    write_skill(tmp_path / "site" / "zeta" / "skills", "common", "common of zeta.")

    def launches():
        found = {acp_id: AcpLaunch(acp_id, acp_id, "folder", folder=root / "acps" / acp_id)
                 for acp_id in ("alpha", "beta", "gsc", "broken") if (root / "acps" / acp_id).is_dir()}
        found["broken"].error = "acp.json has no transport object (13.2)."
        found["zeta"] = AcpLaunch("zeta", "zeta", "installed")
        return found

    catalog = SkillCatalog(project, root, launches,
                           installed=lambda: {"gsc": installed, "zeta": tmp_path / "site" / "zeta" / "skills"})
    published = {p.name: (p.scope, p.acp, p.skill.description) for p in catalog.published()}
    assert published == {
        "shared": ("project", None, "The user's own version."),
        "both-levels": ("project", None, "Project level."),
        "global-only": ("global", None, "Does a thing."),
        "search-console-ga4-by-page": published["search-console-ga4-by-page"],
        "alpha-howto": ("acp", "alpha", "alpha-howto of alpha."),
        "common": ("acp", "alpha", "common of alpha."),  # the first ACP by id keeps the name
        "beta--common": ("acp", "beta", "common of beta."),  # the others are <id>--<name>
        "zeta--common": ("acp", "zeta", "common of zeta."),
        "folder-gsc": ("acp", "gsc", "folder-gsc of gsc."),  # the folder ACP, not the installed one of its id
    }
    entry = next(r for r in catalog.resources() if r["name"] == "beta--common")
    assert entry == {"name": "beta--common", "uri": "skill://beta--common/SKILL.md", "description": "common of beta.",
                     "mimeType": "text/markdown", "_meta": {"analytics-acp/skill": {"scope": "acp", "acp": "beta"}}}
    assert catalog.read("skill://beta--common/SKILL.md").startswith("---\nname: common\n")
    shutil.rmtree(root / "acps" / "alpha")  # uninstalled: its skills go at the next listing
    names = {p.name for p in catalog.published()}
    assert "alpha-howto" not in names and "common" in names and "beta--common" not in names
    assert catalog.read("skill://alpha-howto/SKILL.md") is None


async def test_published_as_resources_and_named_in_the_instructions(bridge, tmp_path, fixture_root):
    write_skill(fixture_root / "acps" / "fixture" / "skills", "fixture-howto", "How to use the fixture.")
    project = tmp_path / "proj"
    write_skill(project / "skills", "ga4-reports", "My own GA4 procedure.")  # hides the installed ga4's skill
    async with bridge(project, root=fixture_root) as client:
        init = client.session.initialize_result
        assert init is not None and PAGE_SKILL in (init.instructions or "")
        assert init.capabilities.resources is not None
        listed = {str(r.uri): r for r in (await client.session.list_resources()).resources}
        page = listed[PAGE_SKILL]
        assert page.name == "search-console-ga4-by-page" and page.mime_type == "text/markdown"
        assert page.description and page.description.startswith("Join Search Console clicks per page")
        assert page.meta == {"analytics-acp/skill": {"scope": "bridge"}}
        mine = listed["skill://fixture-howto/SKILL.md"]
        assert mine.meta == {"analytics-acp/skill": {"scope": "acp", "acp": "fixture"}}
        installed = listed["skill://seo-quick-wins/SKILL.md"]  # an installed connector's (gsc), no source needed
        assert installed.meta == {"analytics-acp/skill": {"scope": "acp", "acp": "gsc"}}
        assert listed["skill://ga4-reports/SKILL.md"].description == "My own GA4 procedure."
        read = await client.session.read_resource(PAGE_SKILL)
        assert read.contents[0].text.startswith("---\nname: search-console-ga4-by-page\n")
        read = await client.session.read_resource("skill://fixture-howto/SKILL.md")
        assert read.contents[0].text.startswith("---\nname: fixture-howto\n")
        with pytest.raises(MCPError) as unknown:
            await client.session.read_resource("skill://nothing/SKILL.md")
        assert unknown.value.error.code == -32002 and PAGE_SKILL in unknown.value.error.message
