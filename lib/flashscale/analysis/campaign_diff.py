"""Did it get slower? Two campaigns compared point by point (``flashscale compare A B``).

    points(a, b)                 the points both ran, matched by what ran (``match_columns``), and those only one ran
    changes(a, b, margin)        per shared point and metric: B over A, its 95% interval and the verdict
    chosen(["bw"])               the metrics a comparison reads, by name or short name (``SHORT``)
    gate(changed, "slower", 0)   the rows a pipeline fails on
    sentence(changed)            the comparison in one sentence

A point is what ran: layout, devices, rw, bs, numjobs, iodepth, and where a table has them the number of hosts (and
in a cluster's table the host), the files, the variant, the stage and the workload. Where one table lacks a column
the other has, the points are matched without it. The metrics (``METRICS``): bandwidth and IOPS (higher is
better) and the 99th percentile of completion latency (lower is better), each where both tables have it; or those
of them asked for (``chosen``: the family is then those metrics' verdicts only).

Each change is read by the one rule of ``analysis.agreement``, as the tax is (``significance``): Welch's t test of
the difference of the runs' mean logs on Hsu's degrees of freedom (the two sides may differ in runs and in spread),
every side's spread at least what the measurement resolves (``significance.log_sd_floor`` for a rate; fio's latency
histogram for a percentile: ``LATENCY_STEP``), and the interval of the ratio read against the margin:

    slower        the whole interval beyond the margin, the worse way (less bandwidth or IOPS, more latency)
    faster        the whole interval beyond it, the better way
    equivalent    the whole interval within the margin
    inconclusive  the interval reaches across an edge of the margin; ``runs_to_decide`` says how many runs a side
                  would move it off the edge at the spread measured (``significance.reps_to_decide``)
    one run: no interval   a side has one run: no spread, no verdict

The verdicts of a comparison are controlled together as a report's taxes are (``family.controlled``: every claim a
point and metric could make, slower, faster or equivalent, in one Benjamini-Hochberg family at the verdicts'
one-sided level, 2.5%): a verdict whose claim the family does not hold is said ``inconclusive``, its q beside it.
Measured in tests/test_campaign_diff.py (1,000 simulated comparisons a setting, 24 points, bandwidth): where nothing
changed, a gate on ``slower`` failed in 0 of 1,000 at 3 runs a side of 2% noise and in 0 of 1,000 at 5 runs of
0.5%, within the stated 2.5% (read one verdict at a time, without the family: at least one false "slower" in 0.6%
and 0%); with one device 5% slower, the 12 points it takes no part in were called slower in 0 of 1,000.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import special

from . import family, significance
from .agreement import ONE_RUN, check_margin, grown
from .baseline_and_tax import flag, runs
from .table_checks import POINT
from ..errors import AnalysisError
from ..measure import fio_output

# metric -> (column, higher is better)
METRICS = {"bandwidth": ("bw_bytes", True), "iops": ("iops", True), "p99 latency": ("clat_p99_ns", False)}
SHORT = {"bw": "bandwidth", "iops": "iops", "p99": "p99 latency"}  # as analyze --metric names them
EXTRAS = ("hosts", "nrfiles", "variant", "stage", "workload")  # also name a point, where both tables have them
PLAUSIBLE = (1e-6, 1e16)  # bytes/s, IOPS or ns: what any run can report (10 PB/s; 115 days)
COUNTS = ("devices", "bs", "numjobs", "iodepth", "hosts", "nrfiles")
SLOWER, FASTER, EQUIVALENT, INCONCLUSIVE = "slower", "faster", "equivalent", "inconclusive"
VERDICTS = (SLOWER, FASTER, EQUIVALENT, INCONCLUSIVE, ONE_RUN)
CLAIMED = {"tax": SLOWER, "gain": FASTER, "equivalent": EQUIVALENT, "inconclusive": INCONCLUSIVE, ONE_RUN: ONE_RUN}
LATENCY_STEP = 1 / 64  # fio's latency histogram: 64 buckets to each power of two, so a percentile moves by steps of
# at most 1/64 of itself (FIO_IO_U_PLAT_BITS 6): two p99s that tie differ by less than a step, not by nothing
COLUMNS = ["metric", "n_a", "n_b", "a", "b", "change", "change_lo", "change_hi", "speed_hi", "verdict", "q",
           "held", "runs_to_decide", "said"]


def match_columns(a: pd.DataFrame, b: pd.DataFrame) -> list[str]:
    """The columns that name a point in both tables (module doc; an extra one only where both hold a value in it:
    a blank column is an older table's, not another point); AnalysisError naming those of ``POINT`` one lacks.
    ``host`` only where a table counts ``hosts`` (a cluster's per-host rows): elsewhere the host is the
    machine, a difference of environment, not of what ran."""
    for side, frame in (("A", a), ("B", b)):
        missing = [c for c in POINT if c not in frame.columns]
        if missing:
            raise AnalysisError(f"table {side} lacks column(s) {', '.join(map(repr, missing))}: its points cannot "
                                "be matched by what ran")
    extras = [c for c in EXTRAS if c in a.columns and c in b.columns and a[c].notna().any() and b[c].notna().any()]
    return [*POINT, *extras, *(["host"] if "hosts" in extras and "host" in a and "host" in b else [])]


def measured(frame: pd.DataFrame) -> pd.DataFrame:
    """The runs a comparison reads: measured (``baseline_and_tax.runs``: no warm-up, failed or precondition rows),
    not too short to time, not metadata (files per second, not a rate of bytes)."""
    rows = runs(frame)
    if "too_short" in rows.columns:
        rows = rows[~flag(rows, "too_short")]
    return rows[~rows["rw"].astype(str).isin(list(fio_output.METADATA_OPS))]


def _as_text(frame: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """The keys ``by`` of each row as text, a count as its whole number (4 read from one table, 4.0 or "4" from a
    CSV: one point)."""
    out = {}
    for c in by:
        numbers = pd.to_numeric(frame[c], errors="coerce") if c in COUNTS else None
        whole = numbers is not None and numbers.notna().all() and (numbers == numbers.round()).all()
        out[c] = numbers.astype("int64").astype(str) if whole else frame[c].astype(str)
    return pd.DataFrame(out, index=frame.index)


def _keys(frame: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """The points of ``frame``, one row each, keys as text (``_as_text``)."""
    return _as_text(frame, by).drop_duplicates().reset_index(drop=True)


def points(a: pd.DataFrame, b: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the points both ran, those one ran only with ``side`` A or B), keys as text, by ``match_columns``."""
    by = match_columns(a, b)
    both = _keys(measured(a), by).merge(_keys(measured(b), by), how="outer", indicator=True)
    shared = both[both["_merge"] == "both"].drop(columns="_merge").reset_index(drop=True)
    alone = both[both["_merge"] != "both"].assign(side=lambda t: t["_merge"].map({"left_only": "A",
                                                                               "right_only": "B"}))
    return shared, alone.drop(columns="_merge").reset_index(drop=True)


def _values(rows: pd.DataFrame, column: str) -> np.ndarray:
    """The runs' values of ``column`` that are numbers above 0 (a run without a percentile has none: left out);
    AnalysisError naming one beyond what any device measures (``PLAUSIBLE``)."""
    values = pd.to_numeric(rows[column], errors="coerce").to_numpy(dtype=float) if column in rows else np.array([])
    values = values[np.isfinite(values) & (values > 0)]
    wild = values[(values < PLAUSIBLE[0]) | (values > PLAUSIBLE[1])]
    if wild.size:
        row = rows.iloc[0]
        raise AnalysisError(f"{column} {wild[0]!r} of {row['layout']} {row['rw']} bs {row['bs']} lies outside "
                            f"{PLAUSIBLE[0]:g} to {PLAUSIBLE[1]:g}: not a measurement")
    return values


def _floor(rows: pd.DataFrame, metric: str, values: np.ndarray) -> float:
    """The least spread of one run's log the metric resolves (module doc): a rate's ``log_sd_floor`` (IOPS as the
    bandwidth it is, IOPS x bs), a percentile's ``LATENCY_STEP`` / sqrt(2)."""
    if metric == "p99 latency":
        return LATENCY_STEP / math.sqrt(2.0)
    bs = float(pd.to_numeric(rows["bs"]).iloc[0])
    rate = float(values.mean()) * (bs if metric == "iops" else 1.0)
    runtime = pd.to_numeric(rows["runtime_s"], errors="coerce").mean() if "runtime_s" in rows else math.nan
    given = {"runtime_s": float(runtime)} if math.isfinite(runtime) and runtime > 0 else {}
    return significance.log_sd_floor(rate, block_bytes=int(bs), **given)


def _test(a: np.ndarray, b: np.ndarray, floors: tuple[float, float],
          confidence: float) -> tuple[significance.TaxTest, float]:
    """The tax test of ``b`` against ``a`` (values where higher is better), each side's spread floored: a
    ``significance.TaxTest`` whose tax is 1 - B / A, so that ``practical``, ``verdict_p`` and ``reps_to_decide``
    read it as they read a layout's, and its interval's half-width on the log scale."""
    t = significance.log_t_test(b, a, "welch", floors=(floors[1], floors[0]))
    half = float(special.stdtrit(t.df, (1 + confidence) / 2)) * t.se
    log_sd = t.se / math.sqrt(1 / b.size + 1 / a.size)
    return significance.TaxTest(-math.expm1(t.diff), 1.0 - grown(1.0, t.diff + half), -math.expm1(t.diff - half),
                                t.p_value, "real" if t.p_value < 1 - confidence else "noise", int(b.size),
                                int(a.size), log_sd, t.diff, t.se, t.df), half


def _one(a_rows: pd.DataFrame, b_rows: pd.DataFrame, metric: str, margin: float, confidence: float) -> dict | None:
    """One point's metric compared (``COLUMNS`` but q and held, with the claims' p-values); None where a side has
    none of it."""
    column, higher = METRICS[metric]
    a, b = _values(a_rows, column), _values(b_rows, column)
    if not (a.size and b.size):
        return None
    out = {"metric": metric, "n_a": a.size, "n_b": b.size, "a": a.mean(), "b": b.mean(), "runs_to_decide": None,
           "change": b.mean() / a.mean() - 1, "change_lo": math.nan, "change_hi": math.nan, "speed_hi": math.nan,
           "verdict": ONE_RUN, "tax_verdict": ONE_RUN, **{f"tax_claim_p_{c}": math.nan for c in family.CLAIMS}}
    if a.size < 2 or b.size < 2:
        return out
    speed = (lambda v: v) if higher else (lambda v: 1.0 / v)
    test, half = _test(speed(a), speed(b), (_floor(a_rows, metric, a), _floor(b_rows, metric, b)), confidence)
    said = significance.practical(test, margin)
    log_change = test.log_diff if higher else -test.log_diff  # of the metric itself: latency's is the speed's, negated
    out.update(change_lo=math.expm1(log_change - half), change_hi=grown(1.0, log_change + half) - 1.0,
               speed_hi=grown(1.0, test.log_diff + half), verdict=CLAIMED[said],
               runs_to_decide=significance.reps_to_decide(test, margin, confidence) if said == "inconclusive"
               else None,
               **{f"tax_claim_p_{c}": significance.verdict_p(test, c, margin) for c in family.CLAIMS})
    out["tax_verdict"] = said
    return out


def _grouped(frame: pd.DataFrame, by: list[str]) -> dict[tuple, pd.DataFrame]:
    rows = measured(frame)
    keys = _as_text(rows, by)
    return {key: group for key, group in rows.groupby([keys[c] for c in by], sort=False)}


def chosen(metrics=None) -> tuple[str, ...]:
    """The metrics a comparison reads: every one of ``METRICS`` for None or none, else those named (a name of
    ``METRICS`` or its short name, ``SHORT``), in ``METRICS``' order; AnalysisError naming one it does not know."""
    if metrics is None or isinstance(metrics, str) and not metrics:
        return tuple(METRICS)
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    unknown = [m for m in names if not isinstance(m, str) or SHORT.get(m, m) not in METRICS]
    if unknown:
        raise AnalysisError(f"metric {unknown[0]!r:.60} is not one a comparison reads: choose from "
                            f"{', '.join(SHORT)} ({', '.join(METRICS)})")
    wanted = {SHORT.get(m, m) for m in names}
    return tuple(m for m in METRICS if m in wanted) or tuple(METRICS)


def changes(a: pd.DataFrame, b: pd.DataFrame, margin: float, confidence: float = 0.95,
            metrics=None) -> pd.DataFrame:
    """Each shared point (``points``) and metric (``METRICS``, where both sides have it): its keys (as text), then
    ``COLUMNS`` (only ``metrics``, by ``chosen``, where given): the runs and mean of each side, ``change`` (B / A - 1 of the means) and its interval at
    ``confidence`` (of the ratio of the runs' geometric means), ``speed_hi`` (the interval's upper end on the
    better-is-higher scale: ``gate``'s threshold reads it), the ``verdict`` controlled as a family (module doc),
    its ``q`` and whether the family ``held`` it, ``runs_to_decide`` (an inconclusive verdict's runs a side, None
    where no number would) and ``said``: the verdict in words. Largest changes first."""
    margin, read = check_margin(margin), chosen(metrics)
    if not 0.0 < confidence < 1.0:
        raise AnalysisError(f"confidence {confidence!r} must lie strictly between 0 and 1")
    shared, _ = points(a, b)
    by = list(shared.columns)
    groups_a, groups_b = _grouped(a, by), _grouped(b, by)
    rows = []
    for key in shared.itertuples(index=False, name=None):
        for metric in read:
            one = _one(groups_a[key], groups_b[key], metric, margin, confidence)
            if one is not None:
                rows.append({**dict(zip(by, key)), **one})
    if not rows:
        return pd.DataFrame(columns=[*by, *COLUMNS])
    table = family.controlled(pd.DataFrame(rows).assign(tax_confidence=confidence))
    return _said(table, margin)[[*by, *COLUMNS]].sort_values(
        "change", key=lambda c: -np.log1p(c.astype(float)).abs(), kind="mergesort", ignore_index=True)


def _said(table: pd.DataFrame, margin: float) -> pd.DataFrame:
    """The family's reading (``family.controlled``'s ``tax_q``, ``tax_held``) made the verdict: a claim it does
    not hold is inconclusive; each verdict in words."""
    held = table["tax_held"]
    lost = held.notna() & ~held.fillna(True).astype(bool)
    verdict = table["verdict"].mask(lost, INCONCLUSIVE)
    said = [_words(v, r, was if gone else None, q, margin) for v, r, was, gone, q in
            zip(verdict, table["runs_to_decide"], table["verdict"], lost, table["tax_q"])]
    return table.assign(verdict=verdict, q=table["tax_q"], held=held, said=said,
                        runs_to_decide=pd.array(table["runs_to_decide"], dtype="Int64"))


def _words(verdict: str, runs_to_decide, lost: str | None, q: float, margin: float) -> str:
    """A verdict in words: "slower beyond the 2% margin", "inconclusive: about 7 runs a side would decide"."""
    edge = f"{100 * margin:g}%"
    if lost is not None:
        return f"inconclusive: {lost} alone, not held among all the verdicts (q = {q:.3g})"
    if verdict in (SLOWER, FASTER):
        return f"{verdict} beyond the {edge} margin"
    if verdict == EQUIVALENT:
        return f"equivalent within the {edge} margin"
    if verdict == INCONCLUSIVE:
        runs = "no number of runs would, at this estimate" if pd.isna(runs_to_decide) else \
            f"about {int(runs_to_decide)} runs a side would decide"
        return f"inconclusive across the {edge} margin: {runs}"
    return f"{ONE_RUN}: a side has one run"


def gate(changed: pd.DataFrame, fail_on: str = SLOWER, beyond: float = 0.0) -> pd.DataFrame:
    """The rows a pipeline fails on: verdict ``fail_on`` (``slower``; ``inconclusive`` fails on those too), and for
    slower ones by at least ``beyond`` (a fraction: the whole interval of B / A at most 1 - ``beyond`` on the
    better-is-higher scale)."""
    if fail_on not in (SLOWER, INCONCLUSIVE):
        raise AnalysisError(f"--fail-on {fail_on!r}: expected 'slower' or 'inconclusive'")
    if isinstance(beyond, bool) or not isinstance(beyond, (int, float)) or not 0.0 <= beyond < 1.0:
        raise AnalysisError(f"a gate's threshold {beyond!r} must be a fraction in [0, 1), e.g. 0.05 for 5%")
    slower = (changed["verdict"] == SLOWER) & (changed["speed_hi"].astype(float) <= 1.0 - beyond)
    if fail_on == INCONCLUSIVE:
        return changed[slower | changed["verdict"].isin([INCONCLUSIVE, ONE_RUN])]
    return changed[slower]


def sentence(changed: pd.DataFrame, alone: pd.DataFrame) -> str:
    """The comparison in one sentence: how many verdicts of each kind, and the points only one side ran."""
    if changed.empty:
        head = "Nothing to compare: the two share no measured point."
    else:
        counts = changed["verdict"].value_counts()
        parts = [f"{int(counts[v])} {v}" for v in VERDICTS if v in counts]
        head = (f"{len(changed)} verdict(s) on {_count_points(changed)} shared point(s): {', '.join(parts)} "
                "(controlled together: a false discovery rate at the verdicts' one-sided level).")
    if alone.empty:
        return head
    sides = alone["side"].value_counts()
    return head + " " + "; ".join(f"{int(sides[s])} point(s) only in {s}" for s in ("A", "B") if s in sides) + "."


def _count_points(changed: pd.DataFrame) -> int:
    return len(changed.drop(columns=COLUMNS).drop_duplicates())
