"""The analysis of a campaign: baseline, best point, scaling efficiency and tax.

Pure functions on the tidy results table (``flashscale.results``): no I/O, no plotting, inputs never mutated.
Bandwidth stays in bytes/s and ``bs`` in bytes; only ``conclusions`` converts, to MB/s (1 MB = 1e6 bytes).

The pipeline reads top to bottom:

    measured(frame)        drop warm-up rows, check the columns the analysis needs
    point_means(frame)     one row per sweep point: mean bandwidth over its repetitions
    baseline(frame)        per rw, the best single-device point mean at the baseline block size
    summarize(frame, ref)  per (layout, devices, rw[, bs]): best point, efficiency and tax against ``ref``
    conclusions(summary)   the summary in words

Definitions (issue 2). *best* is the largest point mean over the sweep; ties go to the smallest numjobs, then
iodepth, then bs. *efficiency* = best / (devices x baseline). *tax* = 1 - best / best of the reference layout with
the same devices and rw (and bs with ``by=("bs",)``); NaN where the reference has no such row.
"""
from __future__ import annotations

from typing import Iterable

import numpy as np
import pandas as pd

from ..errors import AnalysisError

POINT = ["layout", "devices", "rw", "bs", "numjobs", "iodepth"]
REQUIRED = [*POINT, "bw_bytes"]
BY_CHOICES = ("bs",)
BASELINE_BS = 1048576  # 1 MiB, as seed 000 chose
MB = 1e6  # display unit: MB/s = 1e6 bytes/s

BASELINE_COLUMNS = ["rw", "baseline_bw_bytes", "baseline_numjobs", "baseline_iodepth", "baseline_layout"]
SUMMARY_VALUES = [
    "best_bw_bytes", "best_bs", "best_numjobs", "best_iodepth", "baseline_bw_bytes", "efficiency", "tax",
    "reference", "reference_bw_bytes",
]


def _warmup_mask(column: pd.Series) -> pd.Series:
    """True where a row is a warm-up run; accepts bools, 0/1 and the strings 'true'/'false' (CSV)."""
    if pd.api.types.is_bool_dtype(column):
        return column.fillna(False).astype(bool)
    text = column.astype("string").str.strip().str.lower()
    return text.isin(["true", "1", "1.0", "yes"]).fillna(False).astype(bool)


def measured(frame: pd.DataFrame) -> pd.DataFrame:
    """The measured rows: warm-up rows dropped (when ``warmup`` is present), required columns checked."""
    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing:
        raise AnalysisError(f"results lack column(s) needed for the analysis: {', '.join(map(repr, missing))}")
    rows = frame[~_warmup_mask(frame["warmup"])] if "warmup" in frame.columns else frame
    if rows.empty:
        raise AnalysisError(f"results hold no measured rows ({len(frame)} row(s), all warm-up or none)")
    bw = pd.to_numeric(rows["bw_bytes"], errors="coerce")
    bad = rows[bw.isna() | (bw < 0)]
    if not bad.empty:
        where = ", ".join(f"{k}={bad.iloc[0][k]!r}" for k in POINT)
        raise AnalysisError(
            f"results have {len(bad)} row(s) with a missing or negative bw_bytes "
            f"({bad.iloc[0]['bw_bytes']!r} at {where})"
        )
    return rows.reset_index(drop=True)


