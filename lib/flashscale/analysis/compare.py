"""Campaigns side by side: different layouts, machines or dates.

    frame, where = raw.gather(["data/campaigns/study", "data/campaigns/quickstart", "/elsewhere/results.parquet"])
    side_by_side(frame)
    best_spread(frame)      the same best points, long: their smallest and largest repetition and n

``raw.gather`` reads the tables (each row with its ``source``); these are pure functions of them. The findings in
words are ``findings.comparison_sentences``.

Does a campaign reproduce? (``flashscale reproduce``: ``reproduce.check`` reads the two campaigns and calls these)

    key_numbers(frame, "jbod")          its key numbers, long: baseline, best, efficiency and tax with their intervals
    agreement(original, again, 0.02)    each key number: reproduced, differs beyond the noise by X, not comparable (why)
    verdict(agreed)                     the one sentence; agreement_record(agreed) the numbers a report records

A number is *reproduced* when its two 95% intervals overlap or the two values differ by no more than the campaign's
margin (``TAX_MARGIN``: relative for a bandwidth or an efficiency, in percentage points for a tax); it *differs
beyond the noise* when the intervals are disjoint and the difference exceeds the margin; it is *not comparable* when
one side lacks it, the units differ, or a side has no interval (one run) or one too wide to tell anything (half of
it beyond ``TOO_WIDE``: a slow run among three) and the difference exceeds the margin.
"""
from __future__ import annotations

import math
from typing import Sequence

import pandas as pd

from ..measure import fio_output
from .core import BASELINE_BS, POINT, best_points, flag, point_means, rates
from .significance import DEFAULT_MARGIN, check_margin
from .stats import summary_intervals
from ..measure.units import percent, rate


