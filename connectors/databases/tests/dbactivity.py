"""What a test sees of the connector's queries at the database (shared by the stop and cancel tests)."""

from __future__ import annotations


def pg_extraction_running(admin, since, marker: str, fetch_only: bool = False) -> bool:
    """Whether the connector's query is running at PostgreSQL. It streams through a server-side cursor, so
    while it runs pg_stat_activity shows ``FETCH FORWARD n FROM "c_..."``, not the SQL: the backend is found
    by the connector's application_name and a start after ``since``. The brief DECLARE that names ``marker``
    counts too, unless ``fetch_only`` (the long FETCH itself, the statement a lost race leaves running)."""
    with admin.connect() as conn:
        return bool(conn.exec_driver_sql(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'analytics-acp-databases' "
            "AND backend_start >= %(t)s AND state = 'active' AND (query LIKE 'FETCH%%' OR query LIKE %(q)s)",
            {"t": since, "q": "FETCH%" if fetch_only else f"%{marker}%"}).scalar())


def mariadb_query_running(admin, marker: str) -> bool:
    """Whether a statement naming ``marker`` is running at MariaDB/MySQL (another connection's, in the processlist)."""
    with admin.connect() as conn:
        return bool(conn.exec_driver_sql(
            "SELECT count(*) FROM information_schema.processlist WHERE info LIKE %s AND command = 'Query' "
            "AND id <> CONNECTION_ID()", (f"%{marker}%",)).scalar())
