"""The SQL guard (10.4, first layer): parse with sqlglot in the connection's dialect, accept one read-only query.

Accepted: exactly one SELECT, WITH ... SELECT, set operation (UNION/INTERSECT/EXCEPT), VALUES or a
parenthesized query, and EXPLAIN of one of those. Rejected anywhere in the tree: DML (also inside
CTEs), DDL, SELECT ... INTO, row locks (FOR UPDATE), COPY, ATTACH, PRAGMA, SET, transaction
control, CALL/DO/LOAD and every statement sqlglot only knows as a raw command, plus functions with
side effects, and MySQL/MariaDB executable comments (``/*! ... */``). Decisions come from the syntax
tree and the token stream, never from regular expressions.
The database's own fence (engines.py) stays in place behind this guard.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import sqlglot
from analytics_acp import InvalidArguments, ReadOnlyViolation
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import Token, TokenType

from .sqlsyntax import syntax_error, token_error, unknown_statement

# sqlglot logs every statement it falls back to parsing as a raw Command; the guard reports those itself.
logging.getLogger("sqlglot").setLevel(logging.ERROR)

ALLOWED = "SELECT, WITH ... SELECT, VALUES or EXPLAIN of those"
_QUERY_ROOTS = (exp.Select, exp.SetOperation, exp.Values, exp.Subquery)

# Node types that change data, schema, session or files, wherever they appear in the tree.
_FORBIDDEN_NODES: tuple[type[exp.Expression], ...] = tuple(
    getattr(exp, name)
    for name in (
        "DML", "DDL", "Insert", "Update", "Delete", "Merge", "Create", "Drop", "Alter", "TruncateTable",
        "Command", "Into", "Lock", "Copy", "Set", "Pragma", "Attach", "Detach", "Transaction", "Commit",
        "Rollback", "Use", "Install", "Grant", "Revoke", "Kill", "Refresh", "Cache", "Uncache", "Analyze", "Export",
        "LoadData", "Describe", "Show",
    )
    if hasattr(exp, name)
)

# Functions with side effects (or that run SQL given as text). Defense in depth: the read-only
# transaction already refuses most of them; these are refused before reaching the database.
SIDE_EFFECT_FUNCTIONS = frozenset(
    {
        # PostgreSQL
        "set_config", "nextval", "setval", "lo_import", "lo_export", "lo_unlink", "lo_create", "lo_creat",
        "lo_from_bytea", "lo_put", "lo_truncate", "pg_read_file", "pg_read_binary_file", "pg_ls_dir", "pg_stat_file",
        "pg_terminate_backend", "pg_cancel_backend", "pg_reload_conf", "pg_rotate_logfile", "pg_promote",
        "pg_switch_wal", "pg_create_restore_point", "pg_advisory_lock", "pg_advisory_xact_lock",
        "pg_advisory_lock_shared", "pg_try_advisory_lock", "pg_try_advisory_xact_lock", "pg_notify",
        "pg_logical_emit_message", "pg_create_logical_replication_slot", "pg_drop_replication_slot",
        "dblink", "dblink_exec", "dblink_connect", "dblink_send_query", "query_to_xml", "query_to_xmlschema",
        "query_to_xml_and_xmlschema", "cursor_to_xml", "txid_current", "pg_current_xact_id", "pg_export_snapshot",
        # PostgreSQL admin functions a superuser may run inside a READ ONLY transaction, not undone by the
        # rollback: statistics resets, replication slots (WAL kept until the disk fills), backups, adminpack.
        "pg_stat_reset", "pg_stat_reset_shared", "pg_stat_reset_single_table_counters",
        "pg_stat_reset_single_function_counters", "pg_stat_reset_slru", "pg_stat_reset_replication_slot",
        "pg_stat_reset_subscription_stats", "pg_stat_statements_reset", "pg_create_physical_replication_slot",
        "pg_copy_physical_replication_slot", "pg_copy_logical_replication_slot", "pg_replication_slot_advance",
        "pg_replication_origin_create", "pg_replication_origin_drop", "pg_replication_origin_advance",
        "pg_replication_origin_session_setup", "pg_replication_origin_session_reset", "pg_log_backend_memory_contexts",
        "pg_backup_start", "pg_backup_stop", "pg_start_backup", "pg_stop_backup", "pg_wal_replay_pause",
        "pg_wal_replay_resume", "pg_file_write", "pg_file_rename", "pg_file_unlink", "pg_file_sync",
        "pg_import_system_collations", "pg_sequence_last_value",
        # SQLite
        "load_extension", "writefile", "readfile", "edit", "fts3_tokenizer",
        # MySQL / MariaDB
        "load_file", "get_lock", "release_lock", "release_all_locks", "master_pos_wait", "source_pos_wait",
        # DuckDB
        "write_csv", "write_parquet",
    }
)

# Option words EXPLAIN may carry before its query without parentheses (a parenthesized list is skipped whole):
# PostgreSQL ANALYZE/ANALYSE/VERBOSE; MySQL/MariaDB FORMAT=TRADITIONAL|JSON|TREE, ANALYZE, EXTENDED,
# PARTITIONS; SQLite QUERY PLAN; DuckDB ANALYZE. Words valid only inside PostgreSQL's parentheses (COSTS,
# BUFFERS, FORMAT YAML...) are not skipped outside them: each word here is one a test sends (mutation run).
_EXPLAIN_OPTION_WORDS = frozenset(
    {"ANALYZE", "ANALYSE", "VERBOSE", "QUERY", "PLAN", "EXTENDED", "PARTITIONS", "FORMAT", "=", "JSON", "TREE",
     "TRADITIONAL"}
)
_WRITE_TOKENS = {
    getattr(TokenType, name)
    for name in (
        "INSERT", "UPDATE", "DELETE", "MERGE", "CREATE", "DROP", "ALTER", "INTO", "SET", "COMMIT", "ROLLBACK",
        "BEGIN", "COMMAND", "PRAGMA", "REPLACE", "TRUNCATE", "GRANT", "USE", "EXECUTE", "LOAD", "COPY", "ATTACH",
    )
    if hasattr(TokenType, name)
}
_STATEMENT_KEYS = {"pivot", "describe", "show", "summarize", "analyze"}
# First words of the statements that are not queries, in the dialects served (PostgreSQL, MySQL/MariaDB,
# SQLite, DuckDB). sqlglot reads several of them as plain identifiers ("DISCARD ALL" parses as a column
# alias), so the word, not the tree, says that such a text is a statement (refused as a write) and not a typo.
STATEMENT_WORDS = frozenset(
    {
        "ABORT", "ALTER", "ANALYSE", "ANALYZE", "ATTACH", "BEGIN", "BINLOG", "CACHE", "CALL", "CHANGE", "CHECK",
        "CHECKPOINT", "CHECKSUM", "CLOSE", "CLUSTER", "COMMENT", "COMMIT", "COPY", "CREATE", "DEALLOCATE", "DECLARE",
        "DELETE", "DESC", "DESCRIBE", "DETACH", "DISCARD", "DO", "DROP", "END", "EXEC", "EXECUTE", "EXPORT", "FETCH",
        "FLUSH", "FORCE", "GET", "GRANT", "HANDLER", "HELP", "IMPORT", "INSERT", "INSTALL", "KILL", "LISTEN", "LOAD",
        "LOCK", "MERGE", "MOVE", "NOTIFY", "OPTIMIZE", "PIVOT", "PRAGMA", "PREPARE", "PURGE", "REASSIGN", "REFRESH",
        "REINDEX", "RELEASE", "RENAME", "REPAIR", "REPLACE", "RESET", "RESIGNAL", "RESTART", "REVOKE", "ROLLBACK",
        "SAVEPOINT", "SECURITY", "SET", "SHOW", "SHUTDOWN", "SIGNAL", "START", "STOP", "SUMMARIZE", "TRUNCATE",
        "UNINSTALL", "UNLISTEN", "UNLOCK", "UNPIVOT", "UPDATE", "UPSERT", "USE", "VACUUM", "XA",
    }
)
_QUERY_START_TOKENS = {TokenType.SELECT, TokenType.WITH, TokenType.VALUES, TokenType.L_PAREN, TokenType.FROM, TokenType.TABLE}


@dataclass
class CheckedQuery:
    """A query the guard accepted: its tree (None for EXPLAIN), type and the text to run."""

    sql: str
    statement_type: str
    tree: exp.Expression | None
    explain: bool = False
    tables: list[str] = field(default_factory=list)
    inner: exp.Expression | None = None  # the explained query
    literals: tuple[str, ...] = ()  # the text of the query's string literals, in the guard's walk order

    @property
    def query_tree(self) -> exp.Expression | None:
        """The query itself (the explained one for EXPLAIN)."""
        return self.tree if self.tree is not None else self.inner


def _violation(kind: str, detail: str = "") -> ReadOnlyViolation:
    extra = f" {detail}" if detail else ""
    return ReadOnlyViolation(
        f"{kind} statements are not allowed: this tool only runs read-only queries ({ALLOWED}).{extra}",
        {"statement_type": kind},
    )


def statement_type(node: exp.Expression) -> str:
    """Human statement type of a root node: SELECT, DELETE, COPY, CALL, SELECT ... INTO..."""
    if isinstance(node, exp.Command):
        return str(node.this).upper()
    if isinstance(node, exp.Select) and node.args.get("into"):
        return "SELECT ... INTO"
    if isinstance(node, exp.TruncateTable):
        return "TRUNCATE"
    if isinstance(node, exp.Set):
        return "SET"
    if isinstance(node, exp.Describe):
        return "EXPLAIN" if node.args.get("style") is None else "DESCRIBE"
    if isinstance(node, exp.SetOperation):
        return node.key.upper()
    if isinstance(node, exp.Transaction):
        return "BEGIN"
    return node.key.upper()


class SqlReader:
    """A Dialect with a tokenizer and a parser to reuse, by one thread at a time (each resets itself on every use):
    making them was a twentieth of the guard's work on a short query (bench case 4b). DatabaseState.sql_reader."""

    def __init__(self, dialect: str | sqlglot.Dialect | None) -> None:
        self.dialect = sqlglot.Dialect.get_or_raise(dialect)
        self.tokenizer = self.dialect.tokenizer()
        self.parser = self.dialect.parser()


