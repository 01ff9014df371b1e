"""Test fakes shared by the Google connectors' tests: throwaway keys, a loopback REST server, an OAuth token endpoint,
a fake OAuth authorization server with a consent page (``authserver``) and a driver for `analytics-acp login google`
with Chromium as the browser (``signin``).

Not installed: each Google connector's tests/conftest.py puts ``connectors/google/tests`` on sys.path.
"""
