"""Sizes printed by `analytics-acp build` are binary units and say so (issue 15.8: "MB" were MiB)."""

from analytics_acp_build.build import human_size


def test_binary_units_are_labelled_as_such():
    assert human_size(512) == "512 B"
    assert human_size(1536) == "1.5 KiB"
    assert human_size(166 * 1024 * 1024) == "166.0 MiB"
    assert human_size(3 * 1024**3) == "3.0 GiB"
