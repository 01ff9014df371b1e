"""Where the bridge works (16.2): the project (acp-data/), sources.json, and the root that holds acps/."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Paths:
    """Where the bridge works (16.2)."""

    project: Path
    sources: Path
    root: Path
