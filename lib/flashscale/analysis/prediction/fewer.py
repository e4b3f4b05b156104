"""Scaling from fewer devices: a layout measured at several device counts, its larger counts predicted from those up to
K (``flashscale analyze --predict --calibrate-up-to K``), and the K from which that prediction holds.

    calibrated(frame, k)        per layout, rw, bs, iodepth and load (``DESIGNS``): Amdahl's law over the device count
                                (``analysis.scaling.fit_amdahl``, every run) fitted to the counts up to ``k``, each
                                larger count measured predicted with the interval the fit's parameters allow, and
                                scored (``error``, ``interval_meets``)
    holds_from(frame, within)   per layout and rw: the least K from which every larger count is predicted within
                                ``within`` (5%), trying every K the table allows

The law: X(N) = lambda N / (1 + sigma (N - 1)), sigma the share of the work that does not spread over devices (a host
term: what the devices share); sigma 0 is N x one device. The interval: the least and the most X(N) over the corners
of lambda's and sigma's t intervals (the fit's own, ``Fit.lo``/``hi``): the curve's, so a point is scored against it
widened by its own measurement's run noise (``conformal.held_to_model``: a prediction interval). A count of one device is the layout's own
one-device rows, else the single-device baseline's (``curve.single_rows``) at the same rw, bs, iodepth and jobs. A fit
needs three distinct counts up to K (two parameters and a degree of freedom): fewer, and the group is said, not fitted.

Two designs of load, as studies run them (``DESIGNS``): the same jobs on each device at every count (a load per
device: numjobs grows with N), or the same jobs in all at every count, spread over the N devices (one job over a
filename list of N devices, the same numjobs and iodepth at every N: a fixed total load). Each measured point is
predicted in the design whose group holds it with the most counts up to K, the load per device where both do: a
sweep of numjobs 1, 4 and 16 at 1, 4 and 16 devices has each point in both, and a fixed total load's points in the
per-device design alone would each be a group of one count ("no fit: no points").
"""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from .. import baseline_and_tax, scaling
from . import bounds, conformal
from .curve import single_rows
from ...errors import AnalysisError, ConfigError

GROUP = ["layout", "rw", "bs", "iodepth", "design", "jobs"]
DESIGNS = ("a device", "in all")  # jobs: numjobs / devices (a load per device), or numjobs (a fixed total load)
WITHIN = 0.05  # the "holds within 5%"


def _with_baseline(frame: pd.DataFrame) -> pd.DataFrame:
    """The rated rows with ``jobs_per_device``; each layout of several devices without rows of its own at one device
    gets the single-device baseline's as its count of one."""
    rows = baseline_and_tax.rates(frame)
    try:
        base = single_rows(frame)
    except (AnalysisError, ConfigError):  # no baseline: the layouts' own counts only
        base = rows.iloc[0:0]
    parts = [rows]
    for layout, own in rows.groupby("layout", sort=True):
        if own["devices"].max() > 1 and not (own["devices"] == 1).any():
            parts.append(base.assign(layout=layout))
    rows = pd.concat(parts, ignore_index=True)
    return pd.concat([rows.assign(design=DESIGNS[0], jobs=rows["numjobs"] / rows["devices"]),
                      rows.assign(design=DESIGNS[1], jobs=rows["numjobs"].astype(float))], ignore_index=True)


def _corners(fit: scaling.Fit, n: float) -> tuple[float, float]:
    """The least and the most X(n) over the corners of lambda's and sigma's intervals."""
    values = [scaling.amdahl(n, lam, sigma) for lam, sigma in itertools.product(
        (fit.lo["lam"], fit.hi["lam"]), (fit.lo["sigma"], fit.hi["sigma"]))]
    finite = [v for v in values if np.isfinite(v)]
    return (min(finite), max(finite)) if finite else (np.nan, np.nan)