def _tokens(sql: str, dialect: str | sqlglot.Dialect | None, engine: sqlglot.Dialect | None = None) -> list[Token]:
    try:
        return (engine or sqlglot.Dialect.get_or_raise(dialect)).tokenize(sql)
    except TokenError:
        raise token_error(sql, dialect) from None


def _statements(tokens: list[Token]) -> list[list[Token]]:
    groups: list[list[Token]] = [[]]
    for tok in tokens:
        if tok.token_type == TokenType.SEMICOLON:
            groups.append([])
        else:
            groups[-1].append(tok)
    return [g for g in groups if g]


def _starts_statement(first: Token) -> bool:
    """The first word begins a statement that is not a query (a write, a session or admin command)."""
    return first.token_type in _WRITE_TOKENS or first.text.upper() in STATEMENT_WORDS


def _starts_query(first: Token) -> bool:
    return first.token_type in _QUERY_START_TOKENS or first.text.upper() == "EXPLAIN"


def _classify_unparsed(tokens: list[Token], exc: ParseError) -> Exception:
    """sqlglot could not parse the text: a write keeps its violation, anything else is a syntax error.

    Several statements are refused as such (10.4), parsed or not; one statement whose first word
    begins a write (``UPDATE t SET a = 1 WHERE``) is a write whatever follows; a query that does not
    parse, or a text that starts with no statement word at all (``SELEC``), is ACP_INVALID_ARGUMENTS
    with the position, because fixing the syntax is what makes it run.
    """
    statements = _statements(tokens)
    if len(statements) > 1:
        return _violation("Multiple", "Send exactly one statement.")
    first = statements[0][0]
    if _starts_statement(first):
        return _violation(first.text.upper())
    if _starts_query(first):
        nested = _nested_write(statements[0])
        return _violation(nested) if nested else syntax_error(exc)
    return unknown_statement(first)


