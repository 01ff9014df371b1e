"""Fixtures of the page's tests (helpers live in uiharness.py, a uniquely named module)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
