"""Issue 26.1-26.3 on real sockets: the shared policy (retry.call) against a refused port, an unresolvable
host, a silent listener and proxies, through both transports the connectors use (requests, httplib2).
Retries are counted, never timed; pytest-timeout bounds every test."""

import httplib2
import pytest
import requests
from analytics_acp import UpstreamError
from analytics_acp_google import retry, timeouts
from googlefakes.netfaults import UNRESOLVABLE, Proxy, SilentListener, refused_url


def _requests_get(url):
    def attempt(timeouts):
        attempts.append(timeouts)
        return requests.get(url + "/thing", timeout=timeouts).json()

    attempts = []
    return attempt, attempts


def _httplib2_get(url):
    def attempt(timeouts):
        attempts.append(timeouts)
        resp, body = httplib2.Http(timeout=timeouts[1]).request(url + "/thing")
        return body

    attempts = []
    return attempt, attempts


TRANSPORTS = [_requests_get, _httplib2_get]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_refused_port_is_retried_once_then_typed_naming_the_host(transport):
    url = refused_url()
    attempt, attempts = transport(url)
    with pytest.raises(UpstreamError) as err:  # a 5 s connect timeout: a refusal is "quick" however loaded the machine
        retry.call(attempt, host=url.split("//")[1], budget_=retry.Budget({"timeout_s": 5}))
    assert len(attempts) == 1 + retry.NETWORK_RETRIES
    assert f"Could not reach {url.split('//')[1]}: the connection was refused" in err.value.message
    assert "HTTPS_PROXY" in err.value.message and "Try again in a few minutes" not in err.value.message


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_an_unresolvable_host_is_typed_as_a_name_failure(transport):
    attempt, attempts = transport(UNRESOLVABLE)
    with pytest.raises(UpstreamError) as err:
        retry.call(attempt, host="google-api.something.invalid", budget_=retry.Budget({"timeout_s": 5}))
    assert len(attempts) == 1 + retry.NETWORK_RETRIES
    assert "google-api.something.invalid: the name could not be resolved" in err.value.message


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_silent_listener_is_cut_by_the_read_timeout_and_not_retried(transport):
    with SilentListener() as silent:
        attempt, attempts = transport(silent.url)
        with pytest.raises(UpstreamError) as err:
            retry.call(attempt, host="127.0.0.1")
    assert len(attempts) == 1 and attempts[0][1] == 1  # ANALYTICS_ACP_GOOGLE_TIMEOUT_S=1 (conftest)
    assert "127.0.0.1 did not answer within 1 s" in err.value.message


def test_the_budget_trips_so_a_calls_other_requests_stop_at_once():
    budget = retry.Budget()
    attempt, attempts = _requests_get(refused_url())
    with pytest.raises(UpstreamError):
        retry.call(attempt, budget_=budget, host="h")
    before = len(attempts)
    for _ in range(5):  # e.g. the other autocontext blocks of the same call
        with pytest.raises(UpstreamError, match="Could not reach 127.0.0.1"):  # the host that failed
            retry.call(attempt, budget_=budget, host="h")
    assert len(attempts) == before  # no new connection attempt


def test_config_timeout_s_is_bounded_and_drives_the_budget():
    assert timeouts.configured_timeout_s({"timeout_s": 1}) == timeouts.TIMEOUT_S_MIN
    assert timeouts.configured_timeout_s({"timeout_s": 10_000}) == timeouts.TIMEOUT_S_MAX
    assert timeouts.configured_timeout_s({"timeout_s": "x"}) is None and timeouts.configured_timeout_s({}) is None
    budget = retry.Budget({"timeout_s": 45})
    assert budget.total_s == 45 and budget.read_s == 45 and budget.timeouts()[0] == timeouts.CONNECT_TIMEOUT_S


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_working_proxy_carries_the_call(transport, fake, monkeypatch):
    fake.route("GET", "/thing", lambda req: (200, {"ok": True}))
    with Proxy() as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        monkeypatch.setenv("http_proxy", proxy.url)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        attempt, _ = transport(fake.url)
        assert b"ok" in attempt((5, 5)) if transport is _httplib2_get else attempt((5, 5)) == {"ok": True}
        assert proxy.accepted >= 1 and proxy.targets


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_refusing_proxy_is_typed_and_named(transport, fake, monkeypatch):
    dead = refused_url()
    monkeypatch.setenv("HTTP_PROXY", dead)
    monkeypatch.setenv("http_proxy", dead)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    attempt, attempts = transport(fake.url)
    with pytest.raises(UpstreamError) as err:
        retry.call(attempt, host="127.0.0.1", budget_=retry.Budget({"timeout_s": 5}))
    assert len(attempts) == 1 + retry.NETWORK_RETRIES
    assert f"through the proxy {dead.split('//')[1]}" in err.value.message


def test_a_connect_timeout_is_not_retried():
    """A black-holed SYN (no route) costs one connect timeout, not two: only fast failures get the quick retry."""
    import requests as rq

    attempts = []

    def attempt(timeouts):
        attempts.append(timeouts)
        raise rq.exceptions.ConnectTimeout("Connection to 10.255.255.1 timed out. (connect timeout=1)")

    budget = retry.Budget()
    budget.connect_s = 0.0  # every failure counts as slow: the attempt took at least the connect timeout
    with pytest.raises(UpstreamError, match="the connection timed out"):
        retry.call(attempt, budget_=budget, host="10.255.255.1")
    assert len(attempts) == 1
