"""Type inference of hand-dropped CSVs (16.6): the batched inference equals the per-value definition."""

import random

from analytics_acp_bridge import csvtypes

SAMPLES = ["0", "7", "-3", "+12", "007", "1.5", "-0.25", "1e3", ".5", "01.5", "true", "FALSE", "2026-07-01",
           "2026-13-01", "2026-07-01T10:00:00", "2026-07-01 10:00:00Z", "abc", "", "nan", "inf", "1,5", "٣"]


def reference(values):
    """The 16.6 rule stated directly: the first type (in order) that every non-empty value fits."""
    filled = [v for v in values if v]
    for name, check in csvtypes._CHECKS.items():
        if filled and all(check(v) for v in filled):
            return name
    return "string"


def test_bridge_csvtypes_batched_inference_matches_the_rule():
    rng = random.Random(11)
    for _ in range(3000):
        values = [rng.choice(SAMPLES) for _ in range(rng.randint(0, 6))]
        one_by_one, batched = csvtypes.TypeGuess(), csvtypes.TypeGuess()
        for v in values:
            one_by_one.add(v)
        cut = rng.randint(0, len(values))
        batched.add_many(values[:cut])
        batched.add_many(values[cut:])
        assert one_by_one.result() == batched.result() == reference(values), values


def test_bridge_csvtypes_leading_zeros_stay_text():
    for values, expected in ((["08001", "28013"], "string"), (["0", "10"], "integer"), (["0.5", "00.5"], "string"),
                             (["1", "2.5"], "number"), (["2026-07-01", "2026-07-01T00:00:00"], "string")):
        guess = csvtypes.TypeGuess()
        guess.add_many(values)
        assert guess.result() == expected, values