def point_means(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per sweep point with ``bw_bytes`` the mean over measured repetitions, ``reps`` their count."""
    rows = measured(frame)
    values = {"bw_bytes": ("bw_bytes", "mean"), "reps": ("bw_bytes", "size")}
    if "iops" in rows.columns:
        values["iops"] = ("iops", "mean")
    grouped = rows.groupby(POINT, sort=True, observed=True, dropna=False).agg(**values)
    out = grouped.reset_index()
    out["reps"] = out["reps"].astype("int64")
    return out


def best_points(points: pd.DataFrame, group: list[str]) -> pd.DataFrame:
    """Per group, the point with the largest mean bandwidth; ties: smallest numjobs, then iodepth, then bs."""
    order = points.sort_values(
        ["bw_bytes", "numjobs", "iodepth", "bs"], ascending=[False, True, True, True], kind="mergesort"
    )
    return order.drop_duplicates(group, keep="first").sort_values(group, kind="mergesort").reset_index(drop=True)


def baseline(frame: pd.DataFrame, baseline_bs: int = BASELINE_BS) -> pd.DataFrame:
    """Per rw, the best single-device (devices == 1) point mean over numjobs and iodepth at ``bs == baseline_bs``."""
    points = point_means(frame)
    single = points[(points["devices"] == 1) & (points["bs"] == baseline_bs)]
    lacking = sorted(set(points["rw"]) - set(single["rw"]))
    if lacking:
        raise AnalysisError(
            f"missing baseline: no single-device (devices == 1) rows at bs {baseline_bs} "
            f"for rw {', '.join(map(repr, lacking))}"
        )
    best = best_points(single, ["rw"])
    out = best.rename(columns={
        "bw_bytes": "baseline_bw_bytes", "numjobs": "baseline_numjobs",
        "iodepth": "baseline_iodepth", "layout": "baseline_layout",
    })
    return out[BASELINE_COLUMNS]


def _check_by(by: Iterable[str] | str) -> list[str]:
    names = [by] if isinstance(by, str) else list(by)
    unknown = [b for b in names if b not in BY_CHOICES]
    if unknown:
        raise AnalysisError(
            f"unknown by value(s) {', '.join(map(repr, unknown))}: expected a subset of {BY_CHOICES}"
        )
    return names


def _check_reference(points: pd.DataFrame, reference: str) -> None:
    layouts = sorted(points["layout"].astype(str).unique())
    if reference not in layouts:
        raise AnalysisError(
            f"reference layout {reference!r} is not in the results; layouts present: {', '.join(map(repr, layouts))}"
        )


def _with_tax(best: pd.DataFrame, reference: str, by: list[str]) -> pd.DataFrame:
    """Add ``tax`` = 1 - best / best of the reference layout at the same devices, rw (and ``by``)."""
    keys = ["devices", "rw", *by]
    ref = best.loc[best["layout"] == reference, [*keys, "best_bw_bytes"]]
    ref = ref.rename(columns={"best_bw_bytes": "reference_bw_bytes"})
    out = best.merge(ref, on=keys, how="left", validate="many_to_one")
    out["tax"] = 1.0 - out["best_bw_bytes"] / out["reference_bw_bytes"]
    out["reference"] = reference
    return out


def with_efficiency(rows: pd.DataFrame, base: pd.DataFrame, bw: str = "bw_bytes") -> pd.DataFrame:
    """``rows`` with ``baseline_bw_bytes`` of their rw and ``efficiency`` = ``bw`` / (devices x baseline)."""
    lacking = sorted(set(rows["rw"]) - set(base["rw"]))
    if lacking:
        raise AnalysisError(f"no baseline for rw {', '.join(map(repr, lacking))}")
    out = rows.merge(base[["rw", "baseline_bw_bytes"]], on="rw", how="left", validate="many_to_one")
    out["efficiency"] = out[bw] / (out["devices"] * out["baseline_bw_bytes"])
    return out


def best_with_efficiency(frame: pd.DataFrame, base: pd.DataFrame, group: list[str]) -> pd.DataFrame:
    """Per ``group``: the best point (``best_bw_bytes``, ``best_bs``, ``best_numjobs``, ``best_iodepth``), its
    baseline and efficiency."""
    best = best_points(point_means(frame), group).rename(columns={
        "bw_bytes": "best_bw_bytes", "numjobs": "best_numjobs", "iodepth": "best_iodepth",
    })
    best["best_bs"] = best["bs"]
    return with_efficiency(best, base, bw="best_bw_bytes")


def summarize(
    frame: pd.DataFrame, reference: str, baseline_bs: int = BASELINE_BS, by: Iterable[str] | str = (),
    base: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Per (layout, devices, rw[, bs]): best point, baseline, efficiency and tax against ``reference``.
    ``base``: a baseline measured elsewhere (``baseline`` of another table); by default this table's own."""
    by_cols = _check_by(by)
    _check_reference(point_means(frame), reference)
    base = baseline(frame, baseline_bs) if base is None else base
    group = ["layout", "devices", "rw", *by_cols]
    out = _with_tax(best_with_efficiency(frame, base, group), reference, by_cols)
    return out[[*group, *SUMMARY_VALUES]].sort_values(group, kind="mergesort").reset_index(drop=True)


def _bs_text(bs: int) -> str:
    """A block size in words: 1048576 -> '1 MiB', 4096 -> '4 KiB', 512 -> '512 B'."""
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if bs >= size and bs % size == 0:
            return f"{bs // size} {unit}"
    return f"{bs} B"


def _efficiency_sentence(row: pd.Series, at_bs: str) -> str:
    devices = int(row["devices"])
    ideal = devices * row["baseline_bw_bytes"]
    return (
        f"{row['layout']} reaches {row['efficiency']:.0%} of {devices} x the single-device baseline "
        f"for {row['rw']}{at_bs} ({row['best_bw_bytes'] / MB:,.0f} MB/s of {ideal / MB:,.0f} MB/s)"
    )


def _tax_sentence(row: pd.Series, at_bs: str) -> str:
    where = f"for {row['rw']}{at_bs} at {int(row['devices'])} devices"
    if row["tax"] < 0:
        return f"{row['layout']} is {-row['tax']:.1%} faster than {row['reference']} {where}"
    return f"{row['layout']} costs a {row['tax']:.1%} tax against {row['reference']} {where}"


def conclusions(summary: pd.DataFrame) -> list[str]:
    """Sentences computed from a ``summarize`` table: efficiency of every multi-device row, tax of every
    non-reference row that has a reference to compare with (rows with a NaN tax are left out)."""
    needed = ["layout", "devices", "rw", "best_bw_bytes", "baseline_bw_bytes", "efficiency", "tax", "reference"]
    missing = [c for c in needed if c not in summary.columns]
    if missing:
        raise AnalysisError(f"summary lacks column(s) {', '.join(map(repr, missing))}: pass the output of summarize")
    sentences = []
    for _, row in summary.iterrows():
        at_bs = f" with {_bs_text(int(row['bs']))} blocks" if "bs" in summary.columns else ""
        if row["devices"] > 1 and np.isfinite(row["efficiency"]):
            sentences.append(_efficiency_sentence(row, at_bs))
        if row["layout"] != row["reference"] and np.isfinite(row["tax"]):
            sentences.append(_tax_sentence(row, at_bs))
    return sentences


CLAIM_KEYS = ("layout", "rw", "bs", "metric")


def _claimed(claim: pd.Series, table: pd.DataFrame) -> float:
    """The value of ``claim['quantity']`` in the one row of ``table`` matching the claim's non-blank keys."""
    match = table
    for key in CLAIM_KEYS:
        if key in claim.index and pd.notna(claim[key]) and claim[key] != "":
            wanted = int(claim[key]) if key == "bs" else claim[key]
            match = match[match[key] == wanted]
    if len(match) != 1 or claim["quantity"] not in match.columns:
        raise AnalysisError(
            f"claim {claim['claim']!r}: {len(match)} row(s) of table {claim['table']!r} match it "
            f"(need exactly one with a column {claim['quantity']!r})"
        )
    return float(match.iloc[0][claim["quantity"]])


def compare_with_stated(claims: pd.DataFrame, tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Published figures against ours: per claim (columns ``claim, table, quantity, stated, tolerance`` and
    optional keys ``layout, rw, bs, metric``), ``ours`` looked up in ``tables[claim.table]``, ``difference`` =
    ours - stated and ``agrees`` = |difference| <= tolerance (the rounding of the stated figure)."""
    unknown = sorted(set(claims["table"]) - set(tables))
    if unknown:
        raise AnalysisError(f"claims refer to table(s) {', '.join(map(repr, unknown))} that were not given")
    ours = [_claimed(claim, tables[claim["table"]]) for _, claim in claims.iterrows()]
    out = claims.assign(ours=ours)
    out["difference"] = out["ours"] - out["stated"]
    out["agrees"] = out["difference"].abs() <= out["tolerance"]
    return out
