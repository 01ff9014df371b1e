"""``python -m analytics_acp_bench``."""

from .cli import run

run()
