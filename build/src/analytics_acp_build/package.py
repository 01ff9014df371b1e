"""Assemble a server folder (13, 14.1 step 14): executable + libraries, acp.json, skills/, icon, README."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from analytics_acp.skills import skill_problems

from .freeze import BuildFailed, executable_name
from .manifest import ICON_EXTENSIONS, ICON_MAX_BYTES, generate_manifest, manifest_problems


def _readme(source_folder: Path, declaration: dict[str, Any], manifest: dict[str, Any]) -> str:
    own = source_folder / "README.md"
    body = own.read_text(encoding="utf-8") if own.is_file() else f"# {declaration['name']}\n\n{declaration['description']}\n"
    exe = manifest["transport"]["command"]
    return body.rstrip() + f"""

## This folder (built by `analytics-acp build`)

A self-contained ACP {manifest['acp_version']} server: `acp.json` (identity and how to start it),
`{exe.removeprefix('./')}` with its libraries in `_internal/`, and `skills/`. Copy the folder into a
host's servers directory (for example `<userData>/acp/servers/{manifest['id']}/` or
`<project>/.analytika/acp/{manifest['id']}/`), or install the zip with
`analytics-acp install {manifest['id']}-{manifest['version']}.zip --dir <servers-dir>`.

- stdio: `{exe}`
- Streamable HTTP: `{exe} --http --port 7413` (http://127.0.0.1:7413/mcp; set `ACP_HTTP_TOKEN` to require a Bearer token)
- `ACP_CACHE_DIR` / `ACP_TMP_DIR`: where the server keeps its cache and table files; it never writes in this folder.
"""


def assemble(frozen: Path, staging: Path, source_folder: Path, declaration: dict[str, Any]) -> dict[str, Any]:
    """Move the frozen output into ``staging`` and add acp.json, skills, icon and README; returns acp.json."""
    shutil.move(str(frozen), str(staging))
    package_dir = Path(declaration.get("package_dir") or source_folder)
    icon_name = None
    if declaration.get("icon"):
        icon_src = (package_dir / declaration["icon"]).resolve()
        if not icon_src.is_file():
            raise BuildFailed(f"The declared icon {declaration['icon']!r} does not exist in {package_dir}.")
        if icon_src.suffix.lower() not in ICON_EXTENSIONS or icon_src.stat().st_size > ICON_MAX_BYTES:
            raise BuildFailed(f"The icon {icon_src.name} must be svg, png or webp and at most 256 KB (13.2).")
        icon_name = f"icon{icon_src.suffix.lower()}"
        shutil.copy2(icon_src, staging / icon_name)
    skills = package_dir / "skills"
    if skills.is_dir():
        problems = skill_problems(skills)
        if problems:
            raise BuildFailed("Invalid skills (13.4): " + "; ".join(problems) + ".")
        for folder in sorted(p for p in skills.iterdir() if p.is_dir()):
            shutil.copytree(folder, staging / "skills" / folder.name, symlinks=False)
    manifest = generate_manifest(_Info(declaration), executable_name(declaration["id"]), icon=icon_name)
    (staging / "acp.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (staging / "README.md").write_text(_readme(package_dir, declaration, manifest), encoding="utf-8")
    problems = manifest_problems(manifest, staging)
    if problems:
        raise BuildFailed("The generated acp.json breaks 13.2: " + "; ".join(problems) + ".")
    return manifest


class _Info:
    def __init__(self, d: dict[str, Any]):
        self.id, self.name, self.version = d["id"], d["name"], d["version"]
        self.publisher, self.description = d.get("publisher") or "analytics-acp", d["description"]


def folder_size(folder: Path) -> int:
    """Bytes of every regular file under ``folder``."""
    return sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file() and not p.is_symlink())
