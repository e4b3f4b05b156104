"""The analysis of a campaign: baseline, best point, scaling efficiency and tax.

Pure functions on the tidy results table (``flashscale.measure.results``): no I/O, no plotting, inputs never mutated.
Bandwidth stays in bytes/s and ``bs`` in bytes (``findings`` converts, for its sentences, to MB/s = 1e6 bytes/s).

The pipeline reads top to bottom:

    measured(frame)        drop warm-up, precondition and failed rows, check the columns the analysis needs
    rates(frame)           the measured rows that are rates: runs flagged ``too_short`` left out
    runs(frame)            the runs of the sweep, unchecked: what findings names
    truth_check(frame)     the runs above the emulated array's known cap (``above_truth``), bw / truth
    point_means(frame)     one row per sweep point: mean bandwidth over its repetitions
    baseline(frame)        per rw, the best single-device point mean at the baseline block size
    summarize(frame, ref)  per (layout, devices, rw[, bs]): best point, efficiency and tax against ``ref``
    point_efficiency, best_by_devices, best_by_bs: the per-point and per-device tables of the study notebooks
    compare_with_stated    published figures against ours

Definitions (issue 2). *best* is the largest point mean over the sweep; ties go to the smallest numjobs, then
iodepth, then bs. *efficiency* = best / (devices x baseline). *tax* (``tax``, the one definition) = 1 - bw / bw
of the reference layout at the same keys: in ``summarize`` the best of the same devices and rw (and bs with
``by=("bs",)``); NaN where the reference has no such row. *ideal* (issue 10) = devices x baseline x the layout's
``design_share`` (a mirror writes every block twice: half); *layout_efficiency* = best / ideal, *design_tax* =
1 - share: of a shortfall against devices x baseline, the part that is the layout's design.
"""
from __future__ import annotations

from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from . import table_checks
from .table_checks import POINT, WARMUP_TEXT
from ..errors import AnalysisError, ConfigError
from ..layouts import describe
from ..measure import fio_output
from .defaults import BASELINE_BS, BY_CHOICES

MB = 1e6  # display unit: MB/s = 1e6 bytes/s

BASELINE_COLUMNS = ["rw", "baseline_bw_bytes", "baseline_numjobs", "baseline_iodepth", "baseline_layout"]
SUMMARY_VALUES = [
    "best_bw_bytes", "best_bs", "best_numjobs", "best_iodepth", "baseline_bw_bytes", "efficiency", "tax",
    "reference", "reference_bw_bytes", "ideal_bw_bytes", "layout_efficiency", "design_tax", "baseline_bs",
    "efficiency_note",
]


MEASURE_PHASE = "measure"  # rows of any other phase (precondition) are kept in the table, never analysed


def count_of(count, noun: str) -> str:
    """A count and its noun, plural but for one: "1 job", "4 devices", "2 hosts" (a whole float as an integer)."""
    shown = int(count) if float(count).is_integer() else count
    return f"{shown} {noun}{'' if count == 1 else 's'}"


def measured(frame: pd.DataFrame) -> pd.DataFrame:
    """The measured rows: warm-up rows dropped (when ``warmup`` is present), and rows of a ``phase`` other than
    ``measure`` (preconditioning; a table without the column is all measured), the columns the analysis needs checked
    (``table_checks.checked``). Refused, naming the row: a missing column; a blank or unreadable ``warmup``; a blank layout
    or rw; a count (devices, bs, numjobs, iodepth) that is not a whole number above 0; a ``bw_bytes`` that is not a
    finite rate above 0; two measured rows of the same point and ``rep``. Counts come back int64 and ``bw_bytes``
    float64."""
    table_checks.check_columns(frame)
    rows = frame[~table_checks.warmup_mask(frame)] if "warmup" in frame.columns else frame
    rows = rows[flag(rows, "phase", MEASURE_PHASE)] if "phase" in rows.columns else rows
    rows = rows[~failed(rows)]
    if rows.empty:
        raise AnalysisError(f"results hold no measured rows ({len(frame)} row(s), all warm-up, failed or none)")
    return table_checks.checked(rows)


def flag(rows: pd.DataFrame, name: str, true_when=None) -> pd.Series:
    """True where column ``name`` is set: a bool flag (True, or the words of ``WARMUP_TEXT`` in a CSV; blank in
    rows older than the flag: False), or with ``true_when`` a word (``phase``; blank in older rows: that word)."""
    column = rows[name]
    if true_when is not None:
        return column.astype("string").fillna(true_when).str.strip().eq(true_when).astype(bool)
    if pd.api.types.is_bool_dtype(column):
        return column.fillna(False).astype(bool)
    words = column.astype("string").str.strip().str.lower()
    return words.map(WARMUP_TEXT, na_action="ignore").fillna(False).astype(bool)


