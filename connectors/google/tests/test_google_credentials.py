"""Credential variants -> google-auth credentials, driven through the real google-auth flows against the fake token endpoint."""

import json

import pytest
from analytics_acp import CredentialsInvalid, CredentialsMissing
from analytics_acp_google.credentials import build_credentials, credential_identity, parse_expiry
from analytics_acp_google.errors import to_acp_error
from googlefakes import keys

SCOPES = ["https://www.googleapis.com/auth/analytics.readonly"]


def _refresh(creds):
    import google.auth.transport.requests

    creds.refresh(google.auth.transport.requests.Request())
    return creds


def test_service_account_json_obtains_a_token_from_its_own_token_uri(fake):
    creds = build_credentials(keys.service_account_credentials(fake.oauth.token_uri), SCOPES)
    _refresh(creds)
    assert creds.token.startswith("ya29.fake-") and creds.valid
    (issued,) = fake.oauth.issued
    assert issued == {"grant_type": "jwt-bearer", "subject": "acp-test@fake-project.iam.gserviceaccount.com",
                      "scope": SCOPES[0]}
    sent = fake.requests_to("^/token$")[0].body
    assert sent["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer" and "assertion" in sent


def test_a_key_the_endpoint_does_not_trust_is_credentials_invalid(fake):
    other = keys.service_account_credentials(fake.oauth.token_uri, email="stranger@x.iam.gserviceaccount.com", slot=1)
    with pytest.raises(Exception) as info:
        _refresh(build_credentials(other, SCOPES))
    err = to_acp_error(info.value)
    assert isinstance(err, CredentialsInvalid) and "invalid_grant" in err.message
    assert "PRIVATE KEY" not in err.message


@pytest.mark.parametrize("variant", ["oauth", "authorized_user"])
def test_refresh_token_flow_obtains_a_token(fake, variant):
    fake.oauth.register_refresh_token("1//r1", "cid", "csecret", subject="person@example.com")
    if variant == "oauth":
        cred = keys.oauth(access_token=None, refresh_token="1//r1", client_id="cid", client_secret="csecret",
                          token_uri=fake.oauth.token_uri)
    else:
        cred = keys.authorized_user(fake.oauth.token_uri, refresh_token="1//r1", client_id="cid", client_secret="csecret")
    creds = _refresh(build_credentials(cred, SCOPES))
    assert creds.token.startswith("ya29.fake-")
    assert fake.oauth.issued[0]["grant_type"] == "refresh_token"
    assert fake.requests_to("^/token$")[0].body["refresh_token"] == "1//r1"


def test_invalid_grant_maps_to_credentials_invalid_without_secrets(fake):
    fake.oauth.invalid_grant = True
    cred = keys.oauth(access_token=None, refresh_token="1//secret-refresh", client_id="cid", client_secret="shh-secret",
                      token_uri=fake.oauth.token_uri)
    with pytest.raises(Exception) as info:
        _refresh(build_credentials(cred, SCOPES))
    err = to_acp_error(info.value)
    assert isinstance(err, CredentialsInvalid)
    assert "1//secret-refresh" not in err.message and "shh-secret" not in err.message


def test_access_token_only_and_expiry_parsing():
    creds = build_credentials(keys.oauth(access_token="ya29.abc", expiry_date="1790000000000"), SCOPES)
    assert creds.token == "ya29.abc" and creds.expiry.year == 2026 and creds.expiry.tzinfo is None
    assert parse_expiry("2026-09-25T14:00:00Z").isoformat() == "2026-09-25T14:00:00"
    assert parse_expiry(1790000000000) == parse_expiry("1790000000000")
    with pytest.raises(CredentialsInvalid, match="expiry_date"):
        parse_expiry("next tuesday")


@pytest.mark.parametrize("raw, match", [
    ("{not json ----BEGIN PRIVATE KEY----- abc", "not valid JSON"),
    (json.dumps({"type": "service_account", "client_email": "a@b", "token_uri": "https://x"}), "lacks private_key"),
    (json.dumps({"type": "service_account", "client_email": "a@b", "token_uri": "https://x",
                 "private_key": "-----BEGIN PRIVATE KEY-----\nTOPSECRETNOTAKEY\n-----END PRIVATE KEY-----\n"}), "not a valid RSA key"),
    ("", "empty"),
])
def test_bad_service_account_keys_are_invalid_without_echoing(raw, match):
    with pytest.raises(CredentialsInvalid, match=match) as info:
        build_credentials({"type": "service_account", "service_account": raw}, SCOPES)
    assert "TOPSECRET" not in info.value.message and "BEGIN PRIVATE" not in info.value.message


def test_oauth_needs_a_token_or_a_complete_refresh_triplet_and_type_is_checked():
    with pytest.raises(CredentialsInvalid, match="refresh_token with the client_id"):
        build_credentials({"type": "oauth", "refresh_token": "1//x", "client_id": "c"}, SCOPES)
    with pytest.raises(CredentialsInvalid, match="Unknown credentials type"):
        build_credentials({"type": "api_key"}, SCOPES)
    with pytest.raises(CredentialsMissing):
        build_credentials(None, SCOPES)


def test_credential_identity_is_non_secret_and_splits_accounts():
    a = keys.service_account_credentials("https://t", email="a@p.iam.gserviceaccount.com")
    b = keys.service_account_credentials("https://t", email="b@p.iam.gserviceaccount.com")
    assert credential_identity(a) == "service_account:a@p.iam.gserviceaccount.com" != credential_identity(b)
    assert credential_identity(keys.oauth(email="x@y.z")) == "oauth:email:x@y.z"
    assert credential_identity(keys.authorized_user(account="")) == "authorized_user:client_id:fake-client.apps.googleusercontent.com"
    assert credential_identity({"type": "oauth", "access_token": "ya29.only"}) is None  # the core's hash applies


def test_the_credentials_people_have_are_accepted_by_the_core_and_built(fake):
    """Issue 26.4: the key file given whole, service_account as an object or as text; malformed keys name the field."""
    from analytics_acp import CredentialsInvalid
    from analytics_acp.schemas import secret_values, validate_credentials
    from analytics_acp_google.credentials import account_of, build_credentials
    from analytics_acp_google.schemas import credentials_schema

    schema = credentials_schema(scopes=["s"], product="P")
    info = keys.service_account_info(fake.oauth.token_uri)
    for given in (info, {"type": "service_account", "service_account": info},
                  {"type": "service_account", "service_account": json.dumps(info)}):
        checked = validate_credentials(schema, given)  # the core's normalization: 4.2's shape, the key as text
        assert checked["type"] == "service_account" and json.loads(checked["service_account"]) == info
        for form in (given, checked):
            assert build_credentials(form, ["s"]).service_account_email == info["client_email"]
            assert account_of(form) == info["client_email"]
        secrets = secret_values(checked, schema)
        # only private_key / private_key_id are secret inside a key; names, type and identities stay readable
        assert info["private_key"] in secrets and info["private_key_id"] in secrets
        assert not {info["client_email"], info["project_id"], info["token_uri"], "service_account", "private_key"} & set(secrets)
    broken = {k: v for k, v in info.items() if k != "private_key"}
    with pytest.raises(CredentialsInvalid) as err:  # issue 34.1: the schema's contentSchema refuses it already
        validate_credentials(schema, broken)
    assert "service_account lacks private_key" in err.value.message and "JSON key file" in err.value.message
    with pytest.raises(CredentialsInvalid) as err:  # and the connector, for a host that sent it anyway
        build_credentials(broken, ["s"])
    assert "lacks private_key" in err.value.message and "JSON key file downloaded" in err.value.message
    oauth = keys.oauth(refresh_token="1//r-secret", client_id="cid.apps", client_secret="cs-secret")
    assert set(secret_values(oauth, schema)) >= {"1//r-secret", "cs-secret"} and "cid.apps" not in secret_values(oauth, schema)
