"""analytics-acp-databases: the `databases` ACP connector (SQL over SQLite, DuckDB, PostgreSQL, MySQL/MariaDB, any SQLAlchemy URL)."""

__version__ = "0.1.0"
