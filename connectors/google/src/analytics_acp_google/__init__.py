"""Shared Google plumbing for the Google connectors (ga4, gsc, bigquery). Not a connector: no entry point.

Importing this package is cheap: google.* modules are imported inside functions only, so a
server's start-up never pays for Google's libraries before its first call.
"""

__all__ = ["credentials", "endpoint", "errors", "retry", "schemas"]