def _nested_write(tokens: list[Token]) -> str | None:
    """A write hidden in a query that does not parse: ``(UPDATE ...)`` as a subquery, or ``SELECT ... INTO``."""
    for before, tok in zip(tokens, tokens[1:], strict=False):
        if tok.token_type == TokenType.INTO:
            return "SELECT ... INTO"
        if before.token_type == TokenType.L_PAREN and _starts_statement(tok):
            return tok.text.upper()
    return None


def _not_a_query(tree: exp.Expression, tokens: list[Token]) -> Exception:
    """A parsed statement that is not a query: a write (violation), or text that is no statement at all."""
    if isinstance(tree, _FORBIDDEN_NODES) or tree.key in _STATEMENT_KEYS:
        return _violation(statement_type(tree))
    first = _statements(tokens)[0][0]
    if _starts_statement(first) or _starts_query(first):
        return _violation(first.text.upper())
    return unknown_statement(first)  # "SELEC nonsense" parses as an alias expression, not as a statement


def check_sql(sql: str, dialect: str | sqlglot.Dialect | SqlReader | None) -> CheckedQuery:
    """Raise ACP_READ_ONLY_VIOLATION (naming the statement type) unless ``sql`` is one read-only query.

    ``dialect`` is a sqlglot dialect name, a Dialect instance, or this thread's SqlReader (what a caller that
    keeps one saves: building them).
    """
    if not isinstance(sql, str) or not sql.strip():
        raise InvalidArguments("sql is empty. Send one SELECT query.")
    # One Dialect for the whole check: get_or_raise builds a new instance from a name on every call (7 us each).
    reader = dialect if isinstance(dialect, SqlReader) else None
    engine = dialect.dialect if isinstance(dialect, SqlReader) else sqlglot.Dialect.get_or_raise(dialect)
    dialect = engine
    if reader is None:
        tokens = _tokens(sql, engine, engine)
    else:
        try:
            tokens = reader.tokenizer.tokenize(sql)
        except TokenError:
            raise token_error(sql, engine) from None
    # Most texts hold no semicolon: one statement, all the tokens, without grouping them (bench case 4b).
    plain = TokenType.SEMICOLON not in [t.token_type for t in tokens]
    statements = ([tokens] if tokens else []) if plain else _statements(tokens)
    if not statements:
        raise InvalidArguments("sql has no statement (only comments or semicolons). Send one SELECT query.")
    _check_comments(tokens, engine)
    if statements[0][0].text.upper() == "EXPLAIN" and len(statements) == 1:
        # EXPLAIN is guarded by its own path (options skipped, the query after them checked in full), before
        # sqlglot reads the whole text: it does not know every option (MariaDB's EXPLAIN PARTITIONS).
        body = _statement_text(sql, tokens)
        inner = _explain_inner(body, dialect)
        return CheckedQuery(sql=body, statement_type="EXPLAIN", tree=None, explain=True, tables=inner.tables, inner=inner.tree,
                            literals=inner.literals)
    try:
        # A comment after the last semicolon (``SELECT 1; -- x``, ``SELECT 1;/**/;``) comes back as a
        # Semicolon node that only carries the comment: an empty statement, not a second one.
        # The tokens read above, parsed as they are: what sqlglot.parse(sql, read=dialect) does, without
        # tokenizing the text a second time (a fifth of the guard's time on a short query).
        parsed = (reader.parser if reader is not None else engine.parser()).parse(tokens, sql)
        trees = [t for t in parsed if t is not None and not isinstance(t, exp.Semicolon)]
    except ParseError as exc:
        raise _classify_unparsed(tokens, exc) from None
    if len(trees) != 1 or len(statements) != 1:
        kinds = ", ".join(statement_type(t) for t in trees)  # type: ignore[arg-type]
        raise _violation("Multiple", f"Send exactly one statement (got {len(trees)}: {kinds}).")
    tree = trees[0]
    # Without semicolons the statement runs from the start to the end of its last token (_statement_text's answer).
    body = sql[: tokens[-1].end + 1].strip() if plain else _statement_text(sql, tokens)
    if not isinstance(tree, _QUERY_ROOTS):
        raise _not_a_query(tree, tokens)  # type: ignore[arg-type]
    tables, literals = _scan(tree)
    return CheckedQuery(sql=body, statement_type=statement_type(tree), tree=tree, tables=tables, literals=literals)


