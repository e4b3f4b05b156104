"""Predictions that can miss (issue 50, item 6): every scored point gets an interval with two ends where one can be
stated honestly, and the measurement is held to it.

    run_noise(frame)                  the table's run-to-run noise (the sd of a run's log), and where it came from
    conformal_half(others, level)     the split-conformal half-width from the other points' |log error|s (NaN:
                                      too few of them for ``level``)
    held_to_model(scored, frame)      per scored point whose model interval is closed at both ends: that interval
                                      widened by the new measurement's noise, and whether it lies inside
    two_ended(scored, frame, level)   per scored point: the table's own interval (``empirical_lo/hi_bw_bytes``),
                                      the interval it is scored by (``scored_lo/hi_bw_bytes``, ``scored_from``)
                                      and whether the measurement lies inside it (``scored_inside``)

Two intervals, and which one a point is scored by (``scored_from``):

    the model's    the interval the unknowns leave (``bounds``), where both its ends are closed, widened by the new
                   measurement's own run-to-run noise (t x the noise / sqrt(its runs), on the log scale): the
                   unknowns' ends already hold the single device's spread, not the layout's runs'
    the table's    where the model leaves an end open (a layer's cost, the host's shared paths, a load beyond the
                   curve): split-conformal, leave-one-out over the table's points. Point i's score is |log(measured /
                   predicted)| of every *other* point; with n of them, the half-width is their k-th smallest, k =
                   ceil(level x (n + 1)); none where k > n (fewer than level / (1 - level) others: 9 for 90%).
                   The interval is predicted x exp(-/+ that), at least the new measurement's noise wide

What the table's interval assumes, and what it promises: the scored points' log errors are *exchangeable* (the
points are like draws from one population of layouts, counts and loads on this host, the new measurement one more
such draw). Then a new point lies inside with probability at least ``level``, whatever the errors' distribution
(Vovk, Gammerman and Shafer, 2005; Lei et al., 2018): marginally, over points, not for each layout (a layout whose
layer costs more than the others' misses more often than 1 - level, and one that costs less, less often). Each
measured error holds its point's own run noise, so the new run's noise is in the scores; its floor (the noise
alone) is kept for a table whose errors are all near zero. Scored on the table's own points, at least k of n lie
inside by construction (a point misses only when its error is among the n - k largest): that share is the
construction's, not evidence for the model; the width is, and ``tests/test_predict_conformal.py`` measures the
promise on new points.

The run noise is never zero: a point's own runs' sd of log(rate) where it has two or more (on their degrees of
freedom; runs that tie read at the least spread the measurement resolves, ``significance.log_sd_floor``); a point of
one run takes the table's (``run_noise``): the pooled sd over its points of two runs or more (every layout's, the
single device's too), or where no point was run twice, the house's margin (``DEFAULT_NOISE``: a rerun of the same
layout on real NVMe devices differs by less than 2%, ``analysis.defaults.DEFAULT_MARGIN``) taken as the sd of one
run, said.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats as sps

from .. import baseline_and_tax
from ..defaults import DEFAULT_MARGIN
from ..significance import log_sd_floor
from ...errors import ConfigError

LEVEL = 0.90  # the table's intervals' stated coverage; 95% would need 19 other points, seed 000 has 11
DEFAULT_NOISE = DEFAULT_MARGIN  # the sd of one run's log where the table repeated nothing (module doc)
MODEL, TABLE = "the model", "the table"  # ``scored_from``: which interval a point is scored by
POINT = ["layout", "devices", "rw", "bs", "numjobs", "iodepth"]


def check_level(level) -> float:
    """``level`` as a float strictly between 0 and 1; ConfigError naming the value otherwise."""
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0.0 < level < 1.0:
        raise ConfigError(f"the intervals' level {level!r} must be a fraction strictly between 0 and 1, e.g. 0.9")
    return float(level)


def _spreads(frame: pd.DataFrame) -> pd.DataFrame:
    """Per point of ``frame`` (``POINT``) run two times or more: the variance of its runs' log rate (``var``) and
    its degrees of freedom (``df``)."""
    rows = baseline_and_tax.rates(frame)
    rows = rows[np.isfinite(rows["bw_bytes"]) & (rows["bw_bytes"] > 0)]
    logs = np.log(rows["bw_bytes"].astype(float)).groupby([rows[k] for k in POINT], sort=False)
    spread = pd.DataFrame({"var": logs.var(ddof=1), "df": logs.count() - 1.0})
    return spread[spread["df"] >= 1].reset_index()


def run_noise(frame: pd.DataFrame) -> tuple[float, float, str]:
    """The table's run-to-run noise, for a point of one run: (sd of a run's log rate, its degrees of freedom, where
    it came from in words). Pooled over every point of ``frame`` run two times or more; ``DEFAULT_NOISE`` on
    infinite degrees of freedom where none was."""
    spread = _spreads(frame)
    if spread.empty:
        return DEFAULT_NOISE, math.inf, (f"no point run twice: the house's {DEFAULT_NOISE:.0%} a run (a rerun of "
                                         "the same layout on real NVMe devices differs by less)")
    df = float(spread["df"].sum())
    sd = math.sqrt(float((spread["var"] * spread["df"]).sum()) / df)
    return sd, df, f"{sd:.2%} a run, pooled over {len(spread)} point(s) run twice or more ({df:g} degrees of freedom)"


def _noise(scored: pd.DataFrame, frame: pd.DataFrame, level: float) -> tuple[pd.Series, list[str]]:
    """Per scored point, the half-width of its measured mean's own noise on the log scale (t x sd / sqrt(runs)):
    the sd of its own runs where it has two or more, else the table's (``run_noise``), said."""
    sd, df, said = run_noise(frame)
    types = {"devices": "int64", "bs": "int64", "numjobs": "int64", "iodepth": "int64", "layout": str, "rw": str}
    own = scored[POINT].astype(types).merge(_spreads(frame).astype(types), on=POINT, how="left")
    runs = own["df"].fillna(0.0).to_numpy() + 1.0
    floors = [log_sd_floor(v) if v > 0 else 0.0 for v in scored["measured_bw_bytes"].astype(float)]
    sds = np.fmax(np.sqrt(own["var"].fillna(sd ** 2).to_numpy()), floors)  # runs that tie: the least they hide
    dfs = own["df"].fillna(df).to_numpy()
    half = sps.t.ppf((1 + level) / 2, dfs) * sds / np.sqrt(runs)
    return pd.Series(half, index=scored.index), [f"its own {r:g} runs" if r > 1 else said for r in runs]


