"""Repetition statistics and the intervals they put on efficiency and tax.

Pure functions on the tidy results table; warm-up rows are excluded (``analysis.measured``).

Intervals:

* ``t``: mean +/- t(1 - alpha/2, n - 1) * s / sqrt(n), the classic interval for the mean of n repetitions.
* ``bootstrap``: percentile bootstrap of the mean (``n_boot`` resamples, seeded ``numpy`` generator, so the same
  table always gives the same interval). With 2-3 repetitions it is narrower than ``t``: prefer ``t`` there.

A point with one repetition has no spread and gets NaN bounds, never a made-up interval.

Propagation to efficiency = best / (devices x baseline) and tax = 1 - best / reference uses interval
arithmetic on the two bounds: efficiency_lo = best_lo / (devices x baseline_hi), tax_lo = 1 - best_hi /
reference_lo, and so on. When both inputs are independent intervals at confidence c, the result covers the true
ratio with probability at least 1 - 2 (1 - c) (union bound): 90% for c = 0.95. Where both sides are the same
measurement (the reference's own tax, the baseline point's own efficiency) the value is exact and lo = hi.
The best point is the largest of several noisy means, so it is biased upwards (winner's curse); the interval
describes the repetitions of that point, not the selection.
"""
from __future__ import annotations

from typing import Iterable

import numpy as np
import pandas as pd
from scipy import stats as sps

from .core import BASELINE_BS, POINT, baseline, measured, summarize
from ..errors import ConfigError

METHODS = ("t", "bootstrap")


def _check(confidence: float, method: str) -> None:
    if not 0.0 < confidence < 1.0:
        raise ConfigError(f"confidence {confidence!r} must lie strictly between 0 and 1")
    if method not in METHODS:
        raise ConfigError(f"interval method {method!r} is unknown; expected one of {METHODS}")


