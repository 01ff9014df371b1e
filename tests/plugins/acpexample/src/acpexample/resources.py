"""Resources of the example source (6): listing per credential and id normalization."""

from __future__ import annotations

from typing import Any

from analytics_acp import InvalidArguments, Resource, ResourceNotFound, ResourceRef

from .data import ACCOUNTS, BY_ID, TABLES


def visible_accounts(credentials: dict[str, Any] | None) -> list:
    """An API key sees every account; public access (or none) only the public ones."""
    if credentials and credentials.get("type") == "api_key":
        return list(ACCOUNTS)
    return [a for a in ACCOUNTS if a.public]


def listing(credentials: dict[str, Any] | None) -> list[Resource]:
    """The full listing, in the source's order (the core pages and ranks it, 6.3)."""
    return [
        Resource(resource_id=a.id, name=a.name, group=a.region, description=f"Tables: {', '.join(TABLES)}")
        for a in visible_accounts(credentials)
    ]


def normalize(resource_id: str) -> ResourceRef:
    """Accept acct01, ACCT01, accounts/acct01, acct01/orders and `acct01.orders`; return id and level."""
    text = resource_id.strip().strip("`").strip().lower()
    if text.startswith("accounts/"):
        text = text[len("accounts/"):]
    parts = [p for p in text.replace("/", ".").split(".") if p]
    if not parts or len(parts) > 2:
        raise InvalidArguments(
            f"resource_id {resource_id!r} is not <account>[.<table>], for example acct01 or acct01.orders."
        )
    account = parts[0]
    if account not in BY_ID:
        raise ResourceNotFound(
            f"There is no account {account!r}. Call autocontext without resource_id to list the accounts."
        )
    if len(parts) == 1:
        return ResourceRef(id=account, level="account")
    if parts[1] not in TABLES:
        raise ResourceNotFound(f"Account {account} has no table {parts[1]!r}. Tables: {', '.join(TABLES)}.")
    return ResourceRef(id=f"{account}.{parts[1]}", level="table")


def account_of(resource_id: str, credentials: dict[str, Any] | None) -> str:
    """The account part of a normalized id, checked against what the credentials may see."""
    account = resource_id.split(".")[0]
    if account not in {a.id for a in visible_accounts(credentials)}:
        raise ResourceNotFound(
            f"Account {account} is not visible with these credentials. Call autocontext without resource_id "
            "to list the accounts you can use."
        )
    return account
