"""The per-point tables of the study notebooks, and their findings in words.

Pure functions on the tidy results table (``flashscale.results``) and on ``analysis.baseline`` tables: no I/O, no
plotting, inputs never mutated. Bandwidth in bytes/s; sentences in MB/s (1 MB = 1e6 bytes).

    point_efficiency(frame, base)   every point: mean bandwidth / (devices x baseline)
    best_by_devices(frame, base)    per (layout, devices, rw): the best point and its efficiency
    tax_by_threads(frame, ref)      per (layout, devices, rw, numjobs): tax against ``ref`` at the same numjobs
    consistency(taxes)              per (layout, rw): how much that tax moves across thread counts
    winners(best)                   per rw: the layout with the most bandwidth on the most devices
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .core import MB, _bs_text, best_points, best_with_efficiency, point_means, summarize, with_efficiency
from ..errors import AnalysisError
from .scaling import scaling_curve

BEST = ["layout", "devices", "rw"]


def point_efficiency(frame: pd.DataFrame, base: pd.DataFrame) -> pd.DataFrame:
    """Every sweep point (mean over repetitions) with ``baseline_bw_bytes`` and ``efficiency``."""
    return with_efficiency(point_means(frame), base)


def best_by_devices(frame: pd.DataFrame, base: pd.DataFrame) -> pd.DataFrame:
    """Per (layout, devices, rw): ``best_bw_bytes`` over the other axes, ``best_numjobs``, ``baseline_bw_bytes``
    and ``efficiency`` (the columns ``scaling.device_scaling`` reads)."""
    best = best_with_efficiency(frame, base, BEST)
    return best[[*BEST, "best_bw_bytes", "best_bs", "best_numjobs", "best_iodepth", "baseline_bw_bytes",
                 "efficiency"]]


def tax_by_threads(frame: pd.DataFrame, reference: str) -> pd.DataFrame:
    """Per (layout, devices, rw, numjobs): the best bandwidth over bs and iodepth, the reference's at the same
    devices, rw and numjobs, and ``tax`` = 1 - bw / reference (NaN where the reference was not measured)."""
    best = scaling_curve(frame, "numjobs")
    if reference not in set(best["layout"]):
        raise AnalysisError(f"reference layout {reference!r} is not in the results")
    keys = ["devices", "rw", "numjobs"]
    ref = best[best["layout"] == reference].drop(columns="layout").rename(columns={"bw_bytes": "reference_bw_bytes"})
    out = best.merge(ref, on=keys, how="left", validate="many_to_one")
    out["tax"] = 1.0 - out["bw_bytes"] / out["reference_bw_bytes"]
    return out


def consistency(taxes: pd.DataFrame) -> pd.DataFrame:
    """Per (layout, devices, rw): tax at its lowest and highest over thread counts, their spread, and the
    coefficient of variation of bandwidth across thread counts."""
    grouped = taxes.groupby(["layout", "devices", "rw"], sort=True, observed=True)
    out = grouped.agg(tax_min=("tax", "min"), tax_max=("tax", "max"), thread_counts=("numjobs", "nunique"),
                      bw_mean=("bw_bytes", "mean"), bw_std=("bw_bytes", "std")).reset_index()
    out["tax_spread"] = out["tax_max"] - out["tax_min"]
    out["bw_cv_over_threads"] = out["bw_std"] / out["bw_mean"]
    return out.drop(columns=["bw_mean", "bw_std"])


def winners(best: pd.DataFrame) -> pd.DataFrame:
    """Per rw, on the largest device count measured: the layout with the most bandwidth and its margin over the
    runner-up (NaN when only one layout was measured)."""
    rows = []
    for rw, group in best.groupby("rw", sort=True, observed=True):
        top = group[group["devices"] == group["devices"].max()].sort_values("best_bw_bytes", ascending=False)
        margin = top["best_bw_bytes"].iloc[0] / top["best_bw_bytes"].iloc[1] - 1 if len(top) > 1 else np.nan
        rows.append({"rw": rw, "devices": int(top["devices"].iloc[0]), "winner": top["layout"].iloc[0],
                     "best_bw_bytes": float(top["best_bw_bytes"].iloc[0]),
                     "runner_up": top["layout"].iloc[1] if len(top) > 1 else "", "margin": margin})
    return pd.DataFrame(rows)


def baseline_sentences(base: pd.DataFrame, baseline_bs: int) -> list[str]:
    return [f"The baseline for {r.rw} is {r.baseline_bw_bytes / MB:,.0f} MB/s: the best single-device point at "
            f"{_bs_text(baseline_bs)}, reached with {r.baseline_numjobs} job(s) at queue depth {r.baseline_iodepth}."
            for r in base.itertuples()]


def winner_sentences(won: pd.DataFrame, checks: pd.DataFrame) -> list[str]:
    """The winner per rw, and how steady each layout's tax is across thread counts (``consistency``)."""
    out = []
    for r in won.itertuples():
        margin = f", {r.margin:.0%} ahead of {r.runner_up}" if np.isfinite(r.margin) else ""
        out.append(f"For {r.rw} on {r.devices} devices, {r.winner} wins with {r.best_bw_bytes / MB:,.0f} MB/s"
                   f"{margin}.")
    for r in checks.itertuples():
        if r.thread_counts > 1 and np.isfinite(r.tax_spread):
            out.append(f"{r.layout} {r.rw}: tax between {r.tax_min:.1%} and {r.tax_max:.1%} over "
                       f"{r.thread_counts} thread counts ({'steady' if r.tax_spread < 0.1 else 'it moves'}).")
    return out


