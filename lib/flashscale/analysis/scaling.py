"""Scaling laws, the saturation knee and device scaling.

Pure functions. Throughput X against concurrency N (numjobs, iodepth or devices):

    USL      X(N) = lambda N / (1 + sigma (N - 1) + kappa N (N - 1))     sigma contention, kappa coherency
    Amdahl   X(N) = lambda N / (1 + sigma (N - 1))                       the USL with kappa = 0

Fits use ``scipy.optimize.curve_fit`` (trust-region reflective, bounds lambda > 0, 0 <= sigma <= 1, kappa >= 0) on
throughput scaled to its maximum; parameter intervals are t intervals from the covariance (n - p degrees of
freedom), clipped to the bounds. The USL peak is at N* = sqrt((1 - sigma) / kappa); its interval comes from the
delta method. With kappa = 0 there is no peak: throughput rises towards lambda / sigma, and the peak is reported
as N* = inf with that asymptote.

A fit is refused, as an explicit ``Fit(fitted=False, reason=...)``, never an exception or a silent number, when
the points cannot support it: NaN or inf, N <= 0, negative or all-zero throughput, identical throughput at every
N (flat: nothing to fit), or fewer distinct N than parameters + 1 (no degree of freedom left for an interval).

The knee is model-free: the smallest N whose throughput reaches ``fraction`` (default 0.95) of the plateau, the
largest throughput measured along the curve. ``Fit.knee`` gives the same from the fitted curve.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Callable, Iterable

import numpy as np
import pandas as pd
from scipy import stats as sps
from scipy.optimize import curve_fit

from .core import point_means
from ..errors import AnalysisError

NAN = float("nan")
# The columns ``flashscale analyze --fit`` adds to the summary (``fit_table`` with the default axis numjobs).
FIT_COLUMNS = [
    "knee_numjobs", "usl_sigma", "usl_sigma_lo", "usl_sigma_hi", "usl_kappa", "usl_kappa_lo", "usl_kappa_hi",
    "usl_peak_numjobs", "usl_peak_numjobs_lo", "usl_peak_numjobs_hi", "usl_r2", "fit_note",
]


def usl(n, lam, sigma, kappa):
    """Universal Scalability Law throughput at concurrency ``n``."""
    n = np.asarray(n, dtype=float)
    return lam * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))


def amdahl(n, lam, sigma):
    """Amdahl's law throughput at concurrency ``n`` (the USL with kappa = 0)."""
    return usl(n, lam, sigma, 0.0)


@dataclass(frozen=True)
class Model:
    name: str
    function: Callable
    params: tuple[str, ...]
    lower: tuple[float, ...]
    upper: tuple[float, ...]


MODELS = {
    "usl": Model("usl", usl, ("lam", "sigma", "kappa"), (0.0, 0.0, 0.0), (np.inf, 1.0, np.inf)),
    "amdahl": Model("amdahl", amdahl, ("lam", "sigma"), (0.0, 0.0), (np.inf, 1.0)),
}


@dataclass(frozen=True)
class Fit:
    """A scaling-law fit, or the stated reason there is none (``fitted`` false, ``reason`` says why; on a fit,
    ``reason`` carries any notes, e.g. an unestablished peak). ``lam`` is in the unit of y per unit of N."""

    model: str
    fitted: bool
    reason: str = ""
    n_points: int = 0
    params: dict[str, float] = field(default_factory=dict)
    lo: dict[str, float] = field(default_factory=dict)
    hi: dict[str, float] = field(default_factory=dict)
    r2: float = NAN
    peak_n: float = NAN
    peak_n_lo: float = NAN
    peak_n_hi: float = NAN
    peak_y: float = NAN

    def predict(self, n) -> np.ndarray:
        if not self.fitted:
            raise AnalysisError(f"{self.model} not fitted: {self.reason}")
        return MODELS[self.model].function(n, *(self.params[p] for p in MODELS[self.model].params))

    def knee(self, fraction: float = 0.95) -> float:
        """Smallest N where the fitted curve reaches ``fraction`` of its peak (or of its asymptote)."""
        if not self.fitted:
            return NAN
        lam, sigma = self.params["lam"], self.params["sigma"]
        kappa = self.params.get("kappa", 0.0)
        if np.isfinite(self.peak_n) and kappa > 0:
            target = fraction * self.peak_y  # lam N = target (1 + sigma (N-1) + kappa N (N-1)), a quadratic in N
            roots = np.roots([target * kappa, target * (sigma - kappa) - lam, target * (1 - sigma)])
            real = sorted(r.real for r in roots if abs(r.imag) < 1e-9 * max(1.0, abs(r.real)) and r.real > 0)
            return float(real[0]) if real else NAN
        if sigma > 0:  # Amdahl: lam N / (1 + sigma (N-1)) = fraction lam / sigma
            return float(fraction * (1 - sigma) / (sigma * (1 - fraction)))
        return float("inf")  # linear: no plateau to reach

    def as_row(self, prefix: str) -> dict[str, float]:
        row = {}
        for p in MODELS[self.model].params:
            name = f"{prefix}_{'lambda_bw_bytes' if p == 'lam' else p}"
            row[name] = self.params.get(p, NAN)
            row[f"{name}_lo"] = self.lo.get(p, NAN)
            row[f"{name}_hi"] = self.hi.get(p, NAN)
        row[f"{prefix}_r2"] = self.r2
        return row