def runs(frame: pd.DataFrame) -> pd.DataFrame:
    """The runs of the sweep, whatever their rate: warm-up rows and rows of another ``phase`` than measure dropped,
    nothing else checked (the runs ``findings`` names: too short, above the truth)."""
    rows = frame[~flag(frame, "warmup")] if "warmup" in frame.columns else frame
    rows = rows[~failed(rows)]
    return rows[flag(rows, "phase", MEASURE_PHASE)] if "phase" in rows.columns else rows


def failed(rows: pd.DataFrame) -> pd.Series:
    """True where a run failed (``status`` failed: fio's error, NaN numbers); a table without the column has none."""
    if "status" not in rows.columns:
        return pd.Series(False, index=rows.index)
    return rows["status"].astype("string").fillna("ok").str.strip().eq("failed").astype(bool)


def rates(frame: pd.DataFrame) -> pd.DataFrame:
    """The measured rows that are rates: ``measured`` without the rows flagged ``too_short`` (a run shorter than
    the stated minimum times fio's clock, not the storage; ``evidence.too_short_sentences`` names them)."""
    rows = measured(frame)
    if "too_short" not in rows.columns:
        return rows
    out = rows[~flag(rows, "too_short")]
    if out.empty:
        raise AnalysisError(f"every one of the {len(rows)} measured row(s) is flagged too_short: no rate to compute; "
                            f"give the runs more data or more files")
    return out.reset_index(drop=True)


def truth_check(frame: pd.DataFrame) -> pd.DataFrame:
    """The measured rows flagged ``above_truth`` (above the emulated array's known cap by more than the
    tolerance: a measurement error, not a result), with ``truth_ratio`` = bw_bytes / truth_bw_bytes (NaN where the
    truth is unknown); no rows when the table has no ``above_truth`` column."""
    return above_truth(runs(frame))


def above_truth(rows: pd.DataFrame) -> pd.DataFrame:
    """Of ``rows``, those flagged ``above_truth``, with ``truth_ratio`` = bw_bytes / truth_bw_bytes; ``truth_check``
    of the measured runs, ``evidence.applications_above_truth`` of the applications' rows."""
    flagged = rows[flag(rows, "above_truth")] if "above_truth" in rows.columns else rows.iloc[0:0]
    truth = flagged["truth_bw_bytes"] if "truth_bw_bytes" in flagged.columns else np.nan
    return flagged.assign(truth_ratio=flagged["bw_bytes"] / truth).reset_index(drop=True)


