"""ctx.credential_identity is hashed once per session credentials object (identity_memo.py), never shared wrongly."""

import sys
from pathlib import Path

from analytics_acp.call_context import build_call_context
from analytics_acp.context import ClientInfo
from analytics_acp.effective import SessionConfig
from analytics_acp.hookspecs import hookimpl
from analytics_acp.identity_memo import IdentityMemo
from analytics_acp.plugins import load_connector

sys.path.insert(0, str(Path(__file__).parent / "core_fixtures"))
import mini_connector  # noqa: E402

CLIENT = ClientInfo(acp=True, version="1.0")


class CountingIdentity:
    """A plugin whose credential_identity answers with the key and counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    @hookimpl(tryfirst=True)
    def credential_identity(self, credentials):
        self.calls += 1
        return f"key:{(credentials or {}).get('api_key')}"


def _loaded():
    loaded = load_connector(mini_connector, extensions=False)
    counter = CountingIdentity()
    loaded.pm.register(counter)
    return loaded, counter


def _identity(loaded, session, meta=None):
    return build_call_context(loaded, "extract", meta or {}, session, CLIENT, None).credential_identity


def test_a_session_hashes_its_credentials_once():
    loaded, counter = _loaded()
    session = SessionConfig(credentials={"type": "api_key", "api_key": "sk-one-key"})
    first = _identity(loaded, session)
    assert _identity(loaded, session) == first and counter.calls == 1


def test_other_credentials_are_never_served_from_the_memo():
    loaded, counter = _loaded()
    one = SessionConfig(credentials={"type": "api_key", "api_key": "sk-one-key"})
    two = SessionConfig(credentials={"type": "api_key", "api_key": "sk-two-key"})
    twin = SessionConfig(credentials={"type": "api_key", "api_key": "sk-one-key"})  # equal, another session's dict
    a, b, c = _identity(loaded, one), _identity(loaded, two), _identity(loaded, twin)
    assert a != b and a == c and counter.calls == 3
    # Credentials in _meta.acp override the session's for that call only, and are hashed on every call.
    meta = {"credentials": {"type": "api_key", "api_key": "sk-two-key"}}
    assert _identity(loaded, one, meta) == b and _identity(loaded, one) == a and counter.calls == 4


def test_credentials_changed_in_place_are_hashed_again():
    loaded, counter = _loaded()
    session = SessionConfig(credentials={"type": "api_key", "api_key": "sk-one-key"})
    before = _identity(loaded, session)
    session.credentials["api_key"] = "sk-two-key"  # type: ignore[index]
    assert _identity(loaded, session) != before and counter.calls == 2


def test_the_memo_is_bounded_and_keeps_the_newest():
    memo = IdentityMemo(max_entries=2)
    dicts = [{"k": i} for i in range(3)]
    for d in dicts:
        memo.identity(d, lambda c: str(c["k"]))
    assert len(memo) == 2
    assert memo.identity(dicts[2], lambda c: "recomputed") == "2"
    assert memo.identity(dicts[0], lambda c: "recomputed") == "recomputed"