def point_problem(n: np.ndarray, y: np.ndarray) -> str:
    """What makes these points unusable for any scaling question; '' when nothing does."""
    if n.size == 0:
        return "no points"
    if n.size != y.size:
        return f"{n.size} N values against {y.size} throughput values"
    if not (np.all(np.isfinite(n)) and np.all(np.isfinite(y))):
        return f"NaN or inf among the points at N = {n[~(np.isfinite(n) & np.isfinite(y))].tolist()}"
    if np.any(n <= 0):
        return f"N must be positive; got {n[n <= 0].tolist()}"
    if np.any(y < 0):
        return f"negative throughput at N = {n[y < 0].tolist()}"
    if np.all(y == 0):
        return "all throughput is zero"
    return ""


def refusal(model: Model, n: np.ndarray, y: np.ndarray) -> str:
    """Why these points cannot support a fit of ``model``; '' when they can."""
    problem = point_problem(n, y)
    if problem:
        return problem
    distinct = np.unique(n).size
    if distinct < len(model.params) + 1:
        return (f"too few points: {distinct} distinct N, {model.name} needs at least {len(model.params) + 1} "
                f"({len(model.params)} parameters + 1 for their uncertainty)")
    if np.ptp(y) <= 1e-9 * np.max(y):
        return f"throughput is flat ({np.max(y):.6g} at every N): nothing to fit"
    return ""