def _check_comments(tokens: list[Token], engine: sqlglot.Dialect) -> None:
    """MySQL and MariaDB run the text of ``/*! ... */`` and ``/*M! ... */`` comments as SQL.

    The parser skips comments, so code hidden there (``INTO OUTFILE``, ``GET_LOCK()``) would reach
    the server unchecked: any comment that starts like an executable one is refused.
    """
    # A MySQL-family Dialect exists only once sqlglot has loaded its module: no import (nor loading it) per call.
    mysql = sys.modules.get("sqlglot.dialects.mysql")
    if mysql is None or not isinstance(engine, mysql.MySQL):
        return
    for tok in tokens:
        for comment in tok.comments or ():
            if comment.startswith(("!", "M!")):
                raise _violation(
                    "Executable comment",
                    "MySQL/MariaDB run the text of /*! ... */ comments as SQL; write the query without them.",
                )


# What the guard's one walk needs to know of a node, per node class (a class's place in sqlglot's hierarchy
# and a non-anonymous function's SQL name never change): one dict lookup per node instead of isinstance
# against some forty classes (bench case 4b).
_SELECT, _LOCK, _FORBIDDEN, _FUNC, _ANONYMOUS, _SIDE_EFFECT, _TABLE, _CTE, _LITERAL = (1 << n for n in range(9))


