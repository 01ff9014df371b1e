"""Human messages for SQL that does not parse (10.4: a typo is ACP_INVALID_ARGUMENTS, not a write).

sqlglot describes a parse failure in terms of its own classes ("Required keyword: 'this' missing
for <class 'sqlglot.expressions.query.Where'>"); a person (or a model) needs where it failed and
what is missing. Every message names the line and column; ``data`` carries them too.
"""

from __future__ import annotations

import difflib
import re
from typing import TYPE_CHECKING, Any

from analytics_acp import InvalidArguments
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import Token

if TYPE_CHECKING:
    from sqlglot.dialects.dialect import Dialect

HINT = "Fix the query (call autocontext to see tables and columns)."
QUERY_WORDS = ("SELECT", "WITH", "VALUES", "EXPLAIN")
_EXPECTED = re.compile(r"Expected (?P<what>.+?) but got <Token token_type: TokenType\.(?P<type>\w+), text: (?P<text>.*?), line")
_EXPECTING = re.compile(r"Expecting (?P<what>\S+)")
_EXPECTED_AFTER = re.compile(r"Expected (?P<what>.+?) after (?P<after>.+)")


def _at(line: Any, col: Any) -> str:
    return f"line {line}, column {col}"


def _reason(error: dict[str, Any]) -> str:
    description = str(error.get("description") or "invalid syntax")
    near = str(error.get("highlight") or "").strip()
    at_end = not str(error.get("end_context") or "").strip()
    if description.startswith("Required keyword"):
        if at_end:
            return f"the query ends right after '{near}'; something is missing after it"
        return f"'{near}' is incomplete; something is missing after it"
    match = _EXPECTED.search(description)
    if match:
        found = "the query ended" if match["type"] == "SENTINEL" else f"found '{match['text']}'"
        return f"expected {match['what']} after '{near}' but {found}"
    match = _EXPECTING.fullmatch(description.strip())
    if match:
        what = match["what"]
        if what == ")":
            return "a parenthesis is not closed" if at_end else f"expected ')' near '{near}'"
        return f"expected '{what}' before '{near}'"
    match = _EXPECTED_AFTER.fullmatch(description.strip())
    if match:
        return f"expected {match['what']} after {match['after']}, found '{near}'"
    if description.startswith("Invalid expression") or "Unexpected token" in description:
        return f"unexpected '{near}'"
    return re.sub(r"<class '[\w.]*?(\w+)'>", r"\1", description)


def syntax_error(exc: ParseError) -> InvalidArguments:
    """ACP_INVALID_ARGUMENTS for a query that does not parse: what is wrong, and where."""
    errors = getattr(exc, "errors", None) or []
    if not errors:
        first = str(exc).splitlines()[0] if str(exc) else "invalid syntax"
        return InvalidArguments(f"SQL syntax error: {first}. {HINT}")
    error = errors[0]
    line, col = error.get("line"), error.get("col")
    near = str(error.get("highlight") or "").strip()
    if isinstance(col, int) and near and "\n" not in near:
        col = max(1, col - len(near) + 1)  # sqlglot points at the token's last character; people read its first
    return InvalidArguments(
        f"SQL syntax error at {_at(line, col)}: {_reason(error)}. {HINT}",
        {"line": line, "column": col, "near": near},
    )


def token_error(sql: str, dialect: str | Dialect | None) -> InvalidArguments:
    """ACP_INVALID_ARGUMENTS for text the tokenizer cannot read (an unclosed quote or comment), with where it starts."""
    import sqlglot

    tokenizer = sqlglot.Dialect.get_or_raise(dialect).tokenizer()
    offset = 0
    try:
        tokenizer.tokenize(sql)
    except TokenError:
        if tokenizer.tokens:
            offset = tokenizer.tokens[-1].end + 1
    while offset < len(sql) and sql[offset].isspace():
        offset += 1
    line = sql.count("\n", 0, offset) + 1
    col = offset - (sql.rfind("\n", 0, offset) + 1) + 1
    near = sql[offset : offset + 12]
    return InvalidArguments(
        f"The SQL could not be read at {_at(line, col)} (near {near!r}): a quote, identifier or comment "
        "that starts there is not closed. Check quotes and comments.",
        {"line": line, "column": col, "near": near},
    )


def unknown_statement(first: Token) -> InvalidArguments:
    """The text starts with a word that begins no SQL statement (a typo such as SELEC)."""
    word = first.text
    guess = difflib.get_close_matches(word.upper(), QUERY_WORDS, n=1, cutoff=0.8)
    suggestion = f" Did you mean {guess[0]}?" if guess else ""
    return InvalidArguments(
        f"SQL syntax error at {_at(first.line, first.col - len(word) + 1)}: '{word}' does not start a SQL statement; "
        f"send one query starting with SELECT, WITH or VALUES.{suggestion}",
        {"line": first.line, "column": first.col - len(word) + 1, "near": word},
    )