def efficiency_sentences(best: pd.DataFrame) -> list[str]:
    return [f"{r.layout} on {r.devices} device(s) reaches {r.efficiency:.0%} of {r.devices} x the baseline for "
            f"{r.rw} ({r.best_bw_bytes / MB:,.0f} MB/s with {r.best_numjobs} job(s))." for r in best.itertuples()]


def best_by_bs(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (layout, devices, rw, bs): the point with the most bandwidth over numjobs and iodepth, with its IOPS."""
    return best_points(point_means(frame), ["layout", "devices", "rw", "bs"])


def layout_summary(frame: pd.DataFrame, base: pd.DataFrame, reference: str) -> pd.DataFrame:
    """``best_by_devices`` plus ``tax`` = 1 - best / best of ``reference`` on the same devices (the study's
    baseline ``base``, measured by 01_baseline)."""
    return summarize(frame, reference, base=base)


def knee_sentences(fits: pd.DataFrame) -> list[str]:
    """One sentence per curve of ``scaling.fit_table(..., axis="numjobs")``: the knee and the USL fit."""
    out = []
    for r in fits.itertuples():
        fit = (f"the USL fit gives contention sigma = {r.usl_sigma:.3f} and coherency kappa = {r.usl_kappa:.4f}"
               if np.isfinite(r.usl_sigma) else f"no scaling law was fitted ({r.fit_note})")
        out.append(f"{r.layout} on {r.devices} device(s), {r.rw}: 95% of the plateau "
                   f"({r.plateau_bw_bytes / MB:,.0f} MB/s) is reached at {r.knee_numjobs:.0f} job(s); {fit}.")
    return out


def device_sentences(scaling_rows: pd.DataFrame) -> list[str]:
    """From ``scaling.device_scaling``: what each added device brings, as a fraction of the baseline."""
    return [f"{r.layout} {r.rw}: each device adds {r.slope_bw_bytes_per_device / MB:,.0f} MB/s, "
            f"{r.slope_efficiency:.0%} of the baseline, up to {r.max_devices} devices." for r in scaling_rows.itertuples()]


def latency_sentences(points: pd.DataFrame) -> list[str]:
    """Peak IOPS per (rw, bs) and what the deepest queue costs in tail latency (``latency.by_point`` rows)."""
    out = []
    for (rw, bs), group in points.groupby(["rw", "bs"], sort=True):
        top = group.loc[group["iops"].idxmax()]
        low = group.loc[group["iodepth"].idxmin()]
        out.append(f"{rw} {_bs_text(int(bs))}: {top['iops']:,.0f} IOPS at most (queue depth {int(top['iodepth'])}, "
                   f"{top['bw_bytes'] / MB:,.0f} MB/s); p99 completion latency {top['clat_p99_ns'] / 1e3:,.0f} us "
                   f"there against {low['clat_p99_ns'] / 1e3:,.0f} us at queue depth {int(low['iodepth'])}.")
    return out