def conformal_half(others, level: float = LEVEL) -> float:
    """The split-conformal half-width from ``others`` (the other points' |log error|, NaN left out): their k-th
    smallest, k = ceil(level x (n + 1)); NaN where k > n (too few for ``level``)."""
    scores = np.sort(np.asarray([s for s in others if np.isfinite(s)], dtype=float))
    k = math.ceil(check_level(level) * (len(scores) + 1) - 1e-9)
    return float(scores[k - 1]) if 1 <= k <= len(scores) else math.nan


def least_others(level: float = LEVEL) -> int:
    """The fewest other points for which ``conformal_half`` states an interval at ``level`` (9 for 90%)."""
    return math.ceil(check_level(level) / (1 - level) - 1e-9)


def held_to_model(scored: pd.DataFrame, frame: pd.DataFrame, level: float = LEVEL) -> pd.DataFrame:
    """``scored`` (a prediction with ``measured_bw_bytes``, ``predicted_lo_bw_bytes`` / ``_hi_``) with
    ``run_noise_half`` and ``run_noise_from`` (``_noise``: the measured mean's own noise, half an interval's width on
    the log scale at ``level``, and where its sd came from), ``scored_level``, and where the model's interval is
    closed at both ends that interval widened by the noise (``scored_lo_bw_bytes``, ``scored_hi_bw_bytes``,
    ``scored_from`` ``MODEL``) and ``scored_inside``; NaN, "" and NA elsewhere (``two_ended`` fills them)."""
    level = check_level(level)
    noise, said = _noise(scored, frame, level)
    lo = scored.get("predicted_lo_bw_bytes", pd.Series(np.nan, index=scored.index)).astype(float)
    hi = scored.get("predicted_hi_bw_bytes", pd.Series(np.nan, index=scored.index)).astype(float)
    model = np.isfinite(lo) & np.isfinite(hi)
    out = scored.assign(run_noise_half=noise, run_noise_from=said, scored_level=level,
                        scored_lo_bw_bytes=(lo * np.exp(-noise)).where(model),
                        scored_hi_bw_bytes=(hi * np.exp(noise)).where(model),
                        scored_from=np.where(model, MODEL, ""))
    return _inside(out)


def _inside(out: pd.DataFrame) -> pd.DataFrame:
    measured = out["measured_bw_bytes"].astype(float)
    inside = (out["scored_lo_bw_bytes"] <= measured) & (measured <= out["scored_hi_bw_bytes"])
    return out.assign(scored_inside=inside.astype("boolean").mask(out["scored_from"].eq("")))


def two_ended(scored: pd.DataFrame, frame: pd.DataFrame, level: float = LEVEL,
              calibration: pd.Series | None = None) -> pd.DataFrame:
    """``held_to_model``, and where the model's interval has an open end, the table's own at ``level``
    (``empirical_lo_bw_bytes`` / ``empirical_hi_bw_bytes``: NaN where too few other points; module doc) as the
    interval scored (``scored_from`` ``TABLE``); "" and NA where neither has two ends (left open).
    ``calibration``: which rows' errors calibrate (default all); each such row is held to the others', each other
    row to all of them (a new point)."""
    out = held_to_model(scored, frame, level)
    predicted, measured = scored["predicted_bw_bytes"].astype(float), scored["measured_bw_bytes"].astype(float)
    errors = np.abs(np.log(measured / predicted)).where((predicted > 0) & (measured > 0))
    mine = pd.Series(True, index=scored.index) if calibration is None else calibration.astype(bool)
    halves = np.array([max(conformal_half(errors[mine & (scored.index != i)], level), floor)  # NaN stays: too few
                       for i, floor in zip(scored.index, out["run_noise_half"])])
    out = out.assign(empirical_lo_bw_bytes=predicted * np.exp(-halves), empirical_hi_bw_bytes=predicted * np.exp(halves))
    table = out["scored_from"].eq("") & np.isfinite(out["empirical_lo_bw_bytes"])
    out.loc[table, "scored_lo_bw_bytes"] = out.loc[table, "empirical_lo_bw_bytes"]
    out.loc[table, "scored_hi_bw_bytes"] = out.loc[table, "empirical_hi_bw_bytes"]
    out.loc[table, "scored_from"] = TABLE
    return _inside(out)