def _class_flags(cls: type) -> int:
    """The walk's flags of one node class."""
    flags = 0
    for flag, kinds in ((_SELECT, exp.Select), (_LOCK, exp.Lock), (_FORBIDDEN, _FORBIDDEN_NODES), (_FUNC, exp.Func),
                        (_ANONYMOUS, exp.Anonymous), (_TABLE, exp.Table), (_CTE, exp.CTE), (_LITERAL, exp.Literal)):
        if issubclass(cls, kinds):
            flags |= flag
    if flags & _FUNC and not flags & _ANONYMOUS and cls.sql_name().lower() in SIDE_EFFECT_FUNCTIONS:  # type: ignore[attr-defined]
        flags |= _SIDE_EFFECT
    return flags


def _node_classes() -> list[type]:
    """Every node class sqlglot has defined so far (Expression and its subclasses, depth first)."""
    out: list[type] = []
    todo: list[type] = [exp.Expression]
    while todo:
        cls = todo.pop()
        out.append(cls)
        todo += cls.__subclasses__()
    return out


# Worked out once, at import, for every node class defined then (no state filled while serving: issue 38.2);
# a class defined later (a dialect's own node) is worked out for each of its nodes.
_CLASS_FLAGS: Mapping[type, int] = MappingProxyType({cls: _class_flags(cls) for cls in _node_classes()})


