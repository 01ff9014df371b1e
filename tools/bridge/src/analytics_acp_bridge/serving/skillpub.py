"""The bridge's own skills (13.4 shape), published to the MCP client as resources ``skill://<name>/SKILL.md``.

An MCP client has no skill catalog to publish into, so the bridge offers its procedures the way
MCP can: as resources the client (or the model, in clients that let it read resources) reads on
demand, named in the server instructions. They live in ``skills/<name>/SKILL.md`` inside this
package (shipped with it), are checked with the core's 13.4 rules (an invalid one is left out and
logged), and are read-only. Skills of the ACPs a source uses are not published here (yet).
"""

from __future__ import annotations

import logging
from functools import lru_cache
from pathlib import Path

from analytics_acp.skills import Skill, read_skills

SKILLS_DIR = Path(__file__).resolve().parent.parent / "skills"  # shipped at the package root
SCHEME = "skill://"
MIME = "text/markdown"
log = logging.getLogger("analytics_acp_bridge.skills")


@lru_cache(maxsize=1)
def skills() -> tuple[Skill, ...]:
    """The valid skills of the bridge's skills/ folder (read once; they change with the package only)."""
    found, problems = read_skills(SKILLS_DIR)
    for problem in problems:
        log.warning("bridge skill left out: %s", problem)
    return tuple(found)


def uri(skill: Skill) -> str:
    """The resource URI of a skill."""
    return f"{SCHEME}{skill.name}/SKILL.md"


def resources() -> list[dict[str, str]]:
    """MCP resource entries (name, uri, description, mimeType) of the skills."""
    return [{"name": s.name, "uri": uri(s), "description": s.description, "mimeType": MIME} for s in skills()]


def read(address: str) -> str | None:
    """The SKILL.md text of a skill's URI, or None when no skill has that URI."""
    for skill in skills():
        if uri(skill) == address:
            return skill.path.read_text(encoding="utf-8")
    return None


def instructions() -> str:
    """One sentence for the server instructions naming the skills and how to read them."""
    names = ", ".join(uri(s) for s in skills())
    return f" How-to skills are published as MCP resources ({names}); read one before a task its description names." if names else ""
