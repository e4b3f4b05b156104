"""Scaling laws, the saturation knee and device scaling.

Pure functions. Throughput X against concurrency N (numjobs, iodepth or devices):

    USL      X(N) = lambda N / (1 + sigma (N - 1) + kappa N (N - 1))     sigma contention, kappa coherency
    Amdahl   X(N) = lambda N / (1 + sigma (N - 1))                       the USL with kappa = 0

Noise on throughput is relative (a run is a few per cent off whatever its level), so the fits are least squares
on log throughput (``scipy.optimize.least_squares``, trust-region reflective) over every repetition, with
theta = (log lambda, sigma, kappa), bounds 0 <= sigma <= 1 and kappa >= 0. Parameter intervals are t intervals
from the log-space covariance s^2 (J'J)^-1 (repetitions - parameters degrees of freedom), clipped to the bounds:
a parameter at its bound gets lo = 0. Measured on a 1 ... 64 grid in powers of two, 3 repetitions, 2% noise
(tests/test_scaling.py): sigma, kappa and the peak are covered 93-96% of the time at 95%.

The USL peak N* = sqrt((1 - sigma) / kappa) is only claimed when kappa's interval excludes 0; otherwise the curve
may rise for ever, N* = inf, throughput tends to lambda / sigma, and ``peak_n_lo`` is the smallest peak kappa's
interval allows. Pure Amdahl curves get a finite peak in 1-5% of draws (at most 5% expected at 95%). Its
interval comes from that of u = kappa / (1 - sigma) = N*^-2. A finite peak beyond the largest N measured is an
extrapolation, and ``Fit.peak_extrapolated`` and ``fit_table``'s ``usl_peak_extrapolated`` say so.

A fit is refused, as an explicit ``Fit(fitted=False, reason=...)``, never an exception or a silent number, when
the points cannot support it: NaN or inf, N <= 0, negative or zero throughput, identical throughput at every
N (flat: nothing to fit), or fewer distinct N than parameters + 1 (no degree of freedom left for an interval).

The knee is model-free and lives in ``analysis.plateau``: the smallest N whose mean throughput reaches
``fraction`` (default 0.95) of the plateau, NaN when the curve is still rising clearly at its largest N.
``Fit.knee`` gives the knee of the fitted curve.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable

import numpy as np
import pandas as pd
from scipy import stats as sps
from scipy.optimize import least_squares

from .baseline_and_tax import POINT, point_means, rates
from .plateau import plateau, point_problem
from ..errors import AnalysisError

NAN = float("nan")
# The smallest relative noise the fit believes: below it, residuals are the optimiser's rounding, and an exact
# synthetic curve would otherwise get intervals (and "established" parameters) of rounding error.
NOISE_FLOOR = 1e-6
# The columns ``flashscale analyze --fit`` adds to the summary (``fit_table`` with the default axis numjobs).
FIT_COLUMNS = [
    "knee_numjobs", "usl_sigma", "usl_sigma_lo", "usl_sigma_hi", "usl_kappa", "usl_kappa_lo", "usl_kappa_hi",
    "usl_peak_numjobs", "usl_peak_numjobs_lo", "usl_peak_numjobs_hi", "usl_r2", "fit_note",
    "plateau_reached", "last_step_gain", "usl_peak_extrapolated",
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
    n_max: float = NAN

    @property
    def peak_extrapolated(self) -> bool:
        """A finite peak beyond the largest N measured: a prediction, not an observation."""
        return bool(self.fitted and np.isfinite(self.peak_n) and self.peak_n > self.n_max)

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


def refusal(model: Model, n: np.ndarray, y: np.ndarray) -> str:
    """Why these points cannot support a fit of ``model``; '' when they can."""
    problem = point_problem(n, y)
    if problem:
        return problem
    if np.any(y == 0):
        return (f"zero throughput at N = {n[y == 0].tolist()}: the fit works on log throughput (relative noise) "
                f"and needs every value positive")
    distinct = np.unique(n).size
    if distinct < len(model.params) + 1:
        return (f"too few points: {distinct} distinct N, {model.name} needs at least {len(model.params) + 1} "
                f"({len(model.params)} parameters + 1 for their uncertainty)")
    if np.ptp(y) <= 1e-9 * np.max(y):
        return f"throughput is flat ({np.max(y):.6g} at every N): nothing to fit"
    return ""


def _log_residuals(model: Model, n: np.ndarray, log_y: np.ndarray) -> Callable:
    """Residuals log y - log X(n) for theta = (log lambda, sigma[, kappa])."""
    def residuals(theta: np.ndarray) -> np.ndarray:
        denominator = 1.0 + theta[1] * (n - 1.0) + (theta[2] * n * (n - 1.0) if len(theta) > 2 else 0.0)
        return log_y - (theta[0] + np.log(n) - np.log(denominator))
    return residuals


def _start(model: Model, n: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Gunther's linearisation n / X = (1 + sigma (n-1) + kappa n (n-1)) / lambda, solved by least squares and
    moved inside the bounds: the starting point of the log-space fit."""
    columns = [np.ones_like(n), n - 1.0, n * (n - 1.0)][: len(model.params)]
    coef = np.linalg.lstsq(np.column_stack(columns), n / y, rcond=None)[0]
    a = coef[0] if coef[0] > 0 else float(np.min(n / y))
    sigma = float(np.clip(coef[1] / a, 0.0, 0.99))
    start = [np.log(1.0 / a), sigma, max(coef[2] / a, 0.0) if len(coef) > 2 else None]
    return np.array(start[: len(model.params)], dtype=float)


