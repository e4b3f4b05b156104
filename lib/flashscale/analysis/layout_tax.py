"""Layouts against each other on the same devices: the tax at every thread count, how steady it is, and the
layout that wins.

Pure functions on the tidy results table and on ``core.summarize`` tables; tax as ``core.tax`` defines it.

    tax_by_threads(frame, ref)   per (layout, devices, rw, numjobs): tax against ``ref`` at the same numjobs, its
                                 verdict and interval (``significance.tax_test`` of the repetitions) and ``reps``
    consistency(taxes)           per (layout, devices, rw): how much that tax moves across thread counts
    winners(best)                per rw: the layout with the most bandwidth on the most devices
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .core import with_tax
from ..errors import AnalysisError
from .scaling import scaling_curve, scaling_repetitions
from .significance import tax_test
from .stats import verdict

NAN = float("nan")


def tax_by_threads(frame: pd.DataFrame, reference: str) -> pd.DataFrame:
    """Per (layout, devices, rw, numjobs): the best bandwidth over bs and iodepth, the reference's at the same
    devices, rw and numjobs (``reference_bw_bytes``) and ``tax`` (NaN where the reference was not measured)."""
    best = scaling_curve(frame, "numjobs")
    if reference not in set(best["layout"]):
        raise AnalysisError(f"reference layout {reference!r} is not in the results")
    out = with_tax(best, reference, ["devices", "rw", "numjobs"], bw="bw_bytes")
    tests = pd.DataFrame(_verdicts(out, frame, reference), index=out.index,
                         columns=["tax_verdict", "tax_lo", "tax_hi", "reps"])
    return pd.concat([out, tests.astype({"tax_lo": "float64", "tax_hi": "float64", "reps": "int64"})], axis=1)


def _verdicts(taxes: pd.DataFrame, frame: pd.DataFrame, reference: str) -> list[tuple]:
    """Per row of ``tax_by_threads``: ``stats.verdict`` of the tax test of its repetitions against the reference's
    at the same devices, rw and numjobs ('reference' on the reference's rows, 'unknown' without a reference row),
    the test's interval (``tax_lo``, ``tax_hi``; 0 on the reference's rows, NaN untested) and the row's repetitions."""
    keys = ["layout", "devices", "rw", "numjobs"]
    reps = {key: g["bw_bytes"].to_numpy(float)
            for key, g in scaling_repetitions(frame, "numjobs").groupby(keys, sort=False)}
    out = []
    for r in taxes.itertuples(index=False):
        other, own = reps.get((reference, r.devices, r.rw, r.numjobs)), reps[(r.layout, r.devices, r.rw, r.numjobs)]
        if r.layout == reference or other is None:
            out.append(("reference", 0.0, 0.0, own.size) if r.layout == reference else ("unknown", NAN, NAN, own.size))
            continue
        test = tax_test(own, other)
        out.append((verdict(test), test.lo, test.hi, own.size))
    return out


def consistency(taxes: pd.DataFrame) -> pd.DataFrame:
    """Per (layout, devices, rw): tax at its lowest and highest over thread counts, their spread, the
    coefficient of variation of bandwidth across thread counts, and (from ``tax_verdict``) at how many thread
    counts the tax was tested (``taxes_tested``) and found distinguishable from the noise (``taxes_real``)."""
    grouped = taxes.groupby(["layout", "devices", "rw"], sort=True, observed=True)
    values = dict(tax_min=("tax", "min"), tax_max=("tax", "max"), thread_counts=("numjobs", "nunique"),
                  bw_mean=("bw_bytes", "mean"), bw_std=("bw_bytes", "std"))
    if "tax_verdict" in taxes.columns:
        values["taxes_real"] = ("tax_verdict", lambda v: int(v.isin(["tax", "gain"]).sum()))
        values["taxes_tested"] = ("tax_verdict", lambda v: int(v.isin(["tax", "gain", "noise"]).sum()))
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
