"""What the page says is written for the person reading it: an ACP message's clause that tells the model to
ask the user is left out (the page offers its own way), the rest is kept word for word."""

from __future__ import annotations

import pytest
from analytics_acp_ui.views.activity import for_a_person, plain_error


@pytest.mark.parametrize(("message", "shown"), [
    ("The query would cost about $5.00 and the limit is $0.00. Narrow the query (fewer rows) or ask the user to "
     "raise the limit.", "The query would cost about $5.00 and the limit is $0.00. Narrow the query (fewer rows)."),
    ("Ask the user to sign in again. Then call the tool again.", "Then call the tool again."),
    ("no such table: x. Call autocontext for ventas to see the tables.",
     "no such table: x. Call autocontext for ventas to see the tables."),
])
def test_model_facing_clauses_are_left_out(message, shown):
    assert for_a_person(message) == shown


def test_a_typed_error_on_the_page_has_no_ask_the_user():
    error = {"name": "ACP_COST_LIMIT_EXCEEDED", "code": -32010,
             "message": "The query would cost about $5.00 and the limit is $0.00. Narrow the query or ask the user "
                        "to raise the limit."}
    shown = plain_error(error)
    assert "ask the user" not in shown["message"].lower() and shown["message"].startswith("The query would cost")
    assert shown["name"] == "ACP_COST_LIMIT_EXCEEDED (-32010)"
