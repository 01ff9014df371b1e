"""SKILL.md rules (13.4): ``skills/<name>/SKILL.md`` with YAML frontmatter whose name is the folder name."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SKILL_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")  # 13.4


@dataclass(frozen=True)
class Skill:
    """One valid skill folder."""

    name: str
    description: str
    path: Path
    icon: Path | None = None  # None when absent or unusable: the skill is still published (13.4)


def skill_frontmatter(text: str) -> dict[str, Any] | None:
    """The YAML frontmatter of a SKILL.md (``---`` fenced at the very top), or None when absent or invalid."""
    import yaml  # only host-side tools read skills; keep it off the server's start-up path

    text = text.removeprefix("\ufeff")
    if not text.startswith("---"):
        return None
    parts = text.split("\n---", 1)
    if len(parts) != 2:
        return None
    try:
        data = yaml.safe_load(parts[0][3:])
    except yaml.YAMLError:
        return None
    return data if isinstance(data, dict) else None


def read_skills(skills_dir: Path) -> tuple[list[Skill], list[str]]:
    """The valid skills under ``skills_dir`` and the 13.4 problems of the others (both sorted by folder)."""
    skills: list[Skill] = []
    problems: list[str] = []
    root = Path(skills_dir)
    if not root.is_dir():
        return skills, problems
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        where = f"skills/{folder.name}"
        md = folder / "SKILL.md"
        if not md.is_file():
            problems.append(f"{where} has no SKILL.md")
            continue
        own: list[str] = []
        if not SKILL_NAME.match(folder.name):
            own.append(f"{where}: the folder name does not match {SKILL_NAME.pattern}")
        front = skill_frontmatter(md.read_text(encoding="utf-8-sig"))
        if front is None:
            problems.extend([*own, f"{where}/SKILL.md has no YAML frontmatter"])
            continue
        if front.get("name") != folder.name:
            own.append(f"{where}/SKILL.md: name {front.get('name')!r} differs from the folder name")
        description = front.get("description")
        if not isinstance(description, str) or not description.strip():
            own.append(f"{where}/SKILL.md has no description")
        if own:
            problems.extend(own)
            continue
        assert isinstance(description, str)  # checked above
        skills.append(Skill(folder.name, description.strip(), md, _icon(folder, front.get("icon"))))
    return skills, problems


def _icon(folder: Path, icon: Any) -> Path | None:
    from .manifest import icon_problem  # same rule as acp.json's icon, relative to the skill folder

    if icon is None or icon_problem(folder, icon) is not None:
        return None
    return (folder / str(icon)).resolve()


def skill_problems(skills_dir: Path) -> list[str]:
    """Only the 13.4 problems of :func:`read_skills`."""
    return read_skills(skills_dir)[1]
