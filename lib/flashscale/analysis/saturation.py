"""Saturation per layout: the fewest jobs that reach 95% of a layout's best, shown by the repetitions, and what
one job delivers (seed 000: "the minimum amount of threads required to saturate the SSDs").

Pure functions on the tidy results table; the rates of ``core.rates`` (warm-up, precondition, failed and too-short
runs left out). One row per (layout, devices, rw, bs): the question is asked at each block size.

*best* is the largest point mean over the group's points (numjobs x iodepth), as ``core.best_points`` defines it.
The points are taken in the order of what they cost: fewest jobs first (a job is a thread, or a process, of the
application), then the lowest queue depth (asynchronous I/Os in flight are cheap beside a thread). The
*saturating point* is the first point, in that order, that the repetitions show to reach ``fraction`` (0.95) of
the best: a one-sided t test on the logs (``significance.log_t_test``, ``alternative="greater"``) rejects
"mean(point) / mean(best) <= fraction" at 1 - ``confidence``, the variance of the logs pooled over the points
whose mean reaches the fraction (storage noise is relative, so one log variance serves the plateau; the points
below it are never candidates and may spread far more: one buffered-write job on btrfs-raid0 spread 430-720 MB/s
where the capped plateau repeats within 1%, and pooled over the whole curve it hid every plateau point). The best
point itself always reaches its own best. The means alone give ``plateau.knee`` (the one definition of the knee):
the saturating point is that knee confirmed against the noise, never earlier (a point whose mean falls short of the
fraction cannot pass), later when the repetitions cannot show the knee's point within 5% of the best.

Why this rule and not "the upper bound of the point reaches 95%": the claim a reader acts on is "N jobs are
enough". The upper-bound rule passes any point it cannot show short of 95%, so the noisier the runs, the fewer
jobs it names: on a curve at 92% with 2 jobs and 99% with 4, 3 repetitions and 2% noise, it named 2 jobs in 37%
of draws. The rule here names a point short of 95% less often than the test's level, and errs the safe way,
towards more jobs, when the noise hides the knee.

Measured on known curves over 1, 2, 4 and 8 jobs with 2% multiplicative Gaussian noise, 2,000 draws each
(tests/test_saturation.py holds them on 400): a hard knee at 4 jobs (min(n, 4) x cap) is found at 4 jobs in 83%
of draws with 3 repetitions and 98% with 5, else at 8; a soft knee (78%, 92%, 99%, 100% of the best) at 4 jobs
in 66% / 91%, else at 8 (2 jobs, at 92%, in 0.1%); a layout saturated by one job at 1 job in 79% / 97%; a point
at exactly 95% is named in 1-2%, one at 90% never. More repetitions are what move the point to the truth.

A curve still rising at its largest numjobs has no saturating point: ``reached`` is False, saturating NaN and the
note says "not reached within the measured range", as ``plateau.plateau`` decides it on the envelope over
iodepth (``scaling.scaling_repetitions``). With one run per point there is no noise to test against: the
saturating point is the means' first point at the fraction, and the note says it was not tested.

*one job*: the best point at numjobs = 1 (over iodepth), its mean with the t interval of its repetitions
(``stats.describe``) and its fraction of the best.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import AnalysisError
from .baseline_and_tax import rates
from .plateau import Plateau, plateau
from .scaling import scaling_repetitions
from .significance import log_t_test
from .stats import describe
from ..measure.units import percent

NAN = float("nan")
GROUP = ["layout", "devices", "rw", "bs"]
ORDER = ["numjobs", "iodepth"]  # what a point costs: jobs first, then queue depth
COLUMNS = [*GROUP, "saturation_fraction", "best_bw_bytes", "best_numjobs", "best_iodepth", "reached",
           "saturating_numjobs", "saturating_iodepth", "saturating_bw_bytes", "knee_numjobs", "max_numjobs",
           "one_job_bw_bytes", "one_job_bw_bytes_lo", "one_job_bw_bytes_hi", "one_job_iodepth", "one_job_reps",
           "one_job_fraction", "note"]


def saturating_index(reps: list[np.ndarray], fraction: float = 0.95, confidence: float = 0.95) -> tuple[int, bool]:
    """The index of the first sample of ``reps`` (one array of positive repetitions per point, in the order of
    what the points cost) that reaches ``fraction`` of the best point's mean, and whether that was tested against
    the noise (module doc); False when the points at the fraction hold one run each: the means decided."""
    means = np.array([r.mean() for r in reps])
    best = int(np.argmax(means))
    candidates = [k for k in range(len(reps)) if means[k] >= fraction * means[best]]
    tested = sum(reps[k].size - 1 for k in candidates) > 0
    for j in candidates:
        if j == best or not tested:
            return j, tested
        others = [reps[k] for k in candidates if k not in (j, best)]
        test = log_t_test(reps[j] / fraction, reps[best], "student", "greater", pooled_with=others)
        if test.p_value < 1 - confidence:
            return j, True
    return best, tested


def _one_job(points: list[tuple], reps: list[np.ndarray], confidence: float) -> dict:
    """The best point at one job: mean, interval, iodepth, repetitions (NaN without a point at one job)."""
    ones = [k for k, (numjobs, _) in enumerate(points) if numjobs == 1]
    if not ones:
        return {"one_job_bw_bytes": NAN, "one_job_bw_bytes_lo": NAN, "one_job_bw_bytes_hi": NAN,
                "one_job_iodepth": NAN, "one_job_reps": 0}
    k = max(ones, key=lambda i: reps[i].mean())
    d = describe(reps[k], confidence)
    return {"one_job_bw_bytes": d["mean"], "one_job_bw_bytes_lo": d["lo"], "one_job_bw_bytes_hi": d["hi"],
            "one_job_iodepth": float(points[k][1]), "one_job_reps": int(d["reps"])}


def _not_reached(flat: Plateau, top: int) -> str:
    return (f"not reached within the measured range (still rising at {top} jobs: the last step gains "
            f"{percent(flat.last_gain, 0)})")


def _flattening(flat: Plateau, top: int) -> str:
    """Why a curve ``plateau`` calls flat may still rise: its last step untested, or within the noise."""
    if not np.isfinite(flat.last_gain):
        return "one job count measured: whether more jobs give more is untested"
    step = f"the last step, to {top} jobs, gains {percent(flat.last_gain, 0)}"
    if np.isnan(flat.p_value):
        return f"{step}, untested against the noise (one run per point)"
    return f"{step}, within the noise, p = {flat.p_value:.2g}: more jobs may give more"


def _row(group: pd.DataFrame, flat: Plateau, fraction: float, confidence: float) -> dict:
    """The saturation of one (layout, devices, rw, bs): its points in ORDER, the test, one job."""
    by_point = group.groupby(ORDER, sort=True)["bw_bytes"]
    points = list(by_point.groups)
    reps = [by_point.get_group(p).to_numpy(float) for p in points]
    means = np.array([r.mean() for r in reps])
    best = int(np.argmax(means))
    top = int(max(numjobs for numjobs, _ in points))
    row = {"best_bw_bytes": float(means[best]), "best_numjobs": int(points[best][0]),
           "best_iodepth": int(points[best][1]), "reached": bool(flat.reached), "knee_numjobs": flat.knee,
           "max_numjobs": top, **_one_job(points, reps, confidence)}
    row["one_job_fraction"] = row["one_job_bw_bytes"] / row["best_bw_bytes"]
    if not flat.reached:
        return {**row, "saturating_numjobs": NAN, "saturating_iodepth": NAN, "saturating_bw_bytes": NAN,
                "note": _not_reached(flat, top)}
    at, tested = saturating_index(reps, fraction, confidence)
    notes = [_flattening(flat, top)] if flat.note else []
    if not tested:
        notes.append("one run per point: the means decided, not tested against the noise")
    elif points[at][0] > flat.knee:
        notes.append(f"the means reach {percent(fraction, 0)} at {flat.knee:g} job(s); the repetitions show it only at "
                     f"{points[at][0]}")
    return {**row, "saturating_numjobs": float(points[at][0]), "saturating_iodepth": float(points[at][1]),
            "saturating_bw_bytes": float(means[at]), "note": "; ".join(notes)}


def saturation(frame: pd.DataFrame, fraction: float = 0.95, confidence: float = 0.95) -> pd.DataFrame:
    """Per (layout, devices, rw, bs) of a results table: the ``saturation_fraction`` asked, the best, the fewest
    jobs (then lowest iodepth) whose repetitions show ``fraction`` of it (``saturating_numjobs``,
    ``saturating_iodepth``, ``saturating_bw_bytes``; NaN where ``reached`` is False: still rising at
    ``max_numjobs``), the means' knee (``knee_numjobs``), what one job delivers (``one_job_bw_bytes`` with
    ``_lo``/``_hi`` at ``confidence``, ``one_job_iodepth``, ``one_job_reps``, ``one_job_fraction`` of the best)
    and a ``note`` in words (module doc)."""
    if not 0.0 < fraction <= 1.0:
        raise AnalysisError(f"saturation fraction {fraction!r} must lie in (0, 1]")
    if not 0.0 < confidence < 1.0:
        raise AnalysisError(f"confidence {confidence!r} must lie strictly between 0 and 1")
    rows = rates(frame)
    curve = scaling_repetitions(frame, "numjobs", ["bs"]).groupby(GROUP, sort=True, observed=True)
    found = []
    for key, group in rows.groupby(GROUP, sort=True, observed=True):
        envelope = curve.get_group(key)
        flat = plateau(envelope["numjobs"].to_numpy(float), envelope["bw_bytes"].to_numpy(float), fraction,
                       confidence)
        found.append({**dict(zip(GROUP, key)), "saturation_fraction": fraction,
                      **_row(group, flat, fraction, confidence)})
    return pd.DataFrame(found, columns=COLUMNS).astype({c: rows[c].dtype for c in GROUP})