def _rates(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows that can be compared: bandwidth runs (not metadata), not flagged ``too_short`` (``core.rates``); a
    source whose runs were all too short to time has nothing to show."""
    frame = frame[~frame["rw"].isin(list(fio_output.METADATA_OPS))]
    return frame[~flag(frame, "too_short")] if "too_short" in frame.columns else frame


def side_by_side(frame: pd.DataFrame, by: Sequence[str] = ("layout", "devices", "rw")) -> pd.DataFrame:
    """Best point-mean bandwidth per ``by`` (rows) and source (columns), bytes/s; NaN where a source lacks it.
    Metadata runs (files per second, not bandwidth) and runs too short to time are left out."""
    frame = _rates(frame)
    if frame.empty:
        return pd.DataFrame()
    best = pd.concat([point_means(g).assign(source=s) for s, g in frame.groupby("source", sort=False)],
                     ignore_index=True)
    return best.pivot_table(index=list(by), columns="source", values="bw_bytes", aggfunc="max")


def best_spread(frame: pd.DataFrame, by: Sequence[str] = ("layout", "devices", "rw")) -> pd.DataFrame:
    """The points ``side_by_side`` shows, one row per ``by`` and source: ``bw_bytes`` (the best point mean),
    ``low`` and ``high`` (its smallest and largest repetition, ``core.rates``) and ``n`` (its repetitions)."""
    frame = _rates(frame)
    parts = []
    for source, group in frame.groupby("source", sort=False):
        best = best_points(point_means(group), list(by))
        runs = rates(group).groupby(POINT, observed=True)["bw_bytes"].agg(low="min", high="max").reset_index()
        parts.append(best.merge(runs, on=POINT, how="left").assign(source=source))
    columns = [*by, "source", "bw_bytes", "low", "high", "n"]
    if not parts:
        return pd.DataFrame(columns=columns)
    return pd.concat(parts, ignore_index=True).rename(columns={"reps": "n"})[columns]


def relative_to(wide: pd.DataFrame, first: str | None = None) -> pd.DataFrame:
    """``side_by_side`` divided by one source's column (the first by default): 1.0 is the same bandwidth."""
    if wide.empty:
        return wide
    first = first or wide.columns[0]
    return wide.div(wide[first], axis=0)


KEY = ["source", "layout", "devices", "rw", "number"]
KEY_NUMBERS = ("baseline", "best", "efficiency", "tax")  # in the order a table shows them
# An interval whose half-width is beyond this (relative; in points for a tax) cannot tell a difference from noise:
# overlapping it says nothing, and the number is not comparable rather than reproduced.
TOO_WIDE = 0.25
UNITS = {"baseline": "bytes/s", "best": "bytes/s", "efficiency": "fraction", "tax": "fraction"}
SUMMARY_COLUMNS = {"best": "best_bw_bytes", "efficiency": "efficiency", "tax": "tax"}
REPRODUCED, DIFFERS, NOT_COMPARABLE = "reproduced", "differs", "not comparable"


def key_numbers(frame: pd.DataFrame, reference: str, baseline_bs=BASELINE_BS,
                margin: float = DEFAULT_MARGIN) -> pd.DataFrame:
    """The key numbers of one campaign's results, long, from ``stats.summary_intervals``: the baseline per rw
    (layout blank, 1 device), then per (layout, devices, rw) its best, efficiency and tax (not the reference's own,
    0 by definition; no tax when ``reference`` was not measured). Columns ``KEY`` (``source`` blank: the caller
    names the table where a campaign has several; ``number``: one of ``KEY_NUMBERS``), ``value``, ``lo``, ``hi``
    (the 95% interval; NaN with one run), ``unit`` (bytes/s or fraction). A number the analysis could not give (no
    baseline: no efficiency) is left out."""
    columns = [*KEY, "value", "lo", "hi", "unit"]
    frame = _rates(frame) if not frame.empty else frame
    if frame.empty:
        return pd.DataFrame(columns=columns)
    has_reference = reference in set(frame["layout"].astype(str))
    summary = summary_intervals(frame, reference if has_reference else str(frame["layout"].iloc[0]),
                                baseline_bs=baseline_bs, margin=margin)
    rows = [{"layout": "", "devices": 1, "rw": r.rw, "number": "baseline", "value": r.baseline_bw_bytes,
             "lo": r.baseline_bw_bytes_lo, "hi": r.baseline_bw_bytes_hi}
            for r in summary.drop_duplicates("rw").itertuples()]
    for r in summary.to_dict("records"):
        for number, column in SUMMARY_COLUMNS.items():
            if number == "tax" and (not has_reference or r["layout"] == reference):
                continue
            rows.append({"layout": r["layout"], "devices": r["devices"], "rw": r["rw"], "number": number,
                         "value": r[column], "lo": r[f"{column}_lo"], "hi": r[f"{column}_hi"]})
    out = pd.DataFrame(rows, columns=columns[1:-1]).assign(source="", unit=lambda t: t["number"].map(UNITS))
    out = out[out["value"].notna()].astype({"value": "float64", "lo": "float64", "hi": "float64"})
    return out.sort_values(["number", "rw", "layout", "devices"], key=_in_order, kind="mergesort",
                           ignore_index=True)[columns]


def _in_order(column: pd.Series) -> pd.Series:
    return column.map(KEY_NUMBERS.index) if column.name == "number" else column


def label(row) -> str:
    """A key number in words: "read baseline", "jbod read best", "jbod on 2 devices read tax" where the layout
    was measured on several device counts, after its source where it has one ("02_scaling: jbod read best";
    ``row``: a mapping with ``KEY`` and ``several``)."""
    source = f"{row['source']}: " if row.get("source") else ""
    if row["number"] == "baseline":
        return f"{source}{row['rw']} baseline"
    where = f"{row['layout']} on {row['devices']} devices" if row.get("several") else row["layout"]
    return f"{source}{where} {row['rw']} {row['number']}"


def agreement(original: pd.DataFrame, reproduction: pd.DataFrame, margin: float = DEFAULT_MARGIN) -> pd.DataFrame:
    """Each key number of either side (``key_numbers``), once: ``KEY``, ``label``, ``unit``, ``original`` and
    ``reproduction`` with their ``_lo``/``_hi``, ``difference`` (the reproduction's relative to the original's
    for a bandwidth or an efficiency, its difference in points for a tax), ``agrees`` (``REPRODUCED``,
    ``DIFFERS``, ``NOT_COMPARABLE``) and ``agreement``, that in words: "reproduced", "differs beyond the noise by
    -48.0%", "not comparable (why)". ``margin``: the original's ``TAX_MARGIN`` (module doc)."""
    margin = check_margin(margin)
    values = ["value", "lo", "hi", "unit"]
    both = original[[*KEY, *values]].merge(reproduction[[*KEY, *values]], on=KEY, how="outer",
                                           suffixes=("_original", "_reproduction"), indicator=True)
    both = both.sort_values("number", key=_in_order, kind="mergesort", ignore_index=True)
    counts = both[both["number"] != "baseline"].groupby(["source", "layout"])["devices"].nunique()
    both["several"] = [counts.get((s, layout), 1) > 1 for s, layout in zip(both["source"], both["layout"])]
    said = [_agrees(row, margin) for row in both.to_dict("records")]
    renamed = {f"{v}_{side}": (side if v == "value" else f"{side}_{v}") for side in ("original", "reproduction")
               for v in ("value", "lo", "hi")}
    out = both.rename(columns=renamed).assign(
        label=[label(row) for row in both.to_dict("records")],
        unit=both["unit_original"].fillna(both["unit_reproduction"]),
        difference=[d for d, _, _ in said], agrees=[a for _, a, _ in said], agreement=[w for _, _, w in said])
    return out[[*KEY, "label", "unit", "original", "original_lo", "original_hi", "reproduction", "reproduction_lo",
                "reproduction_hi", "difference", "agrees", "agreement"]]


def _agrees(row: dict, margin: float) -> tuple[float, str, str]:
    """(difference, agrees, agreement in words) of one merged key number (module doc)."""
    if row["_merge"] != "both":
        missing = "the reproduction" if row["_merge"] == "left_only" else "the original"
        return math.nan, NOT_COMPARABLE, f"not comparable (not measured in {missing})"
    if row["unit_original"] != row["unit_reproduction"]:
        return math.nan, NOT_COMPARABLE, (f"not comparable (in {row['unit_original']} in the original, "
                                          f"{row['unit_reproduction']} in the reproduction)")
    was, now = row["value_original"], row["value_reproduction"]
    points = row["number"] == "tax"
    difference = now - was if points else (now / was - 1 if was else math.inf)
    by = f"{100 * difference:+.1f} percentage points" if points else percent(difference, signed=True)
    if abs(difference) <= margin:
        return difference, REPRODUCED, REPRODUCED
    bounds = (row["lo_original"], row["hi_original"], row["lo_reproduction"], row["hi_reproduction"])
    if any(pd.isna(b) for b in bounds):
        return difference, NOT_COMPARABLE, (f"not comparable (one run on a side: no interval to tell a difference "
                                            f"of {by} from noise)")
    lo, hi, lo_again, hi_again = bounds
    if not (lo <= hi_again and lo_again <= hi):
        return difference, DIFFERS, f"differs beyond the noise by {by}"
    wide = [(side, low, high) for side, value, low, high in (("original", was, lo, hi),
                                                             ("reproduction", now, lo_again, hi_again))
            if _half_width(value, low, high, points) > TOO_WIDE]
    if wide:  # the intervals overlap only because one is too wide to tell anything from noise
        side, low, high = wide[0]
        return difference, NOT_COMPARABLE, (f"not comparable (the {side}'s interval, {_said(low, row, points)} "
                                            f"to {_said(high, row, points)}, is too wide to tell a difference of "
                                            f"{by} from noise)")
    return difference, REPRODUCED, REPRODUCED


def _half_width(value: float, low: float, high: float, points: bool) -> float:
    """Half an interval's width: in points for a tax, relative to its value for a bandwidth or an efficiency."""
    half = (high - low) / 2
    return half if points else (half / abs(value) if value else math.inf)


def _said(value: float, row: dict, points: bool) -> str:
    """A bound for people: a tax or an efficiency in %, a bandwidth in MB/s."""
    if points or row["unit_original"] == "fraction":
        return percent(value)
    return rate(value)


def verdict(agreed: pd.DataFrame) -> str:
    """The one sentence of an ``agreement``: "Reproduced: all 14 key numbers agree." or "Not reproduced: 3 of
    14 key numbers differ beyond the noise: jbod read best -48.0%, ...", with the numbers not comparable named."""
    total, differ = len(agreed), agreed[agreed["agrees"] == DIFFERS]
    apart = agreed[agreed["agrees"] == NOT_COMPARABLE]
    if total == 0:
        return "Nothing to compare: neither campaign recorded a baseline, a best, an efficiency or a tax."
    unmatched = (f" {len(apart)} of {total} {'is' if len(apart) == 1 else 'are'} not comparable: "
                 + "; ".join(f"{r.label} ({r.agreement.removeprefix('not comparable (')}" for r in
                             apart.itertuples()) + ".") if len(apart) else ""
    if len(differ):
        named = ", ".join(f"{r.label} {r.agreement.removeprefix('differs beyond the noise by ')}"
                          for r in differ.itertuples())
        return f"Not reproduced: {len(differ)} of {total} key numbers differ beyond the noise: {named}.{unmatched}"
    if len(apart) == total:
        return f"Not comparable:{unmatched}"
    if len(apart):
        return f"Reproduced where comparable: {total - len(apart)} of {total} key numbers agree.{unmatched}"
    return f"Reproduced: all {total} key numbers agree."


def agreement_record(agreed: pd.DataFrame) -> dict:
    """What a report records of an ``agreement`` (plain JSON): the verdict, the counts, and per key number (by its
    label) both values, the difference and the words; the headline is the verdict."""
    def plain(value):
        return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)

    numbers = {r.label: {"original": plain(r.original), "reproduction": plain(r.reproduction),
                         "difference": plain(r.difference), "agrees": r.agrees, "agreement": r.agreement}
               for r in agreed.itertuples()}
    counts = agreed["agrees"].value_counts()
    said = verdict(agreed)
    return {"verdict": said, "key_numbers": len(agreed), "reproduced": int(counts.get(REPRODUCED, 0)),
            "differ": int(counts.get(DIFFERS, 0)), "not_comparable": int(counts.get(NOT_COMPARABLE, 0)),
            "numbers": numbers, "headline": {"reproduction": said}}
