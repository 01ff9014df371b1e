"""Tiny connector for the build tests."""
