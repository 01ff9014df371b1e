"""Benchmark cases; each module exposes ``cases(quick: bool) -> list[Case]``."""
