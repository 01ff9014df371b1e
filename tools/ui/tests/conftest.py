"""Fixtures of the page's tests (helpers live in uiharness.py, a uniquely named module)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture
def tab(browser, world):
    """A fresh tab on the module's page (its own context: cookies start empty), signed in by the token URL."""
    context = browser.new_context(accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(90_000)
    page.goto(world["page"].url)
    yield page
    context.close()
