"""Spec 5.2 / 8.2 sampling: head = first N; spread = N rows over the whole table incl. first and last."""

import pytest
from analytics_acp.declarations import Extraction, Header
from analytics_acp.results import BuildSettings, SpreadSampler, build_extraction, sample, select_indices


def test_select_indices_head_and_spread_exact():
    assert select_indices(100, 5, "head") == [0, 1, 2, 3, 4]
    assert select_indices(101, 5, "spread") == [0, 25, 50, 75, 100]
    assert select_indices(10, 20, "spread") == list(range(10))
    assert select_indices(10, 0, "spread") == []
    assert select_indices(0, 5, "head") == []
    assert select_indices(7, 1, "spread") == [0]
    picks = select_indices(26, 25, "spread")
    assert len(set(picks)) == 25 and picks[0] == 0 and picks[-1] == 25


def test_unknown_sampling_mode_rejected():
    with pytest.raises(ValueError):
        select_indices(10, 2, "random")


def test_head_reads_only_what_it_needs():
    consumed = []

    def rows():
        for i in range(1000):
            consumed.append(i)
            yield i

    assert sample(rows(), 3, "head") == [0, 1, 2]
    assert len(consumed) == 3


def test_spread_streaming_over_200k_rows_is_even_bounded_and_single_pass():
    total, n = 200_000, 25
    sampler = SpreadSampler(n)
    peak = 0
    produced = 0

    def rows():
        nonlocal peak, produced
        for i in range(total):
            produced += 1
            peak = max(peak, len(sampler.kept))
            yield {"i": i}

    gen = rows()
    for row in gen:
        sampler.add(row)
    assert produced == total and next(gen, None) is None  # consumed exactly once
    assert peak <= sampler.capacity + 1  # bounded memory: never more than capacity (+ the one being thinned)
    picked = [r["i"] for r in sampler.result()]
    assert len(picked) == n
    assert picked[0] == 0 and picked[-1] == total - 1
    ideal = select_indices(total, n, "spread")
    tolerance = sampler.step / 2  # the nearest kept row is within half a keep-step of the exact position
    assert all(abs(p - q) <= tolerance for p, q in zip(picked, ideal, strict=True))
    gaps = [b - a for a, b in zip(picked, picked[1:], strict=False)]
    spacing = (total - 1) / (n - 1)
    assert all(abs(g - spacing) <= 2 * tolerance for g in gaps)
    assert tolerance <= spacing / 16  # evenly spaced: at most ~6% off the ideal spacing


def test_spread_deterministic_and_small_tables():
    assert sample(range(1000), 4, "spread") == sample(range(1000), 4, "spread")
    assert sample(range(3), 10, "spread") == [0, 1, 2]
    assert sample(range(0), 10, "spread") == []
    assert sample(range(50), 0, "spread") == []
    assert sample(range(11), 3, "spread") == [0, 5, 10]


@pytest.mark.parametrize("total", [2, 3, 26, 257, 1000, 4097])
def test_spread_always_distinct_with_first_and_last(total):
    out = sample(range(total), 25, "spread")
    assert len(out) == min(total, 25) and len(set(out)) == len(out)
    assert out[0] == 0 and out[-1] == total - 1 and out == sorted(out)


def rows_gen(total):
    for i in range(total):
        yield (i, f"r{i}")


HEADERS = [Header("i", "integer"), Header("s", "string")]


def test_builder_head_vs_spread_inline():
    head = build_extraction(Extraction(rows=rows_gen(254), description="d", headers=HEADERS), BuildSettings(row_limit=5))
    assert [r["i"] for r in head.model_response["rows"]] == [0, 1, 2, 3, 4]
    spread = build_extraction(
        Extraction(rows=rows_gen(101), description="d", headers=HEADERS), BuildSettings(row_limit=5, sampling="spread")
    )
    assert [r["i"] for r in spread.model_response["rows"]] == [0, 25, 50, 75, 100]
    assert spread.model_response["notice"] == "Showing 5 of 101 extracted rows."


def test_builder_spread_after_spill_to_file(tmp_path):
    built = build_extraction(
        Extraction(rows=rows_gen(200_000), description="d", headers=HEADERS),
        BuildSettings(row_limit=25, sampling="spread", inline_max_bytes=10_000, tmp_dir=tmp_path),
    )
    assert built.system_data["format"] == "file"
    picked = [r["i"] for r in built.model_response["rows"]]
    assert len(picked) == 25 and picked[0] == 0 and picked[-1] == 199_999
    assert picked == sorted(set(picked))
    assert built.model_response["rows"][3] == {"i": picked[3], "s": f"r{picked[3]}"}


def test_builder_head_after_spill_keeps_first_rows(tmp_path):
    built = build_extraction(
        Extraction(rows=rows_gen(5000), description="d", headers=HEADERS),
        BuildSettings(row_limit=10, inline_max_bytes=100, tmp_dir=tmp_path),
    )
    assert built.system_data["format"] == "file"
    assert [r["i"] for r in built.model_response["rows"]] == list(range(10))


def test_row_limit_zero_gives_no_rows():
    built = build_extraction(Extraction(rows=rows_gen(30), description="d", headers=HEADERS), BuildSettings(row_limit=0))
    assert built.model_response["rows"] == [] and built.returned_rows == 0
    assert built.model_response["columns"] == ["i", "s"]
    assert built.model_response["notice"] == "Showing 0 of 30 extracted rows."
    assert built.truncated is True and len(built.system_data["table"]) == 30
