"""Protocol constants of ACP 1.0 (spec Appendix A). One place, imported everywhere."""

ACP_PROTOCOL_VERSION = "1.0"
ACP_KEY = "acp"  # key under capabilities.experimental and under _meta
ACP_DATE_ANNOTATION = "x-acp-date"  # "start" | "end" | "template" (8.9)
ACP_URL_ANNOTATION = "x-acp-url"  # URL patterns an argument accepts (8.11)
ACP_INPUT_ANNOTATION = "x-acp-input"
ACP_INPUT_TABLE_REF = "table_ref"  # value of x-acp-input (8.8)
ACP_METHOD_CONFIGURE = "acp/configure"
ACP_METHOD_READ_TABLE = "acp/read_table"
ACP_TOOL_AUTOCONTEXT = "autocontext"
ACP_TOOL_AUTOCONTEXT_DATA = "autocontext_data"
ACP_RESOURCE_SUGGESTIONS = 25
ACP_INLINE_MAX_BYTES = 5 * 1024 * 1024
# A request's tool arguments as JSON; past it the call is ACP_INVALID_ARGUMENTS (issue 15.3).
ACP_MAX_ARGUMENTS_BYTES = 1024 * 1024
# One message line read over stdio, like the HTTP transport's 4 MiB body: a longer line is refused
# before it is parsed, except while the server waits for the client's answer (an inline host table).
ACP_MAX_MESSAGE_BYTES = 4 * 1024 * 1024
# A string argument longer than this is echoed in system_info.arguments cut, with its full length.
ACP_ECHO_MAX_CHARS = 10_000
ACP_MAX_ROW_LIMIT = 5000
ACP_MAX_FIELD_LIMIT = 200
ACP_DEFAULT_FIELD_LIMIT = 20
ACP_MODEL_ROWS_SINGLE = 50
ACP_MODEL_ROWS_MULTI = 10
ACP_MODEL_VIEW_MAX_VALUE_CHARS = 80

# 6.3: resource suggestions
RESOURCE_LIST_CACHE_S = 600
RECENT_HALF_LIFE_DAYS = 14.0

# Validate-only acp/configure, an extension of this implementation (setup_check.py): the initialize result's key
# beside ``acp``, and the marker in the request's ``_meta``. Here so that initialize does not import the check.
VALIDATE_ONLY_KEY = "analytics-acp/validate-only"
VALIDATE_ONLY_CAPABILITY = {"version": 1}

# MCP handshake era the core speaks (DESIGN.md: ACP needs initialize + experimental caps)
MCP_HANDSHAKE_VERSION = "2025-11-25"

COLUMN_TYPES = ("string", "integer", "number", "boolean", "date", "datetime", "json")
COLUMN_ROLES = ("dimension", "metric", "attribute")
RESULT_KINDS = ("autocontext", "autocontext_data", "extraction", "info", "error")
DELIVERY_MODES = ("inject", "suggest", "on_first_call")
COST_MODELS = ("free", "per_query", "per_byte", "per_row")
ACCESS_MODES = ("onlyRead", "readAndOnlyAdd", "full")