def calibrated(frame: pd.DataFrame, k: int, confidence: float = 0.95) -> pd.DataFrame:
    """Each count above ``k`` of each group (``GROUP``) predicted from the counts up to ``k`` and scored: ``devices``,
    ``numjobs``, ``calibrated_up_to``, ``predicted_bw_bytes``, ``predicted_lo_bw_bytes``, ``predicted_hi_bw_bytes``,
    ``measured_bw_bytes`` (the mean of its runs), ``error``, ``interval_meets``, ``sigma``, ``predicted_note`` (why a
    group has no prediction), ``design`` and ``jobs`` (the load it was predicted in: jobs a device, or in all; module
    doc); the fit's interval widened by the measurement's own run noise, and whether its mean lies inside
    (``conformal.held_to_model`` at ``confidence``: ``scored_lo_bw_bytes``, ``scored_hi_bw_bytes``,
    ``scored_inside``). ConfigError naming ``k`` where it is no whole number of at least 1."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ConfigError(f"--calibrate-up-to {k!r} must be a device count of at least 1")
    out = []
    for key, group in _with_baseline(frame).groupby(GROUP, sort=True):
        fewer, more = group[group["devices"] <= k], group[group["devices"] > k]
        if more.empty:
            continue
        counts = int(fewer["devices"].nunique())
        fit = scaling.fit_amdahl(fewer["devices"], fewer["bw_bytes"], confidence)
        for devices, runs in more.groupby("devices", sort=True):
            row = dict(zip(GROUP, key), devices=int(devices), numjobs=int(runs["numjobs"].iloc[0]),
                       calibrated_up_to=k, measured_bw_bytes=float(runs["bw_bytes"].mean()), counts=counts)
            if not fit.fitted:
                out.append(dict(row, predicted_bw_bytes=np.nan, predicted_lo_bw_bytes=np.nan,
                                predicted_hi_bw_bytes=np.nan, error=np.nan, interval_meets=pd.NA, sigma=np.nan,
                                predicted_note=f"no fit up to {k} devices: {fit.reason}"))
                continue
            point = float(fit.predict(float(devices)))
            lo, hi = _corners(fit, float(devices))
            low, high = float(runs["bw_bytes"].min()), float(runs["bw_bytes"].max())
            out.append(dict(row, predicted_bw_bytes=point, predicted_lo_bw_bytes=lo, predicted_hi_bw_bytes=hi,
                            error=row["measured_bw_bytes"] / point - 1, interval_meets=bounds.meets(low, high, lo, hi),
                            sigma=fit.params["sigma"], predicted_note=""))
    kept = _one_design_a_point(pd.DataFrame(out))
    return conformal.held_to_model(kept, frame, confidence) if len(kept) else kept


def _one_design_a_point(scored: pd.DataFrame) -> pd.DataFrame:
    """Each measured point once: in the design whose group had the most counts up to K, the load per device first
    (module doc)."""
    if scored.empty:
        return scored
    point = ["layout", "rw", "bs", "iodepth", "devices", "numjobs"]
    order = scored.assign(_first=scored["design"].map({d: i for i, d in enumerate(DESIGNS)}))
    order = order.sort_values([*point, "counts", "_first"], ascending=[True] * len(point) + [False, True],
                              kind="stable")
    kept = order.drop_duplicates(point, keep="first").sort_values(["layout", "rw", "bs", "iodepth", "design", "jobs",
                                                                    "devices"], kind="stable")
    return kept.drop(columns=["_first", "counts"]).reset_index(drop=True)


def holds_from(frame: pd.DataFrame, within: float = WITHIN, confidence: float = 0.95) -> pd.DataFrame:
    """Per layout and rw: ``holds_from`` the least K (a count the table measured, below its largest) from which
    every count above every K' >= K is predicted within ``within`` (NaN: from none), and ``worst_error`` at each K
    tried (``errors``, "K: error" joined by commas)."""
    rows = _with_baseline(frame)
    out = []
    for (layout, rw), group in rows.groupby(["layout", "rw"], sort=True):
        counts = sorted(group["devices"].unique())
        if len(counts) < 2:  # one count (the single device's own layout): nothing to scale
            continue
        worst = {}
        for k in counts[:-1]:
            scored = calibrated(frame, int(k), confidence)
            scored = scored[(scored["layout"] == layout) & (scored["rw"] == rw)] if len(scored) else scored
            if len(scored) and scored["error"].notna().any():
                worst[int(k)] = float(scored["error"].abs().max())
        holding = [k for k in worst if all(w <= within for kk, w in worst.items() if kk >= k)]
        out.append(dict(layout=layout, rw=rw, holds_from=min(holding) if holding else np.nan,
                        errors=", ".join(f"{k}: {100 * w:.1f}%" for k, w in worst.items())))
    return pd.DataFrame(out)