def _curve_fit(model: Model, n: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[str]]:
    first = n == n.min()
    lam0 = max(float(ys[first].mean()) / float(n.min()), 1e-6)
    p0 = [lam0, 0.05, 1e-4][: len(model.params)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        popt, pcov = curve_fit(model.function, n, ys, p0=p0, bounds=(model.lower, model.upper),
                               x_scale="jac", max_nfev=20000)
    return popt, pcov, [str(w.message) for w in caught]


def _usl_peak(params: dict[str, float], cov: np.ndarray, t: float) -> tuple[float, float, float]:
    """N* = sqrt((1 - sigma) / kappa) and its delta-method interval; inf when kappa = 0."""
    sigma, kappa = params["sigma"], params.get("kappa", 0.0)
    if kappa <= 0 or sigma >= 1:
        return (float("inf"), NAN, NAN)
    peak = float(np.sqrt((1 - sigma) / kappa))
    grad = np.array([-0.5 / np.sqrt((1 - sigma) * kappa), -0.5 * np.sqrt(1 - sigma) / kappa ** 1.5])
    var = float(grad @ cov[1:3, 1:3] @ grad) if np.all(np.isfinite(cov[1:3, 1:3])) else NAN
    if not np.isfinite(var) or var < 0:
        return (peak, NAN, NAN)
    half = t * np.sqrt(var)
    return (peak, float(max(peak - half, 1.0)), float(peak + half))


def fit(model_name: str, n, y, confidence: float = 0.95) -> Fit:
    """Fit ``model_name`` ('usl' or 'amdahl') to throughput ``y`` against concurrency ``n``."""
    if model_name not in MODELS:
        raise AnalysisError(f"scaling model {model_name!r} is unknown; expected one of {sorted(MODELS)}")
    if not 0.0 < confidence < 1.0:
        raise AnalysisError(f"confidence {confidence!r} must lie strictly between 0 and 1")
    model = MODELS[model_name]
    n, y = np.asarray(n, dtype=float).ravel(), np.asarray(y, dtype=float).ravel()
    reason = refusal(model, n, y)
    if reason:
        return Fit(model_name, False, reason, int(n.size))
    scale = float(np.max(y))
    try:
        popt, pcov, notes = _curve_fit(model, n, y / scale)
    except (RuntimeError, ValueError) as err:
        return Fit(model_name, False, f"the fit did not converge: {err}", int(n.size))
    unscale = np.r_[scale, np.ones(len(popt) - 1)]  # only lambda carries the unit of y
    popt, pcov = popt * unscale, pcov * np.outer(unscale, unscale)
    t = float(sps.t.ppf((1 + confidence) / 2, n.size - len(popt)))
    usable = np.all(np.isfinite(pcov)) and np.all(np.diag(pcov) >= 0)
    se = np.sqrt(np.diag(pcov)) if usable else np.full(len(popt), NAN)
    lo = np.clip(popt - t * se, model.lower, model.upper)
    hi = np.clip(popt + t * se, model.lower, model.upper)
    params = dict(zip(model.params, map(float, popt)))
    residual = y - model.function(n, *popt)
    r2 = 1.0 - float(residual @ residual) / float(((y - y.mean()) ** 2).sum())
    peak_n, peak_lo, peak_hi = _usl_peak(params, pcov, t)
    if "kappa" in params and np.isfinite(peak_n) and not lo[2] > 0:
        peak_hi = float("inf")
        notes.append("kappa's interval reaches 0: no peak is established (the curve may rise for ever)")
    peak_y = float(model.function(peak_n, *popt)) if np.isfinite(peak_n) else (
        params["lam"] / params["sigma"] if params["sigma"] > 0 else float("inf"))
    note = "; ".join(dict.fromkeys(notes))
    return Fit(model_name, True, note, int(n.size), params, dict(zip(model.params, map(float, lo))),
               dict(zip(model.params, map(float, hi))), r2, peak_n, peak_lo, peak_hi, peak_y)


def fit_usl(n, y, confidence: float = 0.95) -> Fit:
    return fit("usl", n, y, confidence)


def fit_amdahl(n, y, confidence: float = 0.95) -> Fit:
    return fit("amdahl", n, y, confidence)


def knee(n, y, fraction: float = 0.95) -> float:
    """The smallest N whose throughput reaches ``fraction`` of the plateau (the largest throughput measured)."""
    if not 0.0 < fraction <= 1.0:
        raise AnalysisError(f"knee fraction {fraction!r} must lie in (0, 1]")
    n, y = np.asarray(n, dtype=float).ravel(), np.asarray(y, dtype=float).ravel()
    problem = point_problem(n, y)
    if problem:
        raise AnalysisError(f"no knee: {problem}")
    return float(np.min(n[y >= fraction * np.max(y)]))


def scaling_curve(frame: pd.DataFrame, axis: str = "numjobs", by: Iterable[str] = ()) -> pd.DataFrame:
    """Per (layout, devices, rw[, by], axis): the best point mean over the other sweep axes (the envelope)."""
    if axis not in ("numjobs", "iodepth", "bs"):
        raise AnalysisError(f"scaling axis {axis!r} is unknown; expected 'numjobs', 'iodepth' or 'bs'")
    group = ["layout", "devices", "rw", *by, axis]
    points = point_means(frame)
    best = points.loc[points.groupby(group, sort=True, observed=True)["bw_bytes"].idxmax()]
    return best[[*dict.fromkeys(group), "bw_bytes"]].reset_index(drop=True)


def _curve_row(n: np.ndarray, y: np.ndarray, axis: str, fraction: float, confidence: float) -> dict:
    """Knee, USL and Amdahl fits of one curve as flat columns."""
    usl_fit, amdahl_fit = fit_usl(n, y, confidence), fit_amdahl(n, y, confidence)
    try:
        observed_knee = knee(n, y, fraction)
    except AnalysisError:
        observed_knee = NAN
    notes = [f"{f.model}: {'not fitted, ' if not f.fitted else ''}{f.reason}"
             for f in (usl_fit, amdahl_fit) if f.reason]
    return {
        "points": int(n.size), "plateau_bw_bytes": float(np.max(y)) if y.size else NAN, f"knee_{axis}": observed_knee,
        **usl_fit.as_row("usl"),
        f"usl_peak_{axis}": usl_fit.peak_n, f"usl_peak_{axis}_lo": usl_fit.peak_n_lo,
        f"usl_peak_{axis}_hi": usl_fit.peak_n_hi, "usl_peak_bw_bytes": usl_fit.peak_y,
        f"usl_knee_{axis}": usl_fit.knee(fraction),
        **amdahl_fit.as_row("amdahl"),
        "fit_note": "; ".join(notes),
    }


def fit_table(frame: pd.DataFrame, axis: str = "numjobs", by: Iterable[str] | str = (), fraction: float = 0.95,
              confidence: float = 0.95) -> pd.DataFrame:
    """Per (layout, devices, rw[, bs]): the knee along ``axis`` and the USL / Amdahl fits of the envelope curve.

    Columns: ``points``, ``plateau_bw_bytes``, ``knee_{axis}``, ``usl_lambda_bw_bytes``, ``usl_sigma``,
    ``usl_kappa`` (each with ``_lo`` / ``_hi``), ``usl_r2``, ``usl_peak_{axis}`` (``_lo`` / ``_hi``),
    ``usl_peak_bw_bytes``, ``usl_knee_{axis}``, the same for ``amdahl_*``, and ``fit_note`` with the reason of any
    refusal (NaN values then, never a number the points cannot support)."""
    by_cols = [by] if isinstance(by, str) else list(by)
    if any(b != "bs" for b in by_cols):
        raise AnalysisError(f"unknown by value(s) {by_cols!r}: expected a subset of ('bs',)")
    curve = scaling_curve(frame, axis, by_cols)
    group = ["layout", "devices", "rw", *by_cols]
    rows = [
        {**dict(zip(group, key)),
         **_curve_row(g[axis].to_numpy(float), g["bw_bytes"].to_numpy(float), axis, fraction, confidence)}
        for key, g in curve.groupby(group, sort=True, observed=True)
    ]
    return pd.DataFrame(rows).astype({c: curve[c].dtype for c in group})


def device_scaling(summary: pd.DataFrame, include_baseline: bool = True, confidence: float = 0.95) -> pd.DataFrame:
    """Per (layout, rw[, bs]) of an ``analysis.summarize`` table: best aggregate against the number of devices.

    ``slope_bw_bytes_per_device`` is the least-squares slope through the origin, sum(N X) / sum(N^2);
    ``slope_efficiency`` divides it by the single-device baseline (1.0 = every device adds a full baseline).
    With ``include_baseline`` the baseline is the point at N = 1 for a layout measured only at more devices.
    The USL is fitted against devices where there are enough device counts (``fit_note`` says when not)."""
    group = ["layout", "rw", *(["bs"] if "bs" in summary.columns else [])]
    rows = []
    for key, g in summary.groupby(group, sort=True, observed=True):
        n, y = g["devices"].to_numpy(float), g["best_bw_bytes"].to_numpy(float)
        base = float(g["baseline_bw_bytes"].iloc[0])
        if include_baseline and 1 not in n:
            n, y = np.r_[1.0, n], np.r_[base, y]
        slope = float((n * y).sum() / (n * n).sum())
        usl_fit = fit_usl(n, y, confidence)
        at_max = g.loc[g["devices"].idxmax()]
        rows.append({
            **dict(zip(group, key)), "device_counts": int(np.unique(n).size), "max_devices": int(n.max()),
            "slope_bw_bytes_per_device": slope, "slope_efficiency": slope / base,
            "efficiency_at_max": float(at_max["efficiency"]), **usl_fit.as_row("usl"),
            "usl_peak_devices": usl_fit.peak_n,
            "fit_note": "" if usl_fit.fitted else f"usl: not fitted, {usl_fit.reason}",
        })
    return pd.DataFrame(rows)