def point_means(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per sweep point with ``bw_bytes`` the mean over measured repetitions (``rates``: runs flagged
    ``too_short`` are not rates), ``reps`` their count."""
    rows = rates(frame)
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


def _check_baseline_bs(baseline_bs, rws: list[str]) -> dict:
    """``baseline_bs`` as rw -> bs (None: that rw's own best block size). An int applies to every rw; a mapping
    names some rws, the others take their own best block size; None: every rw its own best."""
    if baseline_bs is None:
        return dict.fromkeys(rws)
    chosen = dict(baseline_bs) if isinstance(baseline_bs, Mapping) else dict.fromkeys(rws, baseline_bs)
    unknown = sorted(set(chosen) - set(rws))
    if unknown:
        raise AnalysisError(f"baseline_bs names rw {', '.join(map(repr, unknown))} that the results do not have; "
                            f"rws present: {', '.join(map(repr, rws))}")
    for rw, bs in chosen.items():
        if isinstance(bs, bool) or not isinstance(bs, (int, np.integer)) or bs <= 0:
            raise ConfigError(f"baseline_bs {bs!r} for rw {rw!r} must be a block size in bytes, a whole number above 0")
    return {rw: (int(chosen[rw]) if rw in chosen else None) for rw in rws}


def _missing_baseline(gaps: list[dict]) -> str:
    """'missing baseline: no single-device (devices == 1) rows at bs 65536 for rw 'read', 'write'; ...'."""
    by_bs: dict = {}
    for gap in gaps:
        by_bs.setdefault(gap["bs"], []).append(gap["rw"])
    parts = [f"{'at any bs' if bs is None else f'at bs {bs}'} for rw {', '.join(map(repr, rws))}"
             for bs, rws in by_bs.items()]
    return "missing baseline: no single-device (devices == 1) rows " + "; ".join(parts)


def _baseline_gap(rw: str, bs) -> str:
    where = "at any bs" if bs is None else f"at bs {bs}"
    return f"no single-device (devices == 1) {rw} rows {where}"


def baseline(
    frame: pd.DataFrame, baseline_bs: int | Mapping[str, int] | None = BASELINE_BS, by: Iterable[str] | str = (),
    strict: bool = True,
) -> pd.DataFrame:
    """Per rw, the best single-device (devices == 1) point mean over numjobs and iodepth at its block size
    ``baseline_bs``: an int for every rw, or a mapping rw -> bs whose missing rws (and every rw with None) take the
    block size of their best single-device point. With ``by=("bs",)``, one row per rw and measured bs: the baseline at
    that very bs (``baseline_bs`` is then not used), in a ``bs`` column. ``baseline_bs`` says the bs of each.
    A rw (or rw and bs) without single-device rows is refused by name; with ``strict=False`` it gets a row with NaN
    bandwidth and ``baseline_note`` saying what is missing ("" where the baseline was found)."""
    points = point_means(frame)
    single = points[points["devices"] == 1]
    if _check_by(by):
        wanted = points[["rw", "bs"]].drop_duplicates().sort_values(["rw", "bs"]).itertuples(index=False)
        wanted = [(rw, int(bs), ("rw", "bs")) for rw, bs in wanted]
    else:
        chosen = _check_baseline_bs(baseline_bs, sorted(points["rw"].astype(str).unique()))
        wanted = [(rw, bs, ("rw",) if bs is None else ("rw", "bs")) for rw, bs in chosen.items()]
    found, gaps = [], []
    for rw, bs, keys in wanted:
        rows = single[(single["rw"] == rw) & ((single["bs"] == bs) if bs is not None else True)]
        if rows.empty:
            gaps.append(dict(rw=rw, bs=bs, baseline_note=_baseline_gap(rw, bs)))
        else:
            found.append(best_points(rows, list(keys)).assign(baseline_note=""))
    if gaps and strict:
        raise AnalysisError(_missing_baseline(gaps))
    return _baseline_table(found, gaps, per_bs=bool(_check_by(by)))


def _baseline_table(found: list[pd.DataFrame], gaps: list[dict], per_bs: bool) -> pd.DataFrame:
    """The rows found and those missing (NaN bandwidth, a ``baseline_note``) as one table sorted by rw (and bs)."""
    renames = {"bw_bytes": "baseline_bw_bytes", "numjobs": "baseline_numjobs", "iodepth": "baseline_iodepth",
               "layout": "baseline_layout"}
    parts = [pd.concat(found, ignore_index=True).rename(columns=renames)] if found else []
    if gaps:
        parts.append(pd.DataFrame(gaps).reindex(columns=[*renames.values(), "rw", "bs", "baseline_note"]))
    out = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    out = out.assign(baseline_bs=out["bs"])
    columns = [*BASELINE_COLUMNS, "baseline_bs", "baseline_note", *(["bs"] if per_bs else [])]
    keys = ["rw", *(["bs"] if per_bs else [])]
    return out[columns].sort_values(keys, kind="mergesort").reset_index(drop=True)


def _check_by(by: Iterable[str] | str) -> list[str]:
    names = [by] if isinstance(by, str) else list(by)
    unknown = [b for b in names if b not in BY_CHOICES]
    if unknown:
        raise AnalysisError(
            f"unknown by value(s) {', '.join(map(repr, unknown))}: expected a subset of {BY_CHOICES}"
        )
    twice = sorted({b for b in names if names.count(b) > 1})
    if twice:
        raise AnalysisError(f"by value(s) {', '.join(map(repr, twice))} given more than once")
    return names


def _check_reference(points: pd.DataFrame, reference: str) -> None:
    layouts = sorted(points["layout"].astype(str).unique())
    if reference not in layouts:
        raise AnalysisError(
            f"reference layout {reference!r} is not in the results; layouts present: {', '.join(map(repr, layouts))}"
        )


def tax(bw, reference_bw):
    """The tax of a layout: 1 - bw / reference_bw, the share of the reference layout's bandwidth it loses at the
    same point (negative: it is faster). Works on numbers and on columns alike."""
    return 1.0 - bw / reference_bw


def with_reference(rows: pd.DataFrame, reference: str, keys: list[str], columns: dict[str, str]) -> pd.DataFrame:
    """``rows`` with the reference layout's ``columns`` (renamed as mapped) from its row at the same ``keys``;
    NaN where the reference has no such row."""
    ref = rows.loc[rows["layout"] == reference, [*keys, *columns]].rename(columns=columns)
    return rows.merge(ref, on=keys, how="left", validate="many_to_one")


def with_tax(rows: pd.DataFrame, reference: str, keys: list[str], bw: str = "best_bw_bytes") -> pd.DataFrame:
    """``rows`` with ``reference_bw_bytes`` (the reference layout's ``bw`` at the same ``keys``) and ``tax``."""
    out = with_reference(rows, reference, keys, {bw: "reference_bw_bytes"})
    out["tax"] = tax(out[bw], out["reference_bw_bytes"])
    return out


def with_efficiency(rows: pd.DataFrame, base: pd.DataFrame, bw: str = "bw_bytes") -> pd.DataFrame:
    """``rows`` with ``baseline_bw_bytes`` and ``baseline_bs`` of their rw (and of their bs, when ``base`` has a ``bs``
    column: ``baseline(..., by="bs")``), ``efficiency`` = ``bw`` / (devices x baseline) and ``efficiency_note``: "" or why
    there is no baseline, where efficiency is NaN (tax needs none, so a missing baseline refuses nothing)."""
    keys = ["rw", *(["bs"] if "bs" in base.columns else [])]
    notes = base["baseline_note"] if "baseline_note" in base.columns else pd.Series("", index=base.index)
    known = base[keys].assign(baseline_bw_bytes=base["baseline_bw_bytes"], efficiency_note=notes.fillna(""),
                              baseline_bs=base["baseline_bs"] if "baseline_bs" in base.columns else np.nan)
    out = rows.merge(known, on=keys, how="left", validate="many_to_one")
    absent = out["efficiency_note"].isna()
    where = out.loc[absent, keys].astype(str).agg(" ".join, axis=1)
    out.loc[absent, "efficiency_note"] = f"no baseline for {' '.join(keys)} " + where
    out["efficiency"] = out[bw] / (out["devices"] * out["baseline_bw_bytes"])
    return out


def design_share(layout: str, rw: str) -> float:
    """The share of devices x baseline ``layout`` can reach for ``rw`` by its design: its descriptor's
    ``write_share`` for writes (``flashscale.layouts``: a mirror writes every block twice, 1/2; a layout flashscale
    does not know, 1.0),
    1.0 for reads and for what moves no data (metadata ops); a mixed rw (fio's 50/50) moves half its bytes each way,
    so its share is the harmonic mean of the two (a mirror: 2/3)."""
    write = describe(layout).write_share
    shares = [write if way == "write" else 1.0 for way in fio_output.DIRECTIONS.get(rw, ("read",))]
    return len(shares) / sum(1.0 / share for share in shares)


def with_ideal(rows: pd.DataFrame, bw: str = "best_bw_bytes") -> pd.DataFrame:
    """``rows`` (layout, devices, rw, baseline_bw_bytes) with the layout's own ideal ``ideal_bw_bytes`` = devices x
    baseline x ``design_share``, ``layout_efficiency`` = ``bw`` / ideal_bw_bytes, and ``design_tax`` = 1 - share:
    the part of a shortfall against devices x baseline that is the layout's design, not its overhead."""
    share = pd.Series([design_share(layout, rw) for layout, rw in zip(rows["layout"], rows["rw"])],
                      index=rows.index, dtype="float64")
    out = rows.assign(ideal_bw_bytes=rows["devices"] * rows["baseline_bw_bytes"] * share)
    out["layout_efficiency"] = out[bw] / out["ideal_bw_bytes"]
    out["design_tax"] = 1.0 - share
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
    frame: pd.DataFrame, reference: str, baseline_bs: int | Mapping[str, int] | None = BASELINE_BS,
    by: Iterable[str] | str = (),
    base: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Per (layout, devices, rw[, bs]): best point, baseline, efficiency and tax against ``reference``.
    ``base``: a baseline measured elsewhere (``baseline`` of another table); by default this table's own."""
    by_cols = _check_by(by)
    _check_reference(point_means(frame), reference)
    base = baseline(frame, baseline_bs, by_cols, strict=False) if base is None else base
    group = ["layout", "devices", "rw", *by_cols]
    out = with_tax(with_ideal(best_with_efficiency(frame, base, group)), reference, ["devices", "rw", *by_cols])
    out["reference"] = reference
    return out[[*group, *SUMMARY_VALUES]].sort_values(group, kind="mergesort").reset_index(drop=True)


def point_efficiency(frame: pd.DataFrame, base: pd.DataFrame) -> pd.DataFrame:
    """Every sweep point (mean over repetitions) with ``baseline_bw_bytes`` and ``efficiency``."""
    return with_efficiency(point_means(frame), base)


def best_by_devices(frame: pd.DataFrame, base: pd.DataFrame) -> pd.DataFrame:
    """Per (layout, devices, rw): ``best_bw_bytes`` over the other axes, ``best_bs``, ``best_numjobs``,
    ``best_iodepth``, ``baseline_bw_bytes`` and ``efficiency`` (the columns ``scaling.device_scaling`` reads)."""
    group = ["layout", "devices", "rw"]
    best = best_with_efficiency(frame, base, group)
    return best[[*group, "best_bw_bytes", "best_bs", "best_numjobs", "best_iodepth", "baseline_bw_bytes",
                 "efficiency"]]


def best_by_bs(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (layout, devices, rw, bs): the point with the most bandwidth over numjobs and iodepth, with its IOPS."""
    return best_points(point_means(frame), ["layout", "devices", "rw", "bs"])


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
