"""Campaigns side by side: different layouts, machines or dates.

    frame, where = raw.gather(["data/campaigns/study", "data/campaigns/quickstart", "/elsewhere/results.parquet"])
    side_by_side(frame)
    best_spread(frame)      the same best points, long: the 95% interval of their mean and n

``raw.gather`` reads the tables (each row with its ``source``); these are pure functions of them. The findings in
words are ``findings.comparison_sentences``.

Does a campaign reproduce? (``flashscale reproduce``: ``reproduce.check`` reads the two campaigns and calls these)

    key_numbers(frame, "jbod")          its key numbers, long: baseline, best, efficiency and tax with their intervals
    agreement(original, again, 0.02)    each key number: reproduced, differs beyond the noise by X, undecided, not
                                        comparable (why)
    verdict(agreed)                     the one sentence; agreement_record(agreed) the numbers a report records

A number is *reproduced* when the two agree by the one rule of ``analysis.agreement``: the 95% interval of the
reproduction's value over the original's lies within the campaign's margin (``TAX_MARGIN``), the smaller within the
margin of the larger; for a tax, the layout's share of the reference (1 - tax) is compared, its difference shown in
percentage points. It *differs beyond the noise* when that whole interval lies beyond the margin, is *undecided*
when it reaches across the margin's edge (wide intervals that overlap prove nothing: 100 and 145 MB/s, each with a
slow run among three, are undecided, not reproduced; more runs would tell), and is *not comparable* when one side
lacks it, the units differ, or a side has one run (one run: no interval, so no verdict can be given).
"""
from __future__ import annotations

import math
from typing import Sequence

import pandas as pd

from ..measure import fio_output
from . import agreement as rule
from .baseline_and_tax import BASELINE_BS, POINT, best_points, flag, point_means, rates
from .significance import DEFAULT_MARGIN, check_margin
from .stats import intervals_by, summary_intervals
from ..measure.units import ONE_RUN, number as figure, percent


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
    ``low`` and ``high`` (the 95% interval of its mean, ``stats.intervals_by``: the tables' own) and ``n`` (its
    repetitions)."""
    frame = _rates(frame)
    parts = []
    for source, group in frame.groupby("source", sort=False):
        best = best_points(point_means(group), list(by))
        runs = intervals_by(rates(group), POINT, ["bw_bytes"]).rename(columns={"bw_bytes_lo": "low",
                                                                                "bw_bytes_hi": "high"})
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
UNITS = {"baseline": "bytes/s", "best": "bytes/s", "efficiency": "fraction", "tax": "fraction"}
SUMMARY_COLUMNS = {"best": "best_bw_bytes", "efficiency": "efficiency", "tax": "tax"}
REPRODUCED, DIFFERS, UNDECIDED, NOT_COMPARABLE = "reproduced", "differs", "undecided", "not comparable"


def key_numbers(frame: pd.DataFrame, reference: str, baseline_bs=BASELINE_BS,
                margin: float = DEFAULT_MARGIN) -> pd.DataFrame:
    """The key numbers of one campaign's results, long, from ``stats.summary_intervals``: the baseline per rw
    (layout blank, 1 device), then per (layout, devices, rw) its best, efficiency and tax (not the reference's own,
    0 by definition; no tax when ``reference`` was not measured). Columns ``KEY`` (``source`` blank: the caller
    names the table where a campaign has several; ``number``: one of ``KEY_NUMBERS``), ``value``, ``lo``, ``hi``
    (the 95% interval; NaN with one run), ``df`` (its degrees of freedom: runs - 1 of a point, runs of both sides
    - 2 of an efficiency or a tax; below 1 with one run), ``unit`` (bytes/s or fraction). A number the analysis
    could not give (no baseline: no efficiency) is left out."""
    columns = [*KEY, "value", "lo", "hi", "df", "unit"]
    frame = _rates(frame) if not frame.empty else frame
    if frame.empty:
        return pd.DataFrame(columns=columns)
    has_reference = reference in set(frame["layout"].astype(str))
    summary = summary_intervals(frame, reference if has_reference else str(frame["layout"].iloc[0]),
                                baseline_bs=baseline_bs, margin=margin)
    rows = [{"layout": "", "devices": 1, "rw": r.rw, "number": "baseline", "value": r.baseline_bw_bytes,
             "lo": r.baseline_bw_bytes_lo, "hi": r.baseline_bw_bytes_hi, "df": r.baseline_reps - 1}
            for r in summary.drop_duplicates("rw").itertuples()]
    for r in summary.to_dict("records"):
        df = {"best": r["best_reps"] - 1, "efficiency": r["best_reps"] + r["baseline_reps"] - 2,
              "tax": r["best_reps"] + r["reference_reps"] - 2}
        for number, column in SUMMARY_COLUMNS.items():
            if number == "tax" and (not has_reference or r["layout"] == reference):
                continue
            rows.append({"layout": r["layout"], "devices": r["devices"], "rw": r["rw"], "number": number,
                         "value": r[column], "lo": r[f"{column}_lo"], "hi": r[f"{column}_hi"], "df": df[number]})
    out = pd.DataFrame(rows, columns=columns[1:-1]).assign(source="", unit=lambda t: t["number"].map(UNITS))
    out = out[out["value"].notna()].astype({"value": "float64", "lo": "float64", "hi": "float64", "df": "float64"})
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
    ``DIFFERS``, ``UNDECIDED``, ``NOT_COMPARABLE``) and ``agreement``, that in words: "reproduced", "differs
    beyond the noise by -48.0%", "undecided: +45.0%, but ...", "not comparable (why)". ``margin``: the
    original's ``TAX_MARGIN`` (module doc)."""
    margin = check_margin(margin)
    values = ["value", "lo", "hi", "unit", *(["df"] if "df" in original and "df" in reproduction else [])]
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
    """(difference, agrees, agreement in words) of one merged key number, by ``agreement.agree`` (module doc)."""
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
    sides = [_side(row, side, points) for side in ("reproduction", "original")]
    if None in sides:
        return difference, NOT_COMPARABLE, f"not comparable (a value of 0 or below: no ratio to tell {by} by)"
    said = rule.agree(*sides, margin)
    if said.verdict == rule.SAME:
        return difference, REPRODUCED, REPRODUCED
    if said.verdict in (rule.ABOVE, rule.BELOW):
        return difference, DIFFERS, f"differs beyond the noise by {by}"
    if said.verdict == rule.NO_INTERVAL:
        return difference, NOT_COMPARABLE, (f"not comparable ({ONE_RUN} on a side: no verdict can be given on a "
                                            f"difference of {by})")
    what = "the ratio of the two shares of the reference (1 - tax)" if points else "the ratio of the two"
    return difference, UNDECIDED, (f"undecided: {by}, but {what} lies between {figure(said.lo)} and "
                                   f"{figure(said.hi)} at 95%, across the {percent(margin, 0)} margin: more runs "
                                   "would tell")