def _scan(tree: exp.Expression) -> tuple[list[str], tuple[str, ...]]:
    """One walk of the accepted tree: raise on anything that writes, locks or has side effects (in the walk's
    order, the first found), else return the tables it reads (CTE names left out, as written:
    [db.][schema.]table) and the text of its string literals (for the answer's dates, 8.2)."""
    ctes: set[str] = set()
    found: list[exp.Table] = []
    literals: list[str] = []
    flags_of = _CLASS_FLAGS.get
    for node in _nodes(tree):
        flags = flags_of(node.__class__)
        if flags is None:
            flags = _class_flags(node.__class__)
        if not flags:
            continue
        if flags & _SELECT and node.args.get("into"):
            raise _violation("SELECT ... INTO", "Return the rows instead; the host stores them.")
        if flags & _LOCK or (flags & _SELECT and node.args.get("locks")):
            raise _violation("SELECT ... FOR UPDATE/SHARE", "Row locks are not needed to read.")
        if flags & _FORBIDDEN:
            raise _violation(statement_type(node), "Data-changing statements are not allowed inside queries or CTEs either.")  # type: ignore[arg-type]
        if flags & _FUNC:
            name = node.name.lower() if flags & _ANONYMOUS else None
            if flags & _SIDE_EFFECT or (name is not None and name in SIDE_EFFECT_FUNCTIONS):
                name = name if name is not None else node.sql_name().lower()  # type: ignore[attr-defined]
                raise ReadOnlyViolation(
                    f"Function {name}() has side effects and is not allowed: this tool only runs read-only queries ({ALLOWED}).",
                    {"statement_type": "SELECT", "function": name},
                )
        if flags & _TABLE:
            found.append(node)  # type: ignore[arg-type]
        if flags & _CTE:
            ctes.add(node.alias_or_name)
        if flags & _LITERAL and node.args["is_string"]:
            literals.append(node.this)
    tables: list[str] = []
    for table in found:
        if not table.name or (not table.db and table.name in ctes):
            continue
        name = ".".join(p.name for p in table.parts)
        if name not in tables:
            tables.append(name)
    return tables, tuple(literals)


def _nodes(tree: exp.Expression) -> list[exp.Expr]:
    """Every node of the tree in ``tree.walk()``'s order (breadth first), without its three generators per node."""
    queue: list[exp.Expr] = [tree]
    for node in queue:  # the list grows as it is read: a FIFO queue
        for value in node.args.values():
            if isinstance(value, list):
                queue += [v for v in value if isinstance(v, exp.Expr)]
            elif isinstance(value, exp.Expr):
                queue.append(value)
    return queue


def _explain_inner(body: str, dialect: str | sqlglot.Dialect | None) -> CheckedQuery:
    """EXPLAIN [options] <query>: skip the option tokens and guard the query that follows.

    The tokenizer reads the rest of a command statement as one string, so the text after each
    skipped word is tokenized again.
    """
    rest = body[_tokens(body, dialect)[0].end + 1 :]
    for _ in range(64):
        tokens = _tokens(rest, dialect)
        if not tokens:
            raise InvalidArguments("EXPLAIN needs a query after it.")
        first = tokens[0]
        if first.token_type == TokenType.L_PAREN and len(tokens) > 1 and tokens[1].token_type not in _QUERY_START_TOKENS:
            depth, end = 0, None
            for tok in tokens:
                depth += tok.token_type == TokenType.L_PAREN
                depth -= tok.token_type == TokenType.R_PAREN
                if depth == 0:
                    end = tok.end
                    break
            if end is None:
                raise InvalidArguments("EXPLAIN options are missing a closing parenthesis.")
            rest = rest[end + 1 :]
        elif first.text.upper() in _EXPLAIN_OPTION_WORDS:
            rest = rest[first.end + 1 :]
        else:
            break
    checked = check_sql(rest, dialect)
    if checked.explain or checked.tree is None:
        raise _violation("EXPLAIN", "Explain one query.")
    return checked


def _statement_text(sql: str, tokens: list[Token]) -> str:
    """The one statement without the empty ones around it: from after the last semicolon before its first
    token (a leading comment kept) to the end of its last token (comments inside kept)."""
    words = [t for t in tokens if t.token_type != TokenType.SEMICOLON]
    start = max((t.end + 1 for t in tokens if t.token_type == TokenType.SEMICOLON and t.end < words[0].start), default=0)
    return sql[start : words[-1].end + 1].strip()
