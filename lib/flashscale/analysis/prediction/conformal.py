"""Predictions that can miss (issue 50, item 6): every scored point gets an interval with two ends where one can be
stated honestly, and the measurement is held to it.

    run_noise(frame)                  the table's run-to-run noise (the sd of a run's log), and where it came from
    conformal_half(others, level)     the split-conformal half-width from the other points' scores (``residuals``)
    held_to_model(scored, frame)      per scored point whose model interval is closed at both ends: that interval
                                      widened by the new measurement's noise, and whether it lies inside
    two_ended(scored, frame, level)   per scored point: the table's own interval (``empirical_lo/hi_bw_bytes``),
                                      the interval it is scored by (``scored_lo/hi_bw_bytes``, ``scored_from``),
                                      whose errors held it (``scored_tier``, ``scored_residuals``), whether it was
                                      clipped to the model's closed end (``scored_clipped``; ``scored_unclipped``:
                                      refused, see below) and whether the measurement lies inside (``scored_inside``)
    table_sentences(scored)           whose errors held the table's intervals, how many were clipped, in words

Two intervals, and which one a point is scored by (``scored_from``):

    the model's    the interval the unknowns leave (``bounds``), where both its ends are closed, widened by the new
                   measurement's own run-to-run noise (t x the noise / sqrt(its runs), on the log scale): the
                   unknowns' ends already hold the single device's spread, not the layout's runs'
    the table's    where the model leaves an end open (a layer's cost, the host's shared paths, a load beyond the
                   curve): split-conformal, leave-one-out over the table's points. Point i's score is |log(measured /
                   predicted)| of every *other* point; with n of them, the half-width is their k-th smallest, k =
                   ceil(level x (n + 1)); none where k > n (fewer than level / (1 - level) others: 9 for 90%).
                   Whose errors: its layout's alone where it has 9 others, else each scaled by its layout's, else
                   every layout's pooled (``residuals``). The interval is predicted x exp(-/+ that), at least the
                   new measurement's noise wide, and clipped to the model's closed end (widened by that noise) where
                   the model closed one: "at most 802 MB/s" is not reached past

The clip is part of the score, so it keeps the level: a point measured past its own model's closed end scores
infinity (no width of a clipped interval reaches it). Where the quantile is then infinite (more than n - k of the
other points broke their closed end: the model's "at most" did not hold on this table), the point's interval is
not clipped, its score the plain one, and said (``scored_unclipped``). Choosing between the two from the other
points is not covered by conformal's proof, so it is measured (``tests/test_predict_conformal.py``): where the
simulated jbods may beat their devices by 2%, their closed ends break and the clip is refused at 38.1% of the new
points, taken at 14.1%, coverage 91.6%; where they never do, taken at 26.9%, coverage 92.0%.

What the table's interval assumes, and what it promises: the scored points' scores are *exchangeable* (the points
are like draws from one population of layouts, counts and loads on this host, the new measurement one more such
draw). Then a new point lies inside with probability at least ``level``, whatever the errors' distribution (Vovk,
Gammerman and Shafer, 2005; Lei et al., 2018): over points, and for each layout only where its own points hold it
(the ``own`` tier); the scaled tier brings each layout near the level as far as its scaled errors are alike
(measured per layout in ``tests/test_predict_conformal.py``: jbod 91.7%, md-raid0 91.2%, lvm-striped 91.7% at 90%
stated, where pooled errors gave 100%, 78.5% and 76.9%); pooled, a layout whose layer costs more misses more often.
Each measured error holds its point's own run noise, so the new run's noise is in the scores; its floor (the noise
alone) is kept for a table whose errors are all near zero. Scored on the table's own points, each point is held to
the others' errors: that share says little for the model; the width does, and the test measures the promise on new
points.

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
from . import residuals
from .residuals import check_level, conformal_half, least_others, residual_halves  # noqa: F401 (the interval's names)

LEVEL = 0.90  # the table's intervals' stated coverage; 95% would need 19 other points, seed 000 has 11
DEFAULT_NOISE = DEFAULT_MARGIN  # the sd of one run's log where the table repeated nothing (module doc)
MODEL, TABLE = "the model", "the table"  # ``scored_from``: which interval a point is scored by
POINT = ["layout", "devices", "rw", "bs", "numjobs", "iodepth"]


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
    """``held_to_model``, and where the model's interval has an open end, the table's own at ``level`` as the
    interval scored (``scored_from`` ``TABLE``; module doc): ``empirical_lo_bw_bytes`` / ``_hi_`` (NaN where too
    few other points), clipped to the model's closed end widened by the measurement's noise where the table's
    points kept to theirs (``scored_clipped``), its residuals' source in words (``scored_residuals``,
    ``residuals.residual_halves``); "" and NA where neither has two ends (left open). ``calibration``: which rows'
    errors calibrate (default all); each such row is held to the others', each other row to all of them."""
    out = held_to_model(scored, frame, level)
    predicted, measured = scored["predicted_bw_bytes"].astype(float), scored["measured_bw_bytes"].astype(float)
    errors = np.abs(np.log(measured / predicted)).where((predicted > 0) & (measured > 0))
    mine = pd.Series(True, index=scored.index) if calibration is None else calibration.astype(bool)
    lo, hi = _model_ends(out)
    past = (measured < lo) | (measured > hi)  # no width of the clipped interval reaches it
    clipped, tier_clipped, said_clipped = residual_halves(errors.mask(past, np.inf), scored["layout"], mine, level,
                                                          out["run_noise_half"])
    plain, tier_plain, said_plain = residual_halves(errors, scored["layout"], mine, level, out["run_noise_half"])
    one_end = (out["scored_from"].eq("") & (np.isfinite(lo) | np.isfinite(hi))).to_numpy()  # the model's other open
    clip = one_end & np.isfinite(clipped)
    halves = np.maximum(np.where(clip, clipped, plain), out["run_noise_half"])  # NaN stays: too few
    refused = one_end & np.isinf(clipped)  # too many of the table's points lay past their model's closed end
    how = [c if k else p + ("; not clipped: too many of them lay past their model's closed end" if r else "")
           for c, p, k, r in zip(said_clipped, said_plain, clip, refused)]
    out = out.assign(empirical_lo_bw_bytes=predicted * np.exp(-halves),
                     empirical_hi_bw_bytes=predicted * np.exp(halves),
                     scored_tier=np.where(clip, tier_clipped, tier_plain), scored_residuals=how,
                     scored_clipped=False, scored_unclipped=refused)
    table = out["scored_from"].eq("") & np.isfinite(out["empirical_lo_bw_bytes"])
    ends_lo = out["empirical_lo_bw_bytes"].where(~clip, np.fmax(out["empirical_lo_bw_bytes"], lo))
    ends_hi = out["empirical_hi_bw_bytes"].where(~clip, np.fmin(out["empirical_hi_bw_bytes"], hi))
    out.loc[table, "scored_lo_bw_bytes"] = ends_lo[table]
    out.loc[table, "scored_hi_bw_bytes"] = ends_hi[table]
    out.loc[table, "scored_clipped"] = ((ends_lo > out["empirical_lo_bw_bytes"])
                                        | (ends_hi < out["empirical_hi_bw_bytes"]))[table]
    out.loc[table, "scored_from"] = TABLE
    return _inside(out)


