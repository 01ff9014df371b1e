"""Skills published to the MCP client as read-only resources ``skill://<name>/SKILL.md`` (13.4).

An MCP client has no skill catalog to publish into, so the bridge offers procedures the way MCP can: as
resources the client (or the model, in clients that let it read resources) reads on demand. Four kinds,
each folder checked with the core's 13.4 rules (an invalid one is left out and logged once):

- the user's: ``<project>/skills/<name>/SKILL.md`` (scope ``project``) and ``<root>/skills/<name>/SKILL.md``
  when the root is another folder (scope ``global``); the project's wins over the global one;
- the bridge's own, shipped in this package (scope ``bridge``);
- every installed ACP's (scope ``acp``): ``skills/`` of an ACP folder in ``<root>/acps/<id>``, or of an
  installed connector's folder (its declaration's ``package_dir``). An ACP folder hides the installed
  connector of the same id, and with it its skills (13.1, fleet/discovery.py). They are published while
  the ACP is installed: the folders are read again at every listing.

Names: a skill of the user's or the bridge's hides an ACP's skill of the same name (13.4: the user's
shadows the ACP's); when two ACPs publish the same name, the first by ACP id keeps it and each other one
is published as ``<id>--<name>`` (13.4). Every entry's ``_meta`` says its scope (and its ACP), so a client
can tell the ACP's read-only skills from the user's.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from analytics_acp.skills import Skill, read_skills

from ..fleet.discovery import AcpLaunch

SKILLS_DIR = Path(__file__).resolve().parent.parent / "skills"  # the bridge's own, shipped at the package root
USER_SKILLS = "skills"  # <project>/skills, <root>/skills
SCHEME = "skill://"
MIME = "text/markdown"
log = logging.getLogger("analytics_acp_bridge.skills")


@dataclass(frozen=True)
class Published:
    """One published skill: its resource name, the skill folder, its scope and (scope ``acp``) its ACP id."""

    name: str
    skill: Skill
    scope: str  # "project" | "global" | "bridge" | "acp"
    acp: str | None = None

    @property
    def uri(self) -> str:
        """The resource URI."""
        return f"{SCHEME}{self.name}/SKILL.md"

    def resource(self) -> dict[str, Any]:
        """The resources/list entry."""
        meta: dict[str, Any] = {"scope": self.scope, **({"acp": self.acp} if self.acp else {})}
        return {"name": self.name, "uri": self.uri, "description": self.skill.description, "mimeType": MIME,
                "_meta": {"analytics-acp/skill": meta}}


@lru_cache(maxsize=1)
def skills() -> tuple[Skill, ...]:
    """The valid skills of the bridge's skills/ folder (read once; they change with the package only)."""
    return tuple(_valid(SKILLS_DIR, "bridge skill"))


_warned: set[str] = set()
_warned_lock = threading.Lock()


def _valid(folder: Path, what: str) -> list[Skill]:
    found, problems = read_skills(folder)
    for problem in problems:
        key = f"{folder}:{problem}"
        with _warned_lock:
            if key in _warned:
                continue
            _warned.add(key)
        log.warning("%s left out: %s", what, problem)
    return found


def installed_skill_dirs() -> dict[str, Path]:
    """Installed connectors (entry points) and their skills/ folder, from each declaration's ``package_dir``."""
    from analytics_acp.plugins import available_connectors, load_connector

    out: dict[str, Path] = {}
    for connector_id in available_connectors():
        try:
            package_dir = load_connector(connector_id, extensions=False).info.package_dir
        except Exception as exc:  # a broken connector must not hide the others' skills
            log.warning("skills of the installed ACP %s left out: %s", connector_id, type(exc).__name__)
            continue
        if package_dir is not None:
            out[connector_id] = Path(package_dir) / "skills"
    return out


class SkillCatalog:
    """Every skill the bridge publishes (module docstring), read again at each listing."""

    def __init__(self, project: Path, root: Path | None, launches: Callable[[], dict[str, AcpLaunch]],
                 installed: Callable[[], dict[str, Path]] = installed_skill_dirs):
        self.project, self.root = project, root
        self.launches = launches
        self._installed = installed
        self._installed_dirs: dict[str, Path] | None = None
        self._lock = threading.Lock()

    def installed_dirs(self) -> dict[str, Path]:
        """The installed connectors' skills/ folders, found once (their declarations are loaded for it)."""
        with self._lock:
            if self._installed_dirs is None:
                self._installed_dirs = self._installed()
            return self._installed_dirs

    def published(self) -> list[Published]:
        """The skills in precedence order: the user's, the bridge's, then the ACPs' by ACP id."""
        out: list[Published] = []
        taken: set[str] = set()
        user = [("project", self.project / USER_SKILLS)]
        if self.root is not None and self.root.resolve() != self.project.resolve():
            user.append(("global", self.root / USER_SKILLS))
        for scope, folder in user:
            for skill in _valid(folder, f"{scope} skill"):
                if skill.name not in taken:
                    taken.add(skill.name)
                    out.append(Published(skill.name, skill, scope))
        for skill in skills():
            if skill.name not in taken:
                taken.add(skill.name)
                out.append(Published(skill.name, skill, "bridge"))
        shadowed = set(taken)  # a user's or the bridge's name hides the ACPs' skill of that name
        for acp_id, folder in sorted(self._acp_dirs().items()):
            for skill in _valid(folder, f"skill of ACP {acp_id}"):
                if skill.name in shadowed:
                    continue
                name = skill.name if skill.name not in taken else f"{acp_id}--{skill.name}"
                if name in taken:
                    continue
                taken.add(name)
                out.append(Published(name, skill, "acp", acp_id))
        return out

    def _acp_dirs(self) -> dict[str, Path]:
        launches = self.launches()
        out: dict[str, Path] = {}
        for acp_id, launch in launches.items():
            if launch.error:
                continue
            if launch.origin == "folder" and launch.folder is not None:
                out[acp_id] = launch.folder / "skills"
            elif launch.origin == "installed" and acp_id in self.installed_dirs():
                out[acp_id] = self.installed_dirs()[acp_id]
        return out

    def resources(self) -> list[dict[str, Any]]:
        """MCP resource entries (name, uri, description, mimeType, _meta) of every published skill."""
        return [p.resource() for p in self.published()]

    def read(self, address: str) -> str | None:
        """The SKILL.md text of a published skill's URI, or None when no published skill has that URI."""
        for entry in self.published():
            if entry.uri == address:
                return entry.skill.path.read_text(encoding="utf-8")
        return None


def instructions() -> str:
    """One sentence for the server instructions: the skills are resources, the bridge's own by name."""
    names = ", ".join(f"{SCHEME}{s.name}/SKILL.md" for s in skills())
    own = f" ({names})" if names else ""
    return (f" How-to skills are published as MCP resources{own}, with those of the installed ACPs; read one "
            "before a task its description names.")
