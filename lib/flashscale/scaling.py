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

from .analysis import point_means
from .errors import AnalysisError

NAN = float("nan")


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
    """A scaling-law fit, or the stated reason there is none. ``lam`` is in the unit of y per unit of N."""

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
            name = f"{prefix}_{'lambda' if p == 'lam' else p}"
            row[name] = self.params.get(p, NAN)
            row[f"{name}_lo"] = self.lo.get(p, NAN)
            row[f"{name}_hi"] = self.hi.get(p, NAN)
        row[f"{prefix}_r2"] = self.r2
        return row


def refusal(model: Model, n: np.ndarray, y: np.ndarray) -> str:
    """Why these points cannot support a fit of ``model``; '' when they can."""
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
    return (peak, max(peak - half, 1.0), peak + half)


def fit(model_name: str, n, y, confidence: float = 0.95) -> Fit:
    """Fit ``model_name`` ('usl' or 'amdahl') to throughput ``y`` against concurrency ``n``."""
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
    popt = popt * np.r_[scale, np.ones(len(popt) - 1)]
    pcov = pcov * np.outer(np.r_[scale, np.ones(len(popt) - 1)], np.r_[scale, np.ones(len(popt) - 1)])
    t = float(sps.t.ppf((1 + confidence) / 2, n.size - len(popt)))
    se = np.sqrt(np.diag(pcov)) if np.all(np.isfinite(pcov)) and np.all(np.diag(pcov) >= 0) else np.full(len(popt), NAN)
    lo = np.clip(popt - t * se, model.lower, model.upper)
    hi = np.clip(popt + t * se, model.lower, model.upper)
    params = dict(zip(model.params, map(float, popt)))
    residual = y - model.function(n, *popt)
    r2 = 1.0 - float(residual @ residual) / float(((y - y.mean()) ** 2).sum())
    peak_n, peak_lo, peak_hi = _usl_peak(params, pcov, t)
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
    reason = refusal(MODELS["amdahl"], n, y)
    if reason and not reason.startswith(("too few points", "throughput is flat")):
        raise AnalysisError(f"no knee: {reason}")
    return float(np.min(n[y >= fraction * np.max(y)]))


def scaling_curve(frame: pd.DataFrame, axis: str = "numjobs", by: Iterable[str] = ()) -> pd.DataFrame:
    """Per (layout, devices, rw[, by], axis): the best point mean over the other sweep axes (the envelope)."""
    if axis not in ("numjobs", "iodepth", "bs"):
        raise AnalysisError(f"scaling axis {axis!r} is unknown; expected 'numjobs', 'iodepth' or 'bs'")
    group = ["layout", "devices", "rw", *by, axis]
    points = point_means(frame)
    best = points.loc[points.groupby(group, sort=True, observed=True)["bw_bytes"].idxmax()]
    return best[[*dict.fromkeys(group), "bw_bytes"]].reset_index(drop=True)
