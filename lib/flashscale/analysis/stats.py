"""Repetition statistics and the intervals they put on efficiency and tax.

Pure functions on the tidy results table; warm-up rows, precondition rows and runs flagged ``too_short`` are
excluded (``core.rates``).

Intervals:

* ``t``: for a positive quantity (a rate, IOPS, a latency: every value > 0), the t interval on the log scale,
  back-transformed: mean x exp(+/- t(1 - alpha/2, n - 1) * cv / sqrt(n)), the t interval of the log of the mean
  (its standard error by the delta method, cv / sqrt(n)), ``agreement.Side.interval``, the one rule. It is never
  below zero and always holds the mean; with runs that agree (cv of a few per cent) it is the classic interval to
  within a fraction of its width. The classic mean +/- t * s / sqrt(n) gave two runs of 100 and 2,000 MB/s an
  interval from -10 GB/s (t = 12.7 on one degree of freedom). Values that are not all positive (a difference)
  keep the classic interval. Why the log of the mean and not the mean of the logs (the geometric mean's
  interval): the tables show the mean, and an interval around the geometric mean may miss it.
* ``bootstrap``: percentile bootstrap of the mean (``n_boot`` resamples, seeded ``numpy`` generator, so the same
  table always gives the same interval). With 2-3 repetitions it is narrower than ``t``: prefer ``t`` there.

A point with one repetition has no spread and gets NaN bounds, never a made-up interval.

Efficiency = best / (devices x baseline) is a ratio of two means, and gets its interval on the log scale
(``ratio_interval``, whatever ``method``): efficiency x exp(+/- t s), s the delta-method standard error of the log
of the ratio, sqrt(cv_best^2 / n_best + cv_base^2 / n_base), on Welch-Satterthwaite degrees of freedom. It is never
negative and always holds the efficiency (lo <= efficiency <= hi), where dividing the bounds of two t intervals
gave a negative or inverted one as soon as the baseline's interval crossed zero (two repetitions, t = 12.7).
Where both sides are the same measurement (the baseline point's own efficiency) the value is exact and lo = hi.

The tax (``core.tax``) is tested, not bounded by overlap: ``significance.tax_test`` compares the repetitions of a
layout's best point with those of the reference's (Welch's t test on their logarithms: the two may differ in
runs and spread, ``significance``), which finds a real 8% tax at
3 repetitions and 2% noise in about 95% of draws where the overlap of two intervals found it in half; the verdict
reads that interval against a margin of practical equivalence (``significance.practical``: a tax, a gain,
equivalent or inconclusive), so that a 0.3% difference the test can tell is not called a tax.
``tax_tests`` is the one loop that runs it, row by row, for every table with a tax: this summary's,
``layout_tax.tax_by_threads`` and ``jobfile.summarize``.

The best point is the largest of several noisy means, so it is biased upwards (winner's curse); the interval
describes the repetitions of that point, not the selection.
"""
from __future__ import annotations

from typing import Iterable, Mapping

import numpy as np
import pandas as pd
from scipy import stats as sps

from . import agreement, drift, family, stand_in, table_checks
from .drift import WITHHELD, drift_test
from .family import CLAIMS
from .baseline_and_tax import BASELINE_BS, POINT, baseline, rates, summarize, with_reference
from .significance import (DEFAULT_MARGIN, check_margin, detectable_tax, practical, reps_to_decide, sequential_tax,
                           tax_test, verdict_p)
from ..errors import ConfigError

NAN = float("nan")

METHODS = ("t", "bootstrap")
BEST_POINT = {"best_bs": "bs", "best_numjobs": "numjobs", "best_iodepth": "iodepth"}  # a summary's best point


def _check(confidence: float, method: str) -> None:
    if not 0.0 < confidence < 1.0:
        raise ConfigError(f"confidence {confidence!r} must lie strictly between 0 and 1")
    if method not in METHODS:
        raise ConfigError(f"interval method {method!r} is unknown; expected one of {METHODS}")


