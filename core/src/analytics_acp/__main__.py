"""``python -m analytics_acp`` = the ``analytics-acp`` command."""

from .cli import run

run()