def interval_t(values: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """t interval for the mean of ``values``; (nan, nan) with fewer than two values."""
    values = np.asarray(values, dtype=float)
    n = values.size
    if n < 2:
        return (np.nan, np.nan)
    mean = float(values.mean())
    half = float(sps.t.ppf((1 + confidence) / 2, n - 1)) * float(values.std(ddof=1)) / np.sqrt(n)
    return (mean - half, mean + half)


def interval_bootstrap(
    values: np.ndarray, confidence: float = 0.95, n_boot: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval for the mean; (nan, nan) with fewer than two values."""
    values = np.asarray(values, dtype=float)
    if values.size < 2:
        return (np.nan, np.nan)
    rng = np.random.default_rng(seed)
    means = rng.choice(values, size=(n_boot, values.size), replace=True).mean(axis=1)
    lo, hi = np.quantile(means, [(1 - confidence) / 2, (1 + confidence) / 2])
    return (float(lo), float(hi))


def describe(values: np.ndarray, confidence: float = 0.95, method: str = "t", n_boot: int = 2000,
             seed: int = 0) -> dict[str, float]:
    """n, mean, median, std (n - 1), coefficient of variation and interval of one point's repetitions."""
    _check(confidence, method)
    values = np.asarray(values, dtype=float)
    n = values.size
    mean = float(values.mean()) if n else np.nan
    std = float(values.std(ddof=1)) if n >= 2 else np.nan
    if method == "t":
        lo, hi = interval_t(values, confidence)
    else:
        lo, hi = interval_bootstrap(values, confidence, n_boot, seed)
    return {
        "reps": n, "mean": mean, "median": float(np.median(values)) if n else np.nan, "std": std,
        "cv": std / mean if n >= 2 and mean != 0 else np.nan, "lo": lo, "hi": hi,
    }


def repetition_stats(
    frame: pd.DataFrame, value: str = "bw_bytes", confidence: float = 0.95, method: str = "t",
    n_boot: int = 2000, seed: int = 0,
) -> pd.DataFrame:
    """Per sweep point: ``reps``, ``{value}`` (mean), ``{value}_median``, ``_std``, ``_cv``, ``_lo``, ``_hi``."""
    _check(confidence, method)
    rows = measured(frame)
    records = []
    for key, group in rows.groupby(POINT, sort=True, observed=True):
        d = describe(group[value].to_numpy(dtype=float), confidence, method, n_boot, seed)
        records.append({
            **dict(zip(POINT, key)), "reps": d["reps"], value: d["mean"], f"{value}_median": d["median"],
            f"{value}_std": d["std"], f"{value}_cv": d["cv"], f"{value}_lo": d["lo"], f"{value}_hi": d["hi"],
        })
    out = pd.DataFrame.from_records(records)
    return out.astype({c: rows[c].dtype for c in POINT})


def _point_bounds(reps: pd.DataFrame, keys: pd.DataFrame, prefix: str) -> pd.DataFrame:
    """The ``bw_bytes_lo/hi`` of the points named by ``keys`` (columns POINT), renamed with ``prefix``."""
    bounds = reps[[*POINT, "bw_bytes_lo", "bw_bytes_hi"]]
    out = keys.merge(bounds, on=POINT, how="left", validate="many_to_one")
    return out.rename(columns={"bw_bytes_lo": f"{prefix}_lo", "bw_bytes_hi": f"{prefix}_hi"})


def _best_bounds(summary: pd.DataFrame, reps: pd.DataFrame) -> pd.DataFrame:
    keys = summary[["layout", "devices", "rw", "best_bs", "best_numjobs", "best_iodepth"]].rename(
        columns={"best_bs": "bs", "best_numjobs": "numjobs", "best_iodepth": "iodepth"})
    return _point_bounds(reps, keys, "best_bw_bytes")[["best_bw_bytes_lo", "best_bw_bytes_hi"]]


def _baseline_bounds(frame: pd.DataFrame, reps: pd.DataFrame, baseline_bs: int) -> pd.DataFrame:
    base = baseline(frame, baseline_bs)
    keys = base.rename(columns={
        "baseline_layout": "layout", "baseline_numjobs": "numjobs", "baseline_iodepth": "iodepth"})
    keys = keys.assign(devices=1, bs=baseline_bs)[[*POINT]].astype({c: reps[c].dtype for c in POINT})
    out = _point_bounds(reps, keys, "baseline_bw_bytes")
    return out.rename(columns={"layout": "baseline_layout", "numjobs": "baseline_numjobs",
                               "iodepth": "baseline_iodepth"}).drop(columns=["devices", "bs"])


def _verdict(lo: float, hi: float) -> str:
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return "unknown"
    if lo > 0:
        return "tax"
    if hi < 0:
        return "gain"
    return "noise"


def summary_intervals(
    frame: pd.DataFrame, reference: str, baseline_bs: int = BASELINE_BS, by: Iterable[str] | str = (),
    confidence: float = 0.95, method: str = "t", n_boot: int = 2000, seed: int = 0,
) -> pd.DataFrame:
    """``analysis.summarize`` plus ``best_bw_bytes_lo/hi``, ``baseline_bw_bytes_lo/hi``, ``efficiency_lo/hi``,
    ``tax_lo/hi`` and ``tax_verdict`` ('tax', 'gain', 'noise' when the interval holds 0, 'unknown' when a bound
    is missing: one repetition, or no reference row)."""
    _check(confidence, method)
    by_cols = [by] if isinstance(by, str) else list(by)
    summary = summarize(frame, reference, baseline_bs, by_cols)
    reps = repetition_stats(frame, "bw_bytes", confidence, method, n_boot, seed)
    out = pd.concat([summary, _best_bounds(summary, reps)], axis=1)
    base = _baseline_bounds(frame, reps, baseline_bs)
    out = out.merge(base, on="rw", how="left", validate="many_to_one")
    own = ((out["devices"] == 1) & (out["layout"] == out["baseline_layout"]) & (out["best_bs"] == baseline_bs)
           & (out["best_numjobs"] == out["baseline_numjobs"]) & (out["best_iodepth"] == out["baseline_iodepth"]))
    out["efficiency_lo"] = (out["best_bw_bytes_lo"] / (out["devices"] * out["baseline_bw_bytes_hi"])).where(
        ~own, out["efficiency"])
    out["efficiency_hi"] = (out["best_bw_bytes_hi"] / (out["devices"] * out["baseline_bw_bytes_lo"])).where(
        ~own, out["efficiency"])
    keys = ["devices", "rw", *by_cols]
    ref = out.loc[out["layout"] == reference, [*keys, "best_bw_bytes_lo", "best_bw_bytes_hi"]].rename(
        columns={"best_bw_bytes_lo": "reference_bw_bytes_lo", "best_bw_bytes_hi": "reference_bw_bytes_hi"})
    out = out.merge(ref, on=keys, how="left", validate="many_to_one")
    is_ref = out["layout"] == reference
    out["tax_lo"] = (1.0 - out["best_bw_bytes_hi"] / out["reference_bw_bytes_lo"]).where(~is_ref, 0.0)
    out["tax_hi"] = (1.0 - out["best_bw_bytes_lo"] / out["reference_bw_bytes_hi"]).where(~is_ref, 0.0)
    out["tax_verdict"] = [_verdict(lo, hi) for lo, hi in zip(out["tax_lo"], out["tax_hi"])]
    out.loc[is_ref, "tax_verdict"] = "reference"
    drop = ["baseline_layout", "baseline_numjobs", "baseline_iodepth"]
    return out.drop(columns=drop)
