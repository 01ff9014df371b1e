"""``python -m analytics_acp_bridge`` = ``analytics-acp bridge``."""

from .cli import run

run()
