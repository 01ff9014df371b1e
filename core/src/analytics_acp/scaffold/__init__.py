"""``analytics-acp new <id>``: write ``connectors/<id>/`` from the template next to this module.

The template is a complete connector (pyproject with the entry point, plugin.py with the hooks,
one extraction tool, one block, a resource listing, skills/, icon, README, the kit's one-line
conformance test and a unit test with ``make_ctx``). File names and contents carry placeholders:
``__ID__`` (the id), ``__NAME__`` (a title) and ``__SKILL__`` (the skill folder name).
"""

from __future__ import annotations

import keyword
import re
import sys
from pathlib import Path

TEMPLATE = Path(__file__).resolve().parent / "template"
NEW_ID = re.compile(r"^[a-z][a-z0-9_]*$")  # also the Python package analytics_acp_<id>
SUFFIX = ".tmpl"  # template files are not Python modules, tests or configs of this package


class ScaffoldError(ValueError):
    """The connector cannot be written (invalid id, or it already exists)."""


def check_new_id(connector_id: str, connectors_dir: Path) -> None:
    """Refuse an id that is not a valid connector id or whose folder already exists."""
    if not NEW_ID.match(connector_id) or keyword.iskeyword(connector_id) or len(connector_id) > 40:
        raise ScaffoldError(
            f"{connector_id!r} is not a valid connector id: use lowercase letters, digits and _, "
            "starting with a letter (it becomes the package analytics_acp_<id>)."
        )
    if (connectors_dir / connector_id).exists():
        raise ScaffoldError(f"connectors/{connector_id} already exists; choose another id.")


def write_connector(connector_id: str, root: Path) -> Path:
    """Write ``<root>/connectors/<id>/`` from the template and return that folder."""
    connectors_dir = Path(root) / "connectors"
    if not connectors_dir.is_dir():
        raise ScaffoldError(f"{root} has no connectors/ folder: run this from the repository root (or pass --root).")
    check_new_id(connector_id, connectors_dir)
    values = {
        "__ID__": connector_id,
        "__NAME__": connector_id.replace("_", " ").title(),
        "__SKILL__": connector_id.replace("_", "-") + "-basics",
    }
    target = connectors_dir / connector_id
    for source in sorted(TEMPLATE.rglob(f"*{SUFFIX}")):
        relative = _fill(str(source.relative_to(TEMPLATE))[: -len(SUFFIX)], values)
        out = target / relative
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(_fill(source.read_text(encoding="utf-8"), values), encoding="utf-8")
    return target


def _fill(text: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        text = text.replace(key, value)
    return text


def how_to_test(connector_id: str) -> str:
    """How to run a new connector's tests, from the repository root (its unit tests and the conformance kit)."""
    return f".venv/bin/pytest connectors/{connector_id}"


def new_connector_main(connector_id: str, root: str) -> int:
    """The ``new`` subcommand: write the folder and say what to do next; exit 2 on a refused id."""
    try:
        folder = write_connector(connector_id, Path(root))
    except ScaffoldError as exc:
        print(f"analytics-acp new: {exc}", file=sys.stderr)
        return 2
    # The last line names the same test command as the README's "new connector" block (issue 23.6).
    print(f"Wrote {folder}. Next, from the repository root: make venv (installs it), then edit tools.py, blocks.py\n"
          f"and declaration.py; {how_to_test(connector_id)} runs its tests (the conformance kit included); "
          f"make build CONNECTOR={connector_id} freezes it.")
    return 0