def _log_fit(model: Model, n: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Least squares on log throughput (multiplicative noise has a constant variance there): the estimate of
    theta = (log lambda, sigma[, kappa]), its covariance s^2 (J'J)^-1 and the residual degrees of freedom."""
    lower = np.r_[-np.inf, model.lower[1:]]
    upper = np.r_[np.inf, model.upper[1:]]
    residuals = _log_residuals(model, n, np.log(y))
    result = least_squares(residuals, _start(model, n, y), bounds=(lower, upper), x_scale="jac",
                           method="trf", xtol=1e-12, ftol=1e-12, gtol=1e-12, max_nfev=5000)
    if not result.success:
        raise RuntimeError(result.message)
    df = n.size - len(model.params)
    s2 = max(2.0 * float(result.cost) / df, NOISE_FLOOR ** 2)
    cov = s2 * np.linalg.pinv(result.jac.T @ result.jac)
    return result.x, cov, df


def _usl_peak(theta: np.ndarray, cov: np.ndarray, t: float) -> tuple[float, float, float]:
    """N* = sqrt((1 - sigma) / kappa) = u^(-1/2) with u = kappa / (1 - sigma), and its interval from the t interval
    of u (delta method). u is nearly linear in the data where kappa is, so the interval keeps kappa's coverage even
    when kappa is barely distinguishable from 0 (a delta method on N* itself does not: it is far from linear there).
    The upper end is inf when u's interval reaches 0."""
    sigma, kappa = theta[1], theta[2]
    u = kappa / (1 - sigma)
    grad = np.array([kappa / (1 - sigma) ** 2, 1 / (1 - sigma)])
    half = t * float(np.sqrt(max(grad @ cov[1:3, 1:3] @ grad, 0.0)))
    hi = float(1 / np.sqrt(u - half)) if u - half > 0 else float("inf")
    return (float(1 / np.sqrt(u)), float(1 / np.sqrt(u + half)), hi)


def _intervals(model: Model, theta: np.ndarray, cov: np.ndarray, t: float) -> tuple[np.ndarray, ...]:
    """Parameters (lambda back from its log) with t intervals, the bounded ones clipped: at a bound, lo = 0."""
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    lo = np.clip(theta - t * se, np.r_[-np.inf, model.lower[1:]], np.r_[np.inf, model.upper[1:]])
    hi = np.clip(theta + t * se, np.r_[-np.inf, model.lower[1:]], np.r_[np.inf, model.upper[1:]])
    back = np.r_[np.exp(theta[0]), theta[1:]]
    return back, np.r_[np.exp(lo[0]), lo[1:]], np.r_[np.exp(hi[0]), hi[1:]]


def _peak(model: Model, theta: np.ndarray, cov: np.ndarray, lo: np.ndarray, hi: np.ndarray, t: float,
          n_max: float) -> tuple[tuple[float, float, float], list[str]]:
    """The USL peak when kappa's interval excludes 0, else inf with the lower bound kappa_hi allows; notes."""
    if model.name != "usl" or theta[1] >= 1:
        return (float("inf"), NAN, NAN), []
    if not lo[2] > 0:
        return (float("inf"), _usl_peak(theta, cov, t)[1] if theta[2] > 0 else NAN, float("inf")), [
            "kappa's interval reaches 0: no peak is established (the curve may rise for ever)"]
    peak = _usl_peak(theta, cov, t)
    if peak[0] > n_max:
        return peak, [f"the peak at N = {peak[0]:.3g} lies beyond the largest measured N ({n_max:.6g}): "
                      f"an extrapolation"]
    return peak, []


def fit(model_name: str, n, y, confidence: float = 0.95) -> Fit:
    """Fit ``model_name`` ('usl' or 'amdahl') to throughput ``y`` against concurrency ``n`` (one value per
    repetition: N may repeat)."""
    if model_name not in MODELS:
        raise AnalysisError(f"scaling model {model_name!r} is unknown; expected one of {sorted(MODELS)}")
    if not 0.0 < confidence < 1.0:
        raise AnalysisError(f"confidence {confidence!r} must lie strictly between 0 and 1")
    model = MODELS[model_name]
    n, y = np.asarray(n, dtype=float).ravel(), np.asarray(y, dtype=float).ravel()
    reason = refusal(model, n, y)
    if reason:
        return Fit(model_name, False, reason, int(n.size))
    try:
        theta, cov, df = _log_fit(model, n, y)
    except (RuntimeError, ValueError, np.linalg.LinAlgError) as err:
        return Fit(model_name, False, f"the fit did not converge: {err}", int(n.size))
    t = float(sps.t.ppf((1 + confidence) / 2, df))
    popt, lo, hi = _intervals(model, theta, cov, t)
    params = dict(zip(model.params, map(float, popt)))
    residual = y - model.function(n, *popt)
    r2 = 1.0 - float(residual @ residual) / float(((y - y.mean()) ** 2).sum())
    (peak_n, peak_lo, peak_hi), notes = _peak(model, theta, cov, lo, hi, t, float(n.max()))
    peak_y = float(model.function(peak_n, *popt)) if np.isfinite(peak_n) else (
        params["lam"] / params["sigma"] if params["sigma"] > 0 else float("inf"))
    return Fit(model_name, True, "; ".join(notes), int(n.size), params, dict(zip(model.params, map(float, lo))),
               dict(zip(model.params, map(float, hi))), r2, peak_n, peak_lo, peak_hi, peak_y, float(n.max()))


def fit_usl(n, y, confidence: float = 0.95) -> Fit:
    return fit("usl", n, y, confidence)


def fit_amdahl(n, y, confidence: float = 0.95) -> Fit:
    return fit("amdahl", n, y, confidence)


def _envelope(frame: pd.DataFrame, axis: str, by: Iterable[str]) -> pd.DataFrame:
    """Per (layout, devices, rw[, by], axis): the point (all of POINT) with the best mean over the other axes."""
    if axis not in ("numjobs", "iodepth", "bs"):
        raise AnalysisError(f"scaling axis {axis!r} is unknown; expected 'numjobs', 'iodepth' or 'bs'")
    group = ["layout", "devices", "rw", *by, axis]
    points = point_means(frame)
    return points.loc[points.groupby(group, sort=True, observed=True)["bw_bytes"].idxmax()]


def scaling_curve(frame: pd.DataFrame, axis: str = "numjobs", by: Iterable[str] = ()) -> pd.DataFrame:
    """Per (layout, devices, rw[, by], axis): the best point mean over the other sweep axes (the envelope)."""
    group = list(dict.fromkeys(["layout", "devices", "rw", *by, axis]))
    return _envelope(frame, axis, by)[[*group, "bw_bytes"]].reset_index(drop=True)


def scaling_repetitions(frame: pd.DataFrame, axis: str = "numjobs", by: Iterable[str] = (),
                        runs: pd.DataFrame | None = None) -> pd.DataFrame:
    """The measured rate repetitions (``core.rates``: runs too short to time left out) of each point of
    ``scaling_curve``: one row per repetition, the same columns. ``runs``: other rows to take them from, at the
    same points (the reference's bracket, ``drift.bracket_rates``)."""
    group = list(dict.fromkeys(["layout", "devices", "rw", *by, axis]))
    best = _envelope(frame, axis, by)[POINT]
    rows = (rates(frame) if runs is None else runs).merge(best, on=POINT, how="inner", validate="many_to_one")
    return rows.sort_values(group, kind="stable")[[*group, "bw_bytes"]].reset_index(drop=True)


def _curve_row(n: np.ndarray, y: np.ndarray, axis: str, fraction: float, confidence: float) -> dict:
    """Knee, plateau, USL and Amdahl fits of one curve (one value per repetition) as flat columns."""
    usl_fit, amdahl_fit = fit_usl(n, y, confidence), fit_amdahl(n, y, confidence)
    notes = [f"{f.model}: {'not fitted, ' if not f.fitted else ''}{f.reason}"
             for f in (usl_fit, amdahl_fit) if f.reason]
    try:
        flat = plateau(n, y, fraction, confidence)
    except AnalysisError as err:
        flat, notes = None, [*notes, str(err)]
    else:
        notes += [flat.note] if flat.note else []
    return {
        "points": int(np.unique(n).size), "repetitions": int(n.size),
        "plateau_bw_bytes": flat.level if flat else NAN, f"knee_{axis}": flat.knee if flat else NAN,
        "plateau_reached": flat.reached if flat else False, "last_step_gain": flat.last_gain if flat else NAN,
        "last_step_p": flat.p_value if flat else NAN,
        **usl_fit.as_row("usl"),
        f"usl_peak_{axis}": usl_fit.peak_n, f"usl_peak_{axis}_lo": usl_fit.peak_n_lo,
        f"usl_peak_{axis}_hi": usl_fit.peak_n_hi, "usl_peak_bw_bytes": usl_fit.peak_y,
        "usl_peak_extrapolated": usl_fit.peak_extrapolated, f"usl_knee_{axis}": usl_fit.knee(fraction),
        **amdahl_fit.as_row("amdahl"),
        "fit_note": "; ".join(notes),
    }


def fit_table(frame: pd.DataFrame, axis: str = "numjobs", by: Iterable[str] | str = (), fraction: float = 0.95,
              confidence: float = 0.95) -> pd.DataFrame:
    """Per (layout, devices, rw[, bs]): the knee along ``axis`` and the USL / Amdahl fits of the envelope curve,
    fitted on the repetitions of its points (``scaling_repetitions``).

    Columns: ``points`` (distinct N), ``repetitions``, ``plateau_bw_bytes`` (the largest mean measured),
    ``knee_{axis}`` (NaN when the curve is still rising), ``plateau_reached`` (False when the last step gains
    more than the knee's tolerance and the noise), ``last_step_gain`` (mean at the largest N / mean at the one
    before - 1) and ``last_step_p`` (its one-sided p-value), ``usl_lambda_bw_bytes``, ``usl_sigma``, ``usl_kappa``
    (each with ``_lo`` / ``_hi``), ``usl_r2``, ``usl_peak_{axis}`` (inf unless kappa's interval excludes 0; with
    ``_lo`` / ``_hi``), ``usl_peak_bw_bytes``, ``usl_peak_extrapolated`` (a finite peak beyond the largest N),
    ``usl_knee_{axis}``, the same for ``amdahl_*``, and ``fit_note``: the fits' notes or the reason of any refusal
    (NaN values then, never a number the points cannot support), then the plateau's note."""
    by_cols = [by] if isinstance(by, str) else list(by)
    if any(b != "bs" for b in by_cols):
        raise AnalysisError(f"unknown by value(s) {by_cols!r}: expected a subset of ('bs',)")
    if not 0.0 < fraction <= 1.0:
        raise AnalysisError(f"knee fraction {fraction!r} must lie in (0, 1]")
    curve = scaling_repetitions(frame, axis, by_cols)
    group = ["layout", "devices", "rw", *by_cols]
    rows = [
        {**dict(zip(group, key)),
         **_curve_row(g[axis].to_numpy(float), g["bw_bytes"].to_numpy(float), axis, fraction, confidence)}
        for key, g in curve.groupby(group, sort=True, observed=True)
    ]
    return pd.DataFrame(rows).astype({c: curve[c].dtype for c in group})


def device_scaling(summary: pd.DataFrame, include_baseline: bool = True, confidence: float = 0.95) -> pd.DataFrame:
    """Per (layout, rw[, bs]) of an ``analysis.baseline_and_tax.summarize`` table: best aggregate against the number of devices.

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
