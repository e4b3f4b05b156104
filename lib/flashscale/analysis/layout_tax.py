"""Layouts against each other on the same devices: the tax at every thread count, how steady it is, and the
layout that wins.

Pure functions on the tidy results table and on ``core.summarize`` tables; tax as ``core.tax`` defines it.

    tax_by_threads(frame, ref)   per (layout, devices, rw, numjobs): tax against ``ref`` at the same numjobs, its
                                 verdict and interval (``stats.tax_tests`` of the repetitions) and ``reps``
    consistency(taxes)           per (layout, devices, rw): how much that tax moves across thread counts
    winners(best)                per rw: the layout with the most bandwidth on the most devices
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from . import drift, stand_in
from .baseline_and_tax import with_tax
from ..errors import AnalysisError
from .scaling import scaling_curve, scaling_repetitions
from .significance import DEFAULT_MARGIN
from .stats import tax_tests


def tax_by_threads(frame: pd.DataFrame, reference: str, margin: float = DEFAULT_MARGIN,
                   source: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per (layout, devices, rw, numjobs): the best bandwidth over bs and iodepth, the reference's at the same
    devices, rw and numjobs (``reference_bw_bytes``) and ``tax`` (NaN where the reference was not measured);
    ``tax_verdict``, ``tax_lo`` and ``tax_hi`` from ``stats.tax_tests`` of the row's repetitions against the
    reference's at the same numjobs, read against ``margin`` ('reference', 0, 0 on the reference's rows;
    'unknown', NaN, NaN without a reference row), ``reps``, the row's repetitions, and ``reference``. A jbod
    ``reference`` that was not measured: N x single at the same numjobs (``stand_in``, from ``source``'s single
    device, by default ``frame``'s), its own rows left out."""
    asked = reference
    frame, reference = stand_in.resolve(frame, reference, source)
    best = scaling_curve(frame, "numjobs")
    if reference not in set(best["layout"]):
        raise AnalysisError(f"reference layout {reference!r} is not in the results")
    keys = ["devices", "rw", "numjobs"]
    out = with_tax(best, reference, keys, bw="bw_bytes")
    brackets = drift.bracket_rates(frame)
    tests = tax_tests(out, scaling_repetitions(frame, "numjobs"), reference, keys, point={},  # numjobs: a key
                      margin=margin, brackets=scaling_repetitions(frame, "numjobs", runs=brackets)
                      if not brackets.empty else None)
    tested = tests[["tax_verdict", "tax_lo", "tax_hi", "tax_margin", "best_reps"]].rename(columns={"best_reps": "reps"})
    out = pd.concat([out, tested], axis=1).assign(reference=reference)
    return out if reference == asked else out[out["layout"] != reference].reset_index(drop=True)


def consistency(taxes: pd.DataFrame) -> pd.DataFrame:
    """Per (layout, devices, rw): tax at its lowest and highest over thread counts, their spread, the
    coefficient of variation of bandwidth across thread counts, and (from ``tax_verdict``) at how many thread
    counts the tax was tested (``taxes_tested``) and found beyond the margin (``taxes_real``: a tax or a gain)."""
    grouped = taxes.groupby(["layout", "devices", "rw"], sort=True, observed=True)
    values = dict(tax_min=("tax", "min"), tax_max=("tax", "max"), thread_counts=("numjobs", "nunique"),
                  bw_mean=("bw_bytes", "mean"), bw_std=("bw_bytes", "std"))
    if "tax_verdict" in taxes.columns:
        values["taxes_real"] = ("tax_verdict", lambda v: int(v.isin(["tax", "gain"]).sum()))
        values["taxes_tested"] = ("tax_verdict",
                                  lambda v: int(v.isin(["tax", "gain", "equivalent", "inconclusive"]).sum()))
    out = grouped.agg(**values).reset_index()
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
