"""Series frequency: inference, regular grids, aggregation and filling.

statsmodels needs one value per period on a regular calendar. Real tables have
duplicates (several rows per day), gaps (no sales on a holiday) and irregular
stamps, so the series is rebuilt on the grid here and every change is reported
in a warning that says how it was done.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from analytics_acp.errors import InvalidArguments


@dataclass(frozen=True)
class Frequency:
    """A calendar frequency: name, unit word, default seasonal period."""

    name: str
    unit: str
    season: int
    datetime: bool = False  # output stamps carry a time of day

    def fmt(self, stamp: pd.Timestamp) -> str:
        """Stamp as it goes out: YYYY-MM-DD, or YYYY-MM-DDTHH:MM:SS for hourly series."""
        return stamp.strftime("%Y-%m-%dT%H:%M:%S" if self.datetime else "%Y-%m-%d")


FREQUENCIES: dict[str, Frequency] = {
    "hourly": Frequency("hourly", "hour", 24, datetime=True),
    "daily": Frequency("daily", "day", 7),
    "weekly": Frequency("weekly", "week", 52),
    "monthly": Frequency("monthly", "month", 12),
    "quarterly": Frequency("quarterly", "quarter", 4),
    "yearly": Frequency("yearly", "year", 1),
}
# A grid that is mostly invented (filled) is not a series worth forecasting.
MAX_FILLED_SHARE = 0.5


def infer_frequency(stamp_groups: list[pd.Series]) -> Frequency:
    """The frequency that matches the median step between consecutive distinct stamps of each series."""
    steps = []
    for stamps in stamp_groups:
        distinct = np.sort(pd.Series(stamps).dropna().unique())
        if len(distinct) > 1:
            steps.append(np.diff(distinct).astype("timedelta64[s]").astype(float))
    if not steps:
        raise InvalidArguments("The series has a single date; a forecast needs at least two distinct dates.")
    days = float(np.median(np.concatenate(steps))) / 86400.0
    if days <= 2 / 24:
        return FREQUENCIES["hourly"]
    if days <= 1.5:
        return FREQUENCIES["daily"]
    if days <= 10:
        return FREQUENCIES["weekly"]
    if days <= 45:
        return FREQUENCIES["monthly"]
    if days <= 135:
        return FREQUENCIES["quarterly"]
    return FREQUENCIES["yearly"]


def pandas_rule(freq: Frequency, stamps: pd.Series) -> tuple[str, str | None]:
    """The pandas resample rule for ``freq`` anchored like the data, and a note when stamps were moved."""
    stamps = pd.Series(stamps).dropna()
    if freq.name == "hourly":
        moved = bool((stamps != stamps.dt.floor("h")).any())
        return "h", "timestamps were rounded down to the hour" if moved else None
    if freq.name == "daily":
        moved = bool((stamps != stamps.dt.normalize()).any())
        return "D", "times of day were dropped" if moved else None
    if freq.name == "weekly":
        # Weekly stamps on one weekday map to themselves; anything else goes into ISO weeks
        # (Monday to Sunday) labelled by their Monday (see regular_series).
        weekday = int(stamps.dt.dayofweek.mode().iloc[0])
        moved = bool((stamps.dt.dayofweek != weekday).any() or (stamps != stamps.dt.normalize()).any())
        if moved:
            return "W-MON", "dates were grouped into weeks from Monday to Sunday, labelled by their Monday"
        return f"W-{['MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT', 'SUN'][weekday]}", None
    prefix = {"monthly": "M", "quarterly": "Q", "yearly": "Y"}[freq.name]
    start = {"monthly": stamps.dt.is_month_start, "quarterly": stamps.dt.is_quarter_start, "yearly": stamps.dt.is_year_start}
    end = {"monthly": stamps.dt.is_month_end, "quarterly": stamps.dt.is_quarter_end, "yearly": stamps.dt.is_year_end}
    midnight = (stamps == stamps.dt.normalize()).all()
    if midnight and end[freq.name].all() and not start[freq.name].all():
        return f"{prefix}E", None
    moved = not (midnight and start[freq.name].all())
    return f"{prefix}S", f"dates were aligned to the start of their {freq.unit}" if moved else None


def _period_bounds(label: pd.Timestamp, rule: str) -> tuple[pd.Timestamp, pd.Timestamp]:
    """[start, end) of the resample bin labelled ``label`` (start-labelled rules vs end-labelled ones)."""
    offset = pd.tseries.frequencies.to_offset(rule)
    if rule in ("h", "D", "W-MON") or rule.endswith("S"):
        return label, label + offset
    day = pd.Timedelta(days=1)
    return label - offset + day, label + day


def _drop_partial_edges(
    series: pd.Series, counts: pd.Series, stamps: pd.Series, rule: str, freq: Frequency, aggregate: str, label: str,
    warnings: list[str],
) -> tuple[pd.Series, pd.Series]:
    """Leave out a first/last period the rows only partly cover (a month to date summed looks like a drop)."""
    distinct = np.sort(stamps.unique())
    if aggregate != "sum" or len(series) <= 2 or len(distinct) < 2 or float(counts.max()) <= 1:
        return series, counts
    step = pd.Timedelta(np.median(np.diff(distinct)))
    first_start, _ = _period_bounds(series.index[0], rule)
    _, last_end = _period_bounds(series.index[-1], rule)
    edges = [
        ("last", -1, last_end - pd.Timestamp(distinct[-1]) > 1.5 * step),
        ("first", 0, pd.Timestamp(distinct[0]) - first_start > 0.5 * step),
    ]
    for word, position, partial in edges:
        if partial and len(series) > 2:
            stamp = freq.fmt(series.index[position])
            warnings.append(
                f"{label.capitalize()}: the {word} {freq.name} period ({stamp}) is only partly covered by the rows "
                f"({int(counts.iloc[position])} rows) and was left out as incomplete."
            )
            keep = slice(None, -1) if position == -1 else slice(1, None)
            series, counts = series.iloc[keep], counts.iloc[keep]
    return series, counts


def regular_series(
    stamps: pd.Series,
    values: pd.Series,
    freq: Frequency,
    rule: str,
    *,
    aggregate: str = "sum",
    fill: str = "interpolate",
    label: str = "the series",
) -> tuple[pd.Series, list[str]]:
    """One value per period on a regular grid (index with ``freq`` set), and warnings saying what changed."""
    data = pd.DataFrame({"t": stamps, "v": values}).dropna()
    if data.empty:
        raise InvalidArguments(f"{label.capitalize()} has no rows with both a date and a number.")
    raw = data["t"]
    if rule == "W-MON":
        data["t"] = data["t"].dt.normalize() - pd.to_timedelta(data["t"].dt.dayofweek, unit="D")
    grouped = data.set_index("t")["v"].sort_index().resample(rule)
    counts = grouped.count()
    if aggregate == "sum":
        series = grouped.sum(min_count=1)
    else:
        series = getattr(grouped, aggregate)()
    warnings: list[str] = []
    series, counts = _drop_partial_edges(series, counts, raw, rule, freq, aggregate, label, warnings)
    combined = int((counts > 1).sum())
    if combined:
        rows = int(counts[counts > 1].sum())
        warnings.append(
            f"{label.capitalize()}: {rows} rows shared {combined} {freq.name} periods and were combined by {aggregate}."
        )
    missing = series.isna()
    n_missing = int(missing.sum())
    if n_missing:
        share = n_missing / len(series)
        if share > MAX_FILLED_SHARE:
            guess = infer_frequency([data["t"]])
            hint = (
                f"the data looks {guess.name}: pass frequency {guess.name!r} or omit frequency"
                if guess.name != freq.name
                else "pass a coarser frequency (for example 'weekly' or 'monthly')"
            )
            raise InvalidArguments(
                f"{label.capitalize()} has data in only {len(series) - n_missing} of {len(series)} {freq.name} periods; "
                f"{hint}."
            )
        days = ", ".join(freq.fmt(t) for t in series.index[missing][:5]) + (", ..." if n_missing > 5 else "")
        how = {
            "interpolate": "by linear interpolation between neighbours",
            "zero": "with 0",
            "previous": "with the previous value",
        }[fill]
        if fill == "interpolate":
            series = series.interpolate(method="linear")
        elif fill == "zero":
            series = series.fillna(0.0)
        else:
            series = series.ffill()
        warnings.append(f"{label.capitalize()}: {n_missing} missing {freq.name} periods ({days}) were filled {how}.")
    series = series.astype(float)
    series.index.freq = series.index.freq or pd.tseries.frequencies.to_offset(rule)
    return series, warnings
