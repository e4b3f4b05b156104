"""Predictions stated before measuring, scored after (``predict.score``), as a report says them.

    scored = scored.against(result.predictions, result.table, margin)   # empty when nothing was predicted
    scored.for_people(scored)        # one row a point: predicted with its interval, measured, error, what bound,
                                     # and whether the two agree (``analysis.agreement``, the one rule)
    scored.undecided_sentences(scored, margin)   # the points the rule could not decide (wide, or one run)
    scored.interval_sentences(scored)   # how many points had an interval with two ends (the model's, or the
                                     # table's own: ``conformal``), how many held the measurement; how many open
    scored.unexplained_sentences(scored, margin)   # the tax re-read: what the model did not explain, per layout/rw
    scored.largest_errors(scored)    # {"jbod/read": 0.004, ...}: the largest |error| per layout and rw
    scored.repeatability(scored)     # jbod at 1 job against the single device: the machine's own drift, which
                                     # excuses the errors at every other point, never at its own (``drift``)
    scored.at_best(scored)           # per layout and rw: the best measured point against its prediction

``predict.outside_sentences`` names each point outside its predicted interval by more than the margin;
``outside_sentences`` says the same of a cluster's points with the hosts that ran them.

A cluster's predictions (``analysis.cluster_numbers.predict_hosts``) name each point's ``hosts`` and ``host`` (``all`` for
the cluster's own row): each host count's and host's rows are scored against their own prediction
(``CLUSTER_COLUMNS`` shows them), ``bound_sentences`` says which term bound each layout and how close it came.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .. import agreement, baseline_and_tax
from . import bounds, conformal, predict
from ...errors import AnalysisError
from ...layouts import describe
from ..cluster_numbers import ALL
from ..significance import DEFAULT_MARGIN
from ...measure.units import ONE_RUN, interval, percent, rate

COLUMNS = ["layout", "devices", "rw", "numjobs", "predicted_bw_bytes", "measured_bw_bytes", "error",
           "predicted_limit", "inside"]
SCORE_COLUMNS = ["bs", "iodepth", "predicted_lo", "predicted_hi", "measured_reps", "in_interval", "agreement",
                 "beyond_margin", "unexplained"]  # the rest of what predict.score gives that this module reads
KINDS = {"error": "percent", "inside": "text", "predicted_limit": "text", "host": "text", "interval": "text",
         "meets": "text"}
CLUSTER = ["hosts", "host"]  # what else names a cluster's point: how many hosts ran it, and which (or all)
CLUSTER_COLUMNS = [*COLUMNS[:1], *CLUSTER, *COLUMNS[1:]]


def against(predictions: pd.DataFrame, frame: pd.DataFrame, margin: float = DEFAULT_MARGIN) -> pd.DataFrame:
    """``predict.score`` of a campaign's stated ``predictions`` against its results ``frame``; an empty frame when
    the campaign stated none (no single-device baseline was measured first). A cluster's predictions (a ``host``
    column) are scored per host count and host against that host's rows (``all``: the cluster's), those of a host
    count not measured left out. A prediction stated after what it predicts began to run is refused
    (``stated_before``)."""
    if predictions is None or predictions.empty:
        return pd.DataFrame(columns=[*COLUMNS, *SCORE_COLUMNS])
    stated_before(predictions, frame)
    if "host" not in predictions.columns:
        return predict.score(predictions, frame, margin=margin).sort_values(
            ["layout", "rw", "bs", "iodepth", "numjobs"]).reset_index(drop=True)
    parts = []  # a cluster's: each host count's and host's rows against their own prediction
    for (hosts, host), stated in predictions.groupby(CLUSTER, sort=True):
        rows = frame[(frame["hosts"] == hosts) & (frame["host"].astype(str) == str(host))]
        if not baseline_and_tax.runs(rows).empty:  # a host count not measured (yet) scores nothing
            parts.append(predict.score(stated, rows, margin=margin))
    if not parts:
        return pd.DataFrame(columns=[*CLUSTER_COLUMNS, *SCORE_COLUMNS])
    return pd.concat(parts, ignore_index=True).sort_values(
        ["layout", "rw", "hosts", "host", "bs", "iodepth", "numjobs"]).reset_index(drop=True)


INSIDE = {agreement.SAME: "agrees", agreement.ABOVE: "above, beyond the margin",
          agreement.BELOW: "below, beyond the margin", agreement.UNDECIDED: "undecided",
          agreement.NO_INTERVAL: ONE_RUN}  # the one rule's verdict (``predict.score``'s ``agreement``) in words


def stated_before(predictions: pd.DataFrame, frame: pd.DataFrame) -> None:
    """Refuse, naming both times, a prediction whose ``predicted_at`` is after the first run of what it predicts
    (the earliest ``started_at`` of its layout's measured rows, of its host count's for a cluster; a cluster's
    precondition writes the files of every host count at once, before the first is stated): not stated before.
    Both are ISO 8601 with their zone, to the microsecond since ``results.now``; stamps of whole seconds that fall
    in the same second cannot be told apart and pass. Nothing to check where either time is not recorded."""
    if "predicted_at" not in predictions.columns or "started_at" not in frame.columns or frame.empty:
        return
    keys = ["layout", *(["hosts"] if {"hosts"} <= set(predictions.columns) & set(frame.columns) else [])]
    if "phase" in frame.columns:  # the runs measured (warm-up too); a precondition only writes what they read
        frame = frame[frame["phase"].astype("string").fillna("measure").eq("measure")]
    said = predictions.assign(_at=pd.to_datetime(predictions["predicted_at"], utc=True, format="ISO8601",
                                                 errors="coerce")).dropna(subset=["_at"])
    ran = frame.assign(_at=pd.to_datetime(frame["started_at"], utc=True, format="ISO8601", errors="coerce"))
    first = ran.dropna(subset=["_at"]).sort_values("_at").groupby(keys, sort=False).head(1)
    last = said.sort_values("_at").groupby(keys, sort=False).tail(1)
    late = last.merge(first, on=keys, suffixes=("", "_run"))
    late = late[late["_at"] > late["_at_run"]]
    if not late.empty:
        r = late.iloc[0]
        what = r["layout"] + (f" on {baseline_and_tax.count_of(r['hosts'], 'host')}" if "hosts" in keys else "")
        raise AnalysisError(f"the prediction of {what} was stated at {r['predicted_at']}, after its first run "
                            f"started at {r['started_at']}: not stated before, so it is not scored as a prediction")


MEETS = {True: "yes", False: "no"}  # ``interval_meets`` in words, where the interval is closed at both ends
OPEN = "not scored (an open end)"  # an interval with an open end meets everything on that side: it cannot miss


def meets_words(scored: pd.DataFrame) -> list[str]:
    """Per point, whether the measurement lies inside the interval with two ends it is scored by
    (``conformal.two_ended``: ``scored_inside``): ``yes`` or ``no``, "(the table's 90%)" beside it where the table's
    own interval closed what the model left open; ``OPEN`` where neither has two ends (too few other points);
    ``unknown`` where nothing was scored. Without ``scored_inside`` (``fewer``'s fits), whether the measured
    interval meets the predicted one closed at both ends (``interval_meets``), ``OPEN`` where an end is open (an open
    end reaches everything on its side, so "meets" would be true by construction)."""
    if "scored_inside" in scored.columns:
        return ["unknown" if not np.isfinite(point) else OPEN if not isinstance(inside, (bool, np.bool_))
                else MEETS[bool(inside)] + (f" ({conformal.TABLE}'s {percent(level, 0)})"
                                            if source == conformal.TABLE else "")
                for inside, source, level, point in zip(
                    scored["scored_inside"].astype(object).where(scored["scored_inside"].notna(), None),
                    scored["scored_from"], scored["scored_level"], scored["predicted_bw_bytes"].astype(float))]
    meets = scored["interval_meets"] if "interval_meets" in scored.columns else pd.Series(None, index=scored.index)
    said = []
    for lo, hi, met in zip(scored["predicted_lo_bw_bytes"], scored["predicted_hi_bw_bytes"], meets):
        if not isinstance(met, (bool, np.bool_)):
            said.append("unknown")
        else:
            said.append(MEETS[bool(met)] if bounds.closed(lo, hi) else OPEN)
    return said


def interval_sentences(scored: pd.DataFrame) -> list[str]:
    """The headline of the intervals, both shares named: how many scored points had an interval with two ends (the
    model's, or the table's where the model left an end open: ``conformal``) and how many of them held the
    measurement, how many were left open (not scored), and the median |error|; then which run would close the
    model's open ends (``bounds.closing_sentences``). Nothing where no point was scored against such an interval
    (predictions stated before it existed)."""
    if "scored_inside" not in scored.columns:
        return _met_sentences(scored)
    said = scored[np.isfinite(scored["predicted_bw_bytes"].astype(float))]  # predicted: no fit is no point
    if said.empty:
        return [f"None of {len(scored)} point(s) was predicted: no interval to score."] if len(scored) else []
    two, level = said["scored_inside"].notna(), float(said["scored_level"].iloc[0])
    model, inside = int(said["scored_from"].eq(conformal.MODEL).sum()), int(said["scored_inside"].eq(True).sum())
    table = "empirical_lo_bw_bytes" in said.columns  # the table's own interval was tried (``two_ended``)
    head = (f"{int(two.sum())} of {len(said)} scored point(s) had an interval with two ends ({model} the model's"
            + (f", {int(two.sum()) - model} {conformal.TABLE}'s own at {percent(level, 0)} where the model left an end "
               "open)" if table else ")"))
    head += f": the measurement lay inside {inside} of them ({percent(inside / two.sum(), 0)})" if two.any() else ""
    if not two.all():
        head += f"; {int((~two).sum())} left open, not scored" + (
            f" (the table's interval needs {conformal.least_others(level)} other points at {percent(level, 0)}, "
            f"each had {len(said) - 1})"
            if table else "")
    if len(said) < len(scored):
        head += f"; {len(scored) - len(said)} not predicted"
    errors = scored["error"].abs().dropna()
    tail = f" Median |error| {percent(float(errors.median()))} over {len(errors)} point(s)." if len(errors) else ""
    return [head + "." + tail, *conformal.table_sentences(said), *bounds.closing_sentences(scored)]


def _met_sentences(scored: pd.DataFrame) -> list[str]:
    """``interval_sentences`` of intervals scored by whether the measured interval meets them (``fewer``'s)."""
    if "predicted_lo_bw_bytes" not in scored.columns or "interval_meets" not in scored.columns:
        return []
    words = pd.Series(meets_words(scored), index=scored.index)
    closed, open_ = int(words.isin(list(MEETS.values())).sum()), int(words.eq(OPEN).sum())
    if closed + open_ == 0:
        return []
    met = int(words.eq(MEETS[True]).sum())
    head = (f"{closed} of {closed + open_} scored point(s) had a predicted interval closed at both ends: the "
            f"measurement met {met} of them ({percent(met / closed, 0)})" if closed else
            f"None of {open_} scored point(s) had a predicted interval closed at both ends: none could miss")
    tail = (f"; {open_} had an open end, not scored as met (an open end meets everything on its side)"
            if open_ and closed else " (each has an open end, not scored as met)" if open_ else "")
    return [head + tail + "."]


def for_people(scored: pd.DataFrame) -> pd.DataFrame:
    """One row a point: the prediction with its interval (``predicted_bw_bytes_lo``/``_hi``, which ``tables.show``
    writes beside it; none where the single device behind it had one run, ``predicted_reps``), the measured mean
    (its own interval left to the figure), the error, the term that bound, and
    whether the measurement agrees with the prediction by the one rule (``analysis.agreement``: the interval of
    their ratio within the margin): "agrees", "above, beyond the margin", "below, beyond the margin", "undecided"
    (their interval reaches across the margin's edge: more runs would tell), "one run: no interval" (no verdict
    can be given), or "unknown" (nothing predicted); ``interval``, the interval the unknowns leave in words
    (``bounds.words``: an open end said), and ``meets``, whether the measured interval meets it (yes, no; ``OPEN``
    where an end is open: ``meets_words``)."""
    said = scored["agreement"] if "agreement" in scored.columns else pd.Series(None, index=scored.index)
    inside = [INSIDE.get(v, "unknown") if isinstance(v, str) else "unknown" for v in said]
    shown = scored.drop(columns=["measured_bw_bytes_lo", "measured_bw_bytes_hi"], errors="ignore")
    limits = [predict.limit_words(limit, close) for limit, close in zip(scored["predicted_limit"], _close(scored))]
    once = scored["predicted_reps"] < 2 if "predicted_reps" in scored.columns else False  # one run: no interval
    shown = shown.assign(predicted_bw_bytes_lo=scored["predicted_lo"].mask(once),
                         predicted_bw_bytes_hi=scored["predicted_hi"].mask(once), inside=inside, predicted_limit=limits)
    if "predicted_lo_bw_bytes" not in scored.columns:  # stated before the unknowns' interval existed
        return shown
    unknown = scored["predicted_unknown"] if "predicted_unknown" in scored.columns else [bounds.LAYER_CPU] * len(scored)
    said = [bounds.words(lo, hi, why) for lo, hi, why in zip(scored["predicted_lo_bw_bytes"],
                                                            scored["predicted_hi_bw_bytes"], unknown)]
    if "scored_from" in scored.columns:  # where the table's own interval closed what the model left open
        said = [f"{words}; {conformal.TABLE}'s {percent(level, 0)}: {interval(lo, hi)}" if source == conformal.TABLE
                else words for words, source, level, lo, hi in zip(said, scored["scored_from"], scored["scored_level"],
                                                                   scored["scored_lo_bw_bytes"],
                                                                   scored["scored_hi_bw_bytes"])]
    return shown.assign(interval=said, meets=meets_words(scored))


def undecided_sentences(scored: pd.DataFrame, margin: float = DEFAULT_MARGIN) -> list[str]:
    """How many points the one rule could not decide, and why: "3 point(s) undecided: the interval of measured over
    predicted reaches across the 2% margin (more runs would tell)", "2 point(s) of one run: no interval, so no
    verdict can be given"; nothing where every point was decided."""
    said = scored["agreement"] if "agreement" in scored.columns else pd.Series(dtype=object)
    undecided, once = int(said.eq(agreement.UNDECIDED).sum()), int(said.eq(agreement.NO_INTERVAL).sum())
    out = [f"{undecided} point(s) undecided: the interval of measured over predicted reaches across the "
           f"{percent(margin, 0)} margin (more runs would tell)"] if undecided else []
    return out + ([f"{once} point(s) of {ONE_RUN}, so no verdict can be given"] if once else [])


def _close(scored: pd.DataFrame) -> pd.Series:
    """Each point's terms within ``predict.CLOSE`` of the binding one, "" where none (or predictions stated before
    they were named)."""
    if "predicted_close" not in scored.columns:
        return pd.Series("", index=scored.index)
    return scored["predicted_close"].astype("string").fillna("").astype(str)


def unexplained_sentences(scored: pd.DataFrame, margin: float = DEFAULT_MARGIN) -> list[str]:
    """Per layout and rw, the tax read against the prediction: what the term that bound (its devices alone, at these
    jobs, or a ceiling: memory, the network, the CPUs) allowed, and how much of it the layout did not deliver
    (``unexplained``), from its smallest to its largest."""
    out = []
    for (layout, devices, rw), group in scored.groupby(["layout", "devices", "rw"], sort=True):
        short = group["unexplained"].dropna()
        if short.empty:
            continue
        lo, hi = float(short.min()), float(short.max())
        named = group.loc[short.index]
        where, bound = f"{layout} on {devices} devices, {rw}", _bound(named["predicted_limit"], _close(named))
        if max(abs(lo), abs(hi)) <= margin:
            out.append(f"{where}: within {percent(margin, 0)} of its prediction at every point: {bound} explain"
                       f"{'s' if bound.endswith('ceiling') else ''} it, nothing is left for the layout to cost.")
        elif lo >= 0:
            out.append(f"{where}: {_span(lo, hi)} below its prediction: what {bound} allowed at these jobs and this "
                       "layout did not deliver, its cost the model of N devices does not explain.")
        else:
            out.append(f"{where}: from {percent(-lo)} above to {percent(hi)} below its prediction"
                       if hi > 0 else f"{where}: {_span(-hi, -lo)} above its prediction")
            out[-1] += f": more than {bound} should allow, which the model does not explain either."
    return out


def _bound(limits: pd.Series, close: pd.Series | None = None) -> str:
    """What held a layout's predictions, in words: "its devices alone", "the memory ceiling", or several (those
    within ``predict.CLOSE`` of the binding term, ``close``, among them)."""
    terms = set(limits.astype(str)) | {t for each in ([] if close is None else close) for t in str(each).split(",")}
    terms = sorted(terms - {""})
    if terms == ["devices"] or not terms:
        return "its devices alone"
    if len(terms) == 1:
        return f"the {terms[0]} ceiling"
    return f"the terms that bound ({', '.join(terms)})"


def _span(lo: float, hi: float) -> str:
    return percent(lo) if round(lo, 3) == round(hi, 3) else f"{percent(lo)} to {percent(hi)}"


def largest_errors(scored: pd.DataFrame) -> dict[str, float]:
    """The largest |measured / predicted - 1| per layout and rw, ``layout/rw``; a cluster's per layout, rw and host
    count of its own (``host`` all) points, ``layout/rw/hosts``."""
    scored, keys = _own(scored)
    errors = scored.assign(size=scored["error"].abs()).groupby(keys, sort=True)["size"].max()
    return {"/".join(map(str, key)): float(value) for key, value in errors.items()}


def _own(scored: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The points a campaign's summary speaks of and their keys: all of them by layout and rw; of a cluster, its own
    (``host`` all) by layout, rw and host count."""
    if "host" in scored.columns:
        return scored[scored["host"] == ALL], ["layout", "rw", "hosts"]
    return scored, ["layout", "rw"]


def at_best(scored: pd.DataFrame) -> pd.DataFrame:
    """Per layout and rw, the point measured best (the largest mean of its repetitions) and what was predicted for
    it: how the prediction did where the layout is at its best, the question a buyer asks. A cluster's per layout,
    rw and host count, of its own (``host`` all) points."""
    scored, keys = _own(scored)
    scored = scored.dropna(subset=["measured_bw_bytes"])
    columns = [*keys, "devices", "bs", "numjobs", "iodepth", "measured_bw_bytes", "predicted_bw_bytes", "error",
               "predicted_limit", "predicted_close"]
    if scored.empty:
        return pd.DataFrame(columns=columns)
    best = scored.loc[scored.groupby(keys, sort=True)["measured_bw_bytes"].idxmax()]
    return best.assign(predicted_close=_close(best))[columns].reset_index(drop=True)


def at_best_sentences(scored: pd.DataFrame, margin: float = DEFAULT_MARGIN) -> list[str]:
    """``at_best`` in words: "jbod read: best 10.8 GB/s (4 devices, bs 1048576, 2 jobs, iodepth 1), predicted
    10.1 GB/s, +6.4%; the cpu (devices within 5%) bound; beyond this machine's read drift (2.5%)", the error held
    to the rw's ``drift`` measured at the other points (never at its own) against the report's ``margin``; a
    cluster's with its hosts ("nbd write on 2 hosts: ...")."""
    out = []
    for r in at_best(scored).itertuples(index=False):
        hosts = f" on {baseline_and_tax.count_of(r.hosts, 'host')}" if hasattr(r, "hosts") else ""
        out.append(f"{r.layout} {r.rw}{hosts}: best {rate(r.measured_bw_bytes)} ({r.devices} devices, bs "
                   f"{r.bs}, {baseline_and_tax.count_of(r.numjobs, 'job')}, iodepth {r.iodepth}), predicted "
                   f"{rate(r.predicted_bw_bytes)}, {percent(r.error, signed=True)}; the "
                   f"{predict.limit_words(r.predicted_limit, r.predicted_close)} bound"
                   + predict.drift_words(r.error, r.rw, drift(scored, leave_out=r), margin))
    return out


def repeatability(scored: pd.DataFrame) -> pd.DataFrame:
    """How closely this machine repeats a measurement minutes apart: the points of a layout of one target per device
    (jbod) that keep a single device busy with one job, exactly as the baseline ran it (``predicted_exact``: same
    rw, bs, iodepth and job count, nothing nearest or interpolated stood in): per layout and rw, the measured mean,
    the single device's (``single_bw_bytes``, the devices' term) and ``error`` = measured / single - 1. Nothing but
    time separates the two measurements, so a prediction's error, or a tax, smaller than this cannot be told from
    the machine's own drift. Empty where no such point was measured (a cluster's points have a baseline of their
    own and are left out, and so are points stated before ``predicted_exact`` existed)."""
    columns = ["layout", "rw", "bs", "iodepth", "measured_bw_bytes", "single_bw_bytes", "error"]
    needed = {"busy_devices", "numjobs", "devices_limit_bw_bytes", "measured_bw_bytes"}
    if scored.empty or "host" in scored.columns or not needed <= set(scored.columns):
        return pd.DataFrame(columns=columns)
    exact = scored["predicted_exact"].astype("boolean").fillna(False) if "predicted_exact" in scored.columns \
        else False
    several = {name for name in set(scored["layout"].astype(str))
               if describe(name).per_device and not describe(name).first_device_only}  # jbod: its own jobs each
    alone = scored[scored["layout"].astype(str).isin(several)
                   & (scored["busy_devices"] == 1) & (scored["numjobs"] == 1) & exact]
    alone = alone.dropna(subset=["measured_bw_bytes", "devices_limit_bw_bytes"])
    out = alone.assign(single_bw_bytes=alone["devices_limit_bw_bytes"],
                       error=alone["measured_bw_bytes"] / alone["devices_limit_bw_bytes"] - 1)
    return out[columns].sort_values(["layout", "rw", "bs", "iodepth"]).reset_index(drop=True)


def drift(scored: pd.DataFrame, leave_out=None) -> dict[str, float]:
    """Per rw, the largest ``repeatability`` error by size, over every layout and point that measured it: how far
    two measurements of one point drift apart on this machine; no rw where none was measured. ``leave_out``: a
    scored point (a row) whose own repeatability is left out, so that the drift that excuses a point's error is
    always measured at another point: jbod at one job repeats the single device's point, so its error there *is*
    the difference the drift is made of, and would excuse itself."""
    measured = repeatability(scored)
    if leave_out is not None and int(getattr(leave_out, "numjobs", 0)) == 1:
        same = ((measured["layout"] == getattr(leave_out, "layout")) & (measured["rw"] == getattr(leave_out, "rw"))
                & (measured["bs"] == getattr(leave_out, "bs")) & (measured["iodepth"] == getattr(leave_out, "iodepth")))
        measured = measured[~same]
    return {rw: float(group["error"].abs().max()) for rw, group in measured.groupby("rw", sort=True)}


def repeatability_sentences(scored: pd.DataFrame) -> list[str]:
    """``repeatability`` in words, a sentence per layout: "jbod at 1 job keeps one device busy, as the single device
    was before it: read 4,946 MB/s against its 4,899 MB/s (+1.0%), write ...: this machine repeats a measurement to
    within ...%"."""
    out = []
    for layout, group in repeatability(scored).groupby("layout", sort=True):
        several = len(group[["bs", "iodepth"]].drop_duplicates()) > 1  # then each part names its point
        parts = [f"{r.rw}{f' (bs {r.bs}, iodepth {r.iodepth})' if several else ''} "
                 f"{rate(r.measured_bw_bytes)} against its {rate(r.single_bw_bytes)} ({percent(r.error, signed=True)})"
                 for r in group.itertuples()]
        largest = group["error"].abs().max()
        out.append(f"{layout} at 1 job keeps one device busy, as the single device was before it: "
                   f"{', '.join(parts)}. The same device, file system and job, minutes apart and built again: this "
                   f"machine repeats a measurement to within {percent(largest)}, and a prediction's error or a tax smaller "
                   "than that cannot be told from its drift. That drift is held against the errors at the other "
                   f"points, never against {layout}'s own at 1 job, where it was measured.")
    return out


def outside_sentences(scored: pd.DataFrame, margin: float = DEFAULT_MARGIN) -> list[str]:
    """``predict.outside_sentences`` against the report's ``margin``, each point held to its rw's ``drift`` measured
    at the other points (never at its own) where the machine's repeatability was measured; a cluster's, each with
    the hosts that ran the point: "the cluster of 2 hosts: nbd write, 4 devices, ...; the network bound", "host1 of
    2 hosts: ..."."""
    if "host" not in scored.columns:
        beyond = scored[scored["beyond_margin"].fillna(False).astype(bool)]
        return [line for i, row in zip(beyond.index, beyond.itertuples(index=False))
                for line in predict.outside_sentences(beyond.loc[[i]], drift(scored, leave_out=row), margin)]
    out = []
    for (hosts, host), group in scored.groupby(CLUSTER, sort=True):
        who = "the cluster" if host == ALL else str(host)
        out += [f"{who} of {baseline_and_tax.count_of(hosts, 'host')}: {line}"
                for line in predict.outside_sentences(group, margin=margin)]
    return out


def bound_sentences(scored: pd.DataFrame) -> list[str]:
    """Per layout and rw of a cluster's scored points (``host`` all), the term that bound and how close the
    prediction came: "nbd write: the network bound on 1 and 2 hosts; measured within 0.4% of the prediction at
    every point (largest error -0.4%, 2 hosts, 4 jobs)"."""
    cluster = scored[scored["host"] == ALL] if "host" in scored.columns else scored
    out = []
    for (layout, rw), group in cluster.dropna(subset=["error"]).groupby(["layout", "rw"], sort=True):
        counts = sorted(group["hosts"].unique()) if "hosts" in group.columns else [1]
        terms = sorted({predict.limit_words(limit, close) for limit, close in zip(group["predicted_limit"],
                                                                                   _close(group))})
        bound = f"the {terms[0]} bound" if len(terms) == 1 else f"{', '.join(terms)} bound at different points"
        worst = group.loc[group["error"].abs().idxmax()]
        hosts = " and ".join(filter(None, [", ".join(map(str, counts[:-1])), str(counts[-1])]))
        hosts += " host" + ("s" if counts != [1] else "")
        out.append(f"{layout} {rw}: {bound} on {hosts}; measured within {percent(abs(worst['error']))} of the "
                   f"prediction at every point (largest error {percent(worst['error'], signed=True)}, "
                   f"{baseline_and_tax.count_of(worst.get('hosts', 1), 'host')}, {baseline_and_tax.count_of(worst['numjobs'], 'job')})")
    return out