def _side(row: dict, side: str, points: bool) -> rule.Side | None:
    """One side of a merged key number for ``agreement``: a bandwidth or an efficiency as it is, a tax as the
    layout's share of the reference (1 - tax, its interval 1 - hi to 1 - lo); None where it is not positive."""
    value, lo, hi = (row[f"{v}_{side}"] for v in ("value", "lo", "hi"))
    if points:
        value, lo, hi = 1 - value, 1 - hi, 1 - lo
    return rule.side(value, lo, hi, row.get(f"df_{side}", math.nan))


def verdict(agreed: pd.DataFrame) -> str:
    """The one sentence of an ``agreement``: "Reproduced: all 14 key numbers agree.", "Not reproduced: 3 of 14 key
    numbers differ beyond the noise: jbod read best -48.0%, ..." or "Not shown to reproduce: 2 of 14 key numbers
    are undecided: ...", with the numbers undecided and not comparable named."""
    total = len(agreed)
    if total == 0:
        return "Nothing to compare: neither campaign recorded a baseline, a best, an efficiency or a tax."
    differ, open_ = agreed[agreed["agrees"] == DIFFERS], agreed[agreed["agrees"] == UNDECIDED]
    apart = agreed[agreed["agrees"] == NOT_COMPARABLE]
    undecided = (f" {len(open_)} of {total} {'is' if len(open_) == 1 else 'are'} undecided: "
                 + "; ".join(f"{r.label} ({r.agreement.removeprefix('undecided: ')})" for r in open_.itertuples())
                 + ".") if len(open_) else ""
    unmatched = (f" {len(apart)} of {total} {'is' if len(apart) == 1 else 'are'} not comparable: "
                 + "; ".join(f"{r.label} ({r.agreement.removeprefix('not comparable (')}" for r in
                             apart.itertuples()) + ".") if len(apart) else ""
    if len(differ):
        named = ", ".join(f"{r.label} {r.agreement.removeprefix('differs beyond the noise by ')}"
                          for r in differ.itertuples())
        return (f"Not reproduced: {len(differ)} of {total} key numbers differ beyond the noise: {named}."
                f"{undecided}{unmatched}")
    if len(open_):
        return f"Not shown to reproduce:{undecided}{unmatched}"
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
            "differ": int(counts.get(DIFFERS, 0)), "undecided": int(counts.get(UNDECIDED, 0)),
            "not_comparable": int(counts.get(NOT_COMPARABLE, 0)),
            "numbers": numbers, "headline": {"reproduction": said}}