def interval_t(values: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """t interval for the mean of ``values``: on the log scale where every value is positive (module doc:
    ``agreement.Side.interval``), else the classic one; (nan, nan) with fewer than two values (one run: no
    interval)."""
    values = np.asarray(values, dtype=float).ravel()
    n = values.size
    if n < 2 or not np.isfinite(values).all():
        return (np.nan, np.nan)
    if (values > 0).all():
        return agreement.Side.of(values).interval(confidence)
    mean = float(values.mean())
    half = float(sps.t.ppf((1 + confidence) / 2, n - 1)) * float(values.std(ddof=1)) / np.sqrt(n)
    return (mean - half, mean + half)


def intervals_by(frame: pd.DataFrame, keys: Iterable[str], values: Iterable[str], confidence: float = 0.95,
                 ) -> pd.DataFrame:
    """Per group of ``keys``: ``{value}_lo`` and ``{value}_hi`` of each of ``values`` that ``frame`` has, the
    ``interval_t`` of its repetitions (missing ones left out; NaN with fewer than two): the interval the tables give,
    for a summary whose figure draws it."""
    grouped = frame.groupby(list(keys), sort=True, observed=True)
    out = grouped.size().rename("_n").to_frame()
    for value in (v for v in values if v in frame.columns):
        found = grouped[value].apply(lambda runs: interval_t(runs.dropna().to_numpy(float), confidence))
        out[f"{value}_lo"], out[f"{value}_hi"] = found.map(lambda b: b[0]), found.map(lambda b: b[1])
    return out.drop(columns="_n").reset_index()


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
    rows = rates(frame)
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


def _baseline_bounds(frame: pd.DataFrame, reps: pd.DataFrame, baseline_bs, by_cols: list[str]) -> pd.DataFrame:
    """Per rw (and bs with ``by``): the baseline point (``core.baseline``, NaN where it is missing), its bounds and
    its runs (``baseline_reps``)."""
    base = baseline(frame, baseline_bs, by_cols, strict=False)
    found = base[base["baseline_bw_bytes"].notna()]
    keys = found.rename(columns={"baseline_layout": "layout", "baseline_numjobs": "numjobs",
                                 "baseline_iodepth": "iodepth"}).assign(devices=1, bs=found["baseline_bs"])
    keys = keys[POINT].astype({c: reps[c].dtype for c in POINT})
    bounds = _point_bounds(reps, keys, "baseline_bw_bytes")
    runs = keys.merge(reps[[*POINT, "reps"]], on=POINT, how="left", validate="many_to_one")["reps"]
    own = found[["rw", *by_cols, "baseline_layout", "baseline_numjobs", "baseline_iodepth"]].reset_index(drop=True)
    return own.assign(baseline_bw_bytes_lo=bounds["baseline_bw_bytes_lo"].to_numpy(),
                      baseline_bw_bytes_hi=bounds["baseline_bw_bytes_hi"].to_numpy(),
                      baseline_reps=runs.fillna(0).astype("int64").to_numpy())


def _repetitions(frame: pd.DataFrame) -> dict[tuple, np.ndarray]:
    """The measured rate repetitions (``core.rates``) of every point, keyed by POINT."""
    return {key: group["bw_bytes"].to_numpy(float) for key, group in rates(frame).groupby(POINT, sort=False)}


def ratio_interval(a: np.ndarray, b: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """The interval of mean(a) / mean(b) on the log scale, ``agreement``'s (the one rule's): the ratio x
    exp(+/- t s), s = sqrt(cv_a^2 / n_a + cv_b^2 / n_b) (the delta method's standard error of the log of the
    ratio), t on Welch-Satterthwaite degrees of freedom. Positive, and lo <= ratio <= hi always; (nan, nan) with
    fewer than two values on a side (one run: no interval) or a value that is not a positive rate."""
    a, b = np.asarray(a, dtype=float).ravel(), np.asarray(b, dtype=float).ravel()
    if a.size < 2 or b.size < 2 or not all(np.isfinite(x).all() and (x > 0).all() for x in (a, b)):
        return (NAN, NAN)
    said = agreement.between(a, b, confidence=confidence)
    return (said.lo, said.hi)


def _efficiency_bounds(row, reps: dict[tuple, np.ndarray], base_reps: dict[tuple, np.ndarray],
                       confidence: float) -> tuple[float, float]:
    """``ratio_interval`` of a summary row's best point against devices x its baseline point; exact (lo = hi) where
    the two are the same point of the same table, NaN where the baseline is missing."""
    if pd.isna(row.baseline_bw_bytes) or pd.isna(row.baseline_numjobs):
        return (NAN, NAN)
    best = (row.layout, row.devices, row.rw, row.best_bs, row.best_numjobs, row.best_iodepth)
    base = (row.baseline_layout, 1, row.rw, int(row.baseline_bs), int(row.baseline_numjobs), int(row.baseline_iodepth))
    if best == base and reps is base_reps:
        return (row.efficiency, row.efficiency)
    return ratio_interval(reps[best], row.devices * base_reps[base], confidence)


TAX_TEST_COLUMNS = ["tax_lo", "tax_hi", "tax_p", "tax_verdict", "tax_reps_needed", "best_reps", "reference_reps",
                    "best_reps_reason", "tax_test", "tax_confidence", "tax_verdict_p", "tax_detectable",
                    *(f"tax_claim_p_{claim}" for claim in CLAIMS), "tax_tested", "reference_drift",
                    "reference_drift_p"]
_NO_CLAIM = {f"tax_claim_p_{claim}": NAN for claim in CLAIMS}  # a row that makes no claim: the family leaves it out


def tax_tests(rows: pd.DataFrame, repetitions: pd.DataFrame, reference: str, group: list[str],
              point: Mapping[str, str] = BEST_POINT, confidence: float = 0.95, method: str = "welch",
              margin: float = DEFAULT_MARGIN, brackets: pd.DataFrame | None = None) -> pd.DataFrame:
    """The one loop of tax tests. Per row of ``rows`` (one per layout and ``group``, e.g. devices and rw): the
    ``significance.tax_test`` of the repetitions of its point against those of the reference's row of the same
    ``group``. The repetitions (``repetitions``: one row per measured repetition, ``bw_bytes``) of a row are those
    of its layout, its ``group`` and its point: ``point`` maps the columns of ``rows`` that name the point (its
    best bs, numjobs and iodepth by default; none where the group is the point) to those of ``repetitions``.

    Columns, on ``rows``' index: ``tax_lo``, ``tax_hi``, ``tax_p``, ``tax_verdict`` (``significance.practical``
    against ``margin``: tax, gain, equivalent, inconclusive, or "one run: no interval" where a side had fewer than
    two runs and no verdict can be given), ``tax_reps_needed`` (for an inconclusive
    verdict, ``significance.reps_to_decide``; else NaN), ``best_reps`` and ``reference_reps`` (the repetitions on
    each side), ``best_reps_reason`` (why the point's runs stopped: ``stopped_how``), ``tax_test`` (``fixed``;
    ``group-sequential`` where PRECISION ran the point to a decision, ``decided`` or ``max``: the verdict is then
    ``significance.sequential_tax``'s last look, whose error rates hold under the looks that stopped it; ``none``
    untested), ``tax_confidence`` (the interval's level: the look's own for the sequential test),
    ``tax_verdict_p`` (``significance.verdict_p``: the p-value of the verdict's own claim against the margin; NaN
    where it makes none), ``tax_claim_p_tax``, ``_gain`` and ``_equivalent`` (the same of each claim the row could
    make, whichever it made: what ``family.controlled`` adjusts), ``tax_detectable`` (``significance.detectable_tax``:
    the smallest tax the test would call with 80% power), ``tax_tested`` (the tax the test reads, 1 - the ratio of
    the two sides' geometric means, ``_geometric_tax``: the centre of its interval, where ``tax`` is 1 - the ratio
    of their means) and ``tax_margin``.

    ``brackets``: the reference's runs once more after the layouts (BRACKET: ``drift.bracket_rates``, rows as
    ``repetitions``'). Each row then has ``reference_drift`` and ``reference_drift_p``, the drift of the reference's
    point from its runs to its bracket's (``drift.drift_test``; NaN without a bracket there), and where it drifted,
    beyond the margin and no noise, the row's verdict is ``drift.WITHHELD`` and it makes no claim (its claims'
    p-values NaN: the family leaves it out). The reference's own rows: 0, 0, NaN,
    'reference', NaN, n, n; rows with no reference row (or no reference repetitions) in their group: NaN, NaN, NaN,
    'unknown', NaN, n, 0 (and NaN for the p-values and the detectable tax)."""
    margin = check_margin(margin)
    keyed = {**{c: c for c in group}, **{v: k for k, v in point.items()}}  # column of repetitions -> of rows
    own = [c for c in point if c not in group]
    refs = with_reference(rows[["layout", *group, *own]], reference, group,
                          {"layout": "reference_layout", **{c: f"reference_{c}" for c in own}})
    by_key = repetitions.groupby(["layout", *keyed], sort=False, observed=True)
    reps = {key: g["bw_bytes"].to_numpy(float) for key, g in by_key}
    after = {} if brackets is None or brackets.empty else {
        key: g["bw_bytes"].to_numpy(float)
        for key, g in brackets.groupby(["layout", *keyed], sort=False, observed=True)}
    stops = {key: stopped_how(g) for key, g in by_key}
    builds = {key: _by_build(g) for key, g in by_key}
    found = []
    for r in refs.to_dict("records"):
        key = (r["layout"], *(r[c] for c in keyed.values()))
        mine, (why, most) = reps[key], stops[key]
        theirs = (reference, *(r[c if c in group else f"reference_{c}"] for c in keyed.values()))
        other = None if pd.isna(r["reference_layout"]) else reps.get(theirs)
        moved = (drift_test(other, after[theirs], margin, confidence) if other is not None and theirs in after
                 else None)
        drifted = {"reference_drift": NAN if moved is None else moved.drift,
                   "reference_drift_p": NAN if moved is None else moved.p}
        untested = {"tax_p": NAN, "tax_reps_needed": NAN, "best_reps": mine.size, "tax_test": "none",
                    "tax_confidence": confidence, "tax_verdict_p": NAN, "tax_detectable": NAN, **_NO_CLAIM}
        if r["layout"] == reference:
            said = {**untested, "tax_lo": 0.0, "tax_hi": 0.0, "tax_verdict": "reference", "reference_reps": mine.size,
                    "tax_tested": 0.0}
        elif other is None:
            said = {**untested, "tax_lo": NAN, "tax_hi": NAN, "tax_verdict": "unknown", "reference_reps": 0,
                    "tax_tested": NAN}
        else:
            said = _tax_verdict(mine, other, why, most, confidence, method, margin, builds[key])
            if moved is not None and moved.drifted:  # measured against a reference that moved: no claim, its power kept
                said.update(tax_verdict=WITHHELD, tax_reps_needed=NAN, tax_verdict_p=NAN, **_NO_CLAIM)
            said["tax_tested"] = _geometric_tax(mine, other)
        found.append({**said, "best_reps_reason": why, **drifted})
    return pd.DataFrame(found, columns=TAX_TEST_COLUMNS, index=rows.index).astype(
        {"tax_lo": "float64", "tax_hi": "float64", "tax_p": "float64", "tax_reps_needed": "float64",
         "best_reps": "int64", "reference_reps": "int64", "tax_confidence": "float64", "tax_verdict_p": "float64",
         "tax_detectable": "float64", "tax_tested": "float64", "reference_drift": "float64",
         "reference_drift_p": "float64",
         **{f"tax_claim_p_{claim}": "float64" for claim in CLAIMS}}).assign(tax_margin=margin)


def _geometric_tax(mine: np.ndarray, other: np.ndarray) -> float:
    """1 - the ratio of the geometric means of ``mine`` and ``other`` (positive rates): the tax the test on the logs
    reads. It is below the ratio of the means by about (s_mine^2 - s_other^2) / 2 for spreads s of the logs: equal
    to a tenth of a point at spreads under 4% on both sides alike, apart where one side is noisier (20% against 2%:
    two points). NaN where a side has no positive run."""
    if not (mine.size and other.size and (mine > 0).all() and (other > 0).all()):
        return NAN
    return float(-np.expm1(np.log(mine).mean() - np.log(other).mean()))


def stopped_how(runs: pd.DataFrame) -> tuple[str, int | None]:
    """Why a point's runs (its measured rows) stopped, its last run's ``reps_reason`` (``fixed`` for rows written
    before the column), and the most runs it could take (``reps_most``; None where not recorded)."""
    last = runs.sort_values("rep").iloc[-1] if "rep" in runs else runs.iloc[-1]
    why = last.get("reps_reason")
    most = last.get("reps_most")
    return ("fixed" if why is None or pd.isna(why) else str(why),
            None if most is None or pd.isna(most) else int(most))


def _by_build(runs: pd.DataFrame) -> list[np.ndarray]:
    """A point's measured rates, one array a build (``build``; rows without it are one build), in build order."""
    if "build" not in runs.columns:
        return [runs["bw_bytes"].to_numpy(float)]
    build = pd.to_numeric(runs["build"], errors="coerce").fillna(0).astype(int)
    return [g["bw_bytes"].to_numpy(float) for _, g in runs.groupby(build, sort=True)]


def _tax_verdict(mine: np.ndarray, other: np.ndarray, why: str, most: int | None, confidence: float, method: str,
                 margin: float, builds: list[np.ndarray] | None = None) -> dict:
    """The tax test of one point against the reference's: the group-sequential test's last look
    (``significance.sequential_tax``, at the level it spent) where the point's runs were run to a decision
    (``decided``, or ``max`` with the most runs recorded; its own default test, as the campaign read it), else the
    fixed test at ``confidence`` by ``method``: ``tax_tests``' columns of a tested row (tax_lo, tax_hi, tax_p,
    tax_verdict, tax_reps_needed, best_reps, reference_reps, tax_test, tax_confidence, tax_verdict_p, tax_detectable
    and each claim's p-value).

    Built more than once (BUILDS), the campaign ran each build's runs to a decision of its own, against the
    reference's runs (``measure.recorder``): the test is read as it ran, a look per build (``builds``: each build's
    runs). The point's verdict is theirs where every build's says the same, else inconclusive; its interval spans
    every build's, at the lowest level a build's look was read at. A wrong tax (or equivalence) then needs every
    build's look wrong, so the point is wrong at most as often as one build's look. Pooling the builds' runs into
    one look would read it past its most runs, where it spends nothing (a level of 1e-12: every verdict
    inconclusive)."""
    builds = [b for b in (builds or [mine]) if b.size]
    ran = why in ("decided", "max") and most is not None and other.size >= 2
    if ran and builds and all(b.size >= 2 for b in builds):  # one look a build (one build: the point's own look)
        looks = [sequential_tax(b, other, most, margin) for b in builds]  # as the campaign read it (its own default)
        verdicts = {look.verdict for look in looks}
        level = min(look.level for look in looks)
        said = verdicts.pop() if len(verdicts) == 1 else "inconclusive"
        return {"tax_lo": min(look.test.lo for look in looks), "tax_hi": max(look.test.hi for look in looks),
                "tax_p": max(look.test.p_value for look in looks), "tax_verdict": said, "tax_reps_needed": NAN,
                "best_reps": int(mine.size), "reference_reps": int(other.size), "tax_test": "group-sequential",
                "tax_confidence": 1.0 - 2.0 * level,
                "tax_verdict_p": max(verdict_p(look.test, said, margin) for look in looks),  # every build's claim
                "tax_detectable": max(detectable_tax(look.test, margin, 1.0 - 2.0 * look.level) for look in looks),
                **{f"tax_claim_p_{claim}": max(verdict_p(look.test, claim, margin) for look in looks)
                   for claim in CLAIMS}}
    test = tax_test(mine, other, confidence, method)
    said = practical(test, margin)
    needed = reps_to_decide(test, margin, confidence) if said == "inconclusive" else None
    return {"tax_lo": test.lo, "tax_hi": test.hi, "tax_p": test.p_value, "tax_verdict": said,
            "tax_reps_needed": NAN if needed is None else float(needed), "best_reps": test.n_layout,
            "reference_reps": test.n_reference, "tax_test": "fixed", "tax_confidence": confidence,
            "tax_verdict_p": verdict_p(test, said, margin), "tax_detectable": detectable_tax(test, margin, confidence),
            **{f"tax_claim_p_{c}": verdict_p(test, c, margin) for c in CLAIMS}}


def summary_intervals(
    frame: pd.DataFrame, reference: str, baseline_bs=BASELINE_BS, by: Iterable[str] | str = (),
    confidence: float = 0.95, method: str = "t", n_boot: int = 2000, seed: int = 0, tax_method: str = "welch",
    base_frame: pd.DataFrame | None = None, margin: float = DEFAULT_MARGIN,
) -> pd.DataFrame:
    """``analysis.baseline_and_tax.summarize`` plus ``best_bw_bytes_lo/hi``, ``baseline_bw_bytes_lo/hi`` (``method`` intervals),
    ``efficiency_lo/hi`` and ``layout_efficiency_lo/hi`` (``ratio_interval``) and the tax test of ``tax_tests`` on
    the repetitions of each row's best point against the reference's best point at the same devices, rw (and
    ``by``): ``tax_lo/hi``, ``tax_p``, ``tax_verdict`` (against ``margin``: 'tax' or 'gain' beyond it,
    'equivalent' within it, 'inconclusive' across its edge with ``tax_reps_needed``, 'one run: no interval' with
    fewer than 2 repetitions on a side, 'unknown' with no reference row, 'reference'), ``best_reps``, ``reference_reps``, ``tax_margin`` and
    ``tax_confidence`` (the level of the interval), ``tax_verdict_p`` and ``tax_detectable`` (``tax_tests``),
    ``tax_q`` and ``tax_held`` (the table's verdicts controlled together: ``family.controlled``), ``baseline_reps``
    (the runs of the baseline point).
    ``base_frame``: the results whose single-device rows give the baseline (another stage's, ``01_baseline``);
    by default ``frame``'s own. A ``reference`` of jbod that was not measured, with the single device measured:
    the tax is against N x single (``stand_in``: its name in ``reference``, its own rows left out)."""
    _check(confidence, method)
    for given in (frame, base_frame) if base_frame is not None else (frame,):
        table_checks.check_columns(given)  # before the stand-in reads layout and devices
    asked = reference
    frame, reference = stand_in.resolve(frame, reference, base_frame)
    by_cols = [by] if isinstance(by, str) else list(by)
    base_frame = frame if base_frame is None else base_frame
    base_table = baseline(base_frame, baseline_bs, by_cols, strict=False) if base_frame is not frame else None
    summary = summarize(frame, reference, baseline_bs, by_cols, base=base_table)
    reps = repetition_stats(frame, "bw_bytes", confidence, method, n_boot, seed)
    out = pd.concat([summary, _best_bounds(summary, reps)], axis=1)
    base_reps = reps if base_frame is frame else repetition_stats(base_frame, "bw_bytes", confidence, method,
                                                                   n_boot, seed)
    base = _baseline_bounds(base_frame, base_reps, baseline_bs, by_cols)
    out = out.merge(base, on=["rw", *by_cols], how="left", validate="many_to_one")
    own = _repetitions(frame)
    of_base = own if base_frame is frame else _repetitions(base_frame)
    bounds = [_efficiency_bounds(r, own, of_base, confidence) for r in out.itertuples(index=False)]
    out["efficiency_lo"] = [lo for lo, _ in bounds]
    out["efficiency_hi"] = [hi for _, hi in bounds]
    share = 1.0 - out["design_tax"]
    out["layout_efficiency_lo"] = out["efficiency_lo"] / share
    out["layout_efficiency_hi"] = out["efficiency_hi"] / share
    tests = tax_tests(out, rates(frame), reference, ["devices", "rw", *by_cols], confidence=confidence,
                      method=tax_method, margin=margin, brackets=drift.bracket_rates(frame))
    out = pd.concat([out, tests], axis=1)
    if reference != asked:  # the stand-in is no measured layout: its own rows are left out
        out = out[out["layout"] != reference].reset_index(drop=True)
    out = family.controlled(out)
    return out.drop(columns=["baseline_layout", "baseline_numjobs", "baseline_iodepth"])