def _model_ends(out: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """The model's ends widened by the new measurement's noise (``run_noise_half``), -inf / inf where open: the
    least and the most the measurement may honestly read where the model closed that end."""
    noise = out["run_noise_half"].astype(float)
    lo = out.get("predicted_lo_bw_bytes", pd.Series(np.nan, index=out.index)).astype(float) * np.exp(-noise)
    hi = out.get("predicted_hi_bw_bytes", pd.Series(np.nan, index=out.index)).astype(float) * np.exp(noise)
    return lo.where(np.isfinite(lo), -np.inf), hi.where(np.isfinite(hi), np.inf)


def table_sentences(scored: pd.DataFrame) -> list[str]:
    """Where the table's own interval was scored (``two_ended``): whose errors held it (each point's
    layout's alone, scaled by its layout's, or pooled over every layout: ``residuals``) and how many were clipped
    to the model's closed end, or not, the table's points having passed theirs. Nothing where none was."""
    if "scored_tier" not in scored.columns:
        return []
    table = scored[scored["scored_from"].eq(TABLE)]
    if table.empty:
        return []
    tiers = table["scored_tier"].value_counts()
    clipped = int(table["scored_clipped"].astype(bool).sum())
    refused = int(table["scored_unclipped"].astype(bool).sum())
    pooled = int(tiers.get(residuals.POOLED, 0))
    said = (f"The table's {len(table)} interval(s): {int(tiers.get(residuals.OWN, 0))} from their layout's own "
            f"points alone, {int(tiers.get(residuals.SCALED, 0))} scaled by their layout's errors, {pooled} pooled "
            "over every layout" + (f" (their level holds over the layouts together, not for each: a layout needs "
                                   f"{residuals.LEAST_SCALE} other points for a scale)" if pooled else "")
            + f"; {clipped} clipped to the model's closed end")
    return [said + (f", {refused} not: the table's points lay past theirs." if refused else ".")]

