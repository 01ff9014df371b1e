"""Test fakes shared by the Google connectors' tests: throwaway keys, a loopback REST server, an OAuth token endpoint.

Not installed: each Google connector's tests/conftest.py puts ``connectors/google/tests`` on sys.path.
"""
