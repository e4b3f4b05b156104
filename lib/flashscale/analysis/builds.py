"""Builds as replicates (BUILDS): how much a point's rate varies between builds of its layout (a new mkfs, a new
array) and how much between runs on one build.

Pure functions. A one-way random-effects ANOVA of each point's runs grouped by ``build``, on the log of the rates
(storage noise is multiplicative, so the components are relative: a standard deviation of 0.02 is about 2% of the
rate): the mean squares between and within builds, MSB and MSW, give the within-build variance MSW and the
between-build component max(0, (MSB - MSW) / n0), n0 the runs a build for balanced builds (n0 = (N - sum n_i^2 / N)
/ (k - 1) otherwise). Both are shown; the interval does not choose by them. Built more than once, a point's
interval is always over its builds' means (the builds are the replicates: k of them, k - 1 degrees of freedom;
``replicates`` says ``builds``), built once over its runs (``runs``). Choosing by a pretest (the builds' means only
where the between-build component came out the larger) breaks the interval's promise: where builds do vary, the
pretest often reads them as not varying, and the interval over every run then leaves the builds' spread out. On
log-normal builds and runs (benchmarks/stats_builds.py: builds 2-3, runs 2-5, between 0-5%, within 0.5-5%, 3,000
draws a setting) the pretest's 95% interval covered the level the builds are drawn around in as few as 76.6% of
draws (2 builds) and 78.6% (3), the builds' means in 94.4-95.8% of every setting (tests/test_builds.py holds four).
Intervals through ``stats.interval_t`` (the log-scale interval of a positive rate): this module writes none of its
own.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from . import baseline_and_tax, stats
from .table_checks import POINT
from ..measure.units import bounds, percent, rate, size

NAN = float("nan")
COLUMNS = [*POINT, "builds", "runs", "between_build_sd", "within_build_sd", "replicates", "bw_bytes", "bw_bytes_lo",
           "bw_bytes_hi"]


def more_than_once(frame: pd.DataFrame) -> bool:
    """Whether any layout of ``frame`` was built more than once (a measured run's ``build`` other than 0; the
    reference's bracket, BRACKET, is a build of its own but no replicate)."""
    if "build" not in frame.columns:
        return False
    swept = baseline_and_tax.runs(frame)
    return bool((pd.to_numeric(swept["build"], errors="coerce").fillna(0) > 0).any())


def one_way(groups: list[np.ndarray]) -> tuple[float, float]:
    """The between-group and within-group variance components of ``groups`` (one-way random effects, method of
    moments): (max(0, (MSB - MSW) / n0), MSW). NaN where a component has no degree of freedom (one group; no group
    of two or more)."""
    groups = [np.asarray(g, dtype=float) for g in groups if len(g)]
    sizes = np.array([g.size for g in groups])
    total, k = int(sizes.sum()), len(groups)
    if k == 0:
        return NAN, NAN
    grand = float(np.concatenate(groups).mean())
    within_df = total - k
    within = float(sum(((g - g.mean()) ** 2).sum() for g in groups) / within_df) if within_df > 0 else NAN
    if k < 2 or np.isnan(within):
        return NAN, within
    between_ms = float(sum(g.size * (g.mean() - grand) ** 2 for g in groups) / (k - 1))
    n0 = (total - float((sizes ** 2).sum()) / total) / (k - 1)
    return max(0.0, (between_ms - within) / n0), within


def interval_over(groups: list[np.ndarray], confidence: float = 0.95) -> tuple[str, float, float, float]:
    """A point's replicates and interval from its runs grouped by build: (``builds``, the mean of the builds' means
    and their interval) where there is more than one build, else (``runs``, the runs' mean and interval)."""
    groups = [np.asarray(g, dtype=float) for g in groups if len(g)]
    over_builds = len(groups) > 1
    values = np.array([g.mean() for g in groups]) if over_builds else np.concatenate(groups)
    lo, hi = stats.interval_t(values, confidence)
    return ("builds" if over_builds else "runs", float(values.mean()), lo, hi)


def components(frame: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Per point (``POINT``) of ``frame``'s measured rates (``baseline_and_tax.rates``): its ``builds`` and ``runs``,
    the between- and within-build standard deviations of the log rate (``one_way``; about the relative spread),
    ``replicates`` (``builds`` where the point was built more than once: the interval is over the builds' means;
    else ``runs``: ``interval_over``) and ``bw_bytes`` with its interval (``stats.interval_t``). Rows without
    ``build`` are one build (0)."""
    rows = baseline_and_tax.rates(frame)
    if "build" not in rows.columns:
        rows = rows.assign(build=0)
    rows = rows.assign(build=rows["build"].fillna(0).astype(int))
    out = []
    for key, point in rows.groupby(POINT, sort=True, observed=True):
        groups = [g["bw_bytes"].to_numpy(float) for _, g in point.groupby("build", sort=True)]
        between, within = one_way([np.log(g) for g in groups])
        out.append((*key, len(groups), int(point.shape[0]), float(np.sqrt(between)), float(np.sqrt(within)),
                    *interval_over(groups, confidence)))
    return pd.DataFrame(out, columns=COLUMNS)


def sentences(table: pd.DataFrame) -> list[str]:
    """The components in words, a sentence per point built more than once (``components``' table)."""
    said = []
    for r in table[table["builds"] > 1].itertuples(index=False):
        whose = (f"the {r.builds} builds' means are its replicates" if r.replicates == "builds"
                 else "its runs are its replicates")
        said.append(f"{r.layout} {r.rw} {size(r.bs)} x {r.numjobs} jobs: {rate(r.bw_bytes)} "
                    f"({bounds(r.bw_bytes_lo, r.bw_bytes_hi)}) from {r.runs} runs on {r.builds} builds; between "
                    f"builds {percent(r.between_build_sd, 2)}, within a build {percent(r.within_build_sd, 2)} "
                    f"(standard deviations of the log rate): {whose}")
    return said


def over_builds(summary: pd.DataFrame, frame: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """``summary`` (``stats.summary_intervals``) with ``builds`` (of its best point) and ``replicates`` per row, and,
    where the builds are the replicates (built more than once: ``components``), ``best_bw_bytes_lo/hi`` taken over
    the builds' means instead of the runs. ``summary`` itself is not changed."""
    table = components(frame, confidence).rename(
        columns={"bs": "best_bs", "numjobs": "best_numjobs", "iodepth": "best_iodepth"})
    keys = ["layout", "devices", "rw", "best_bs", "best_numjobs", "best_iodepth"]
    if not set(keys) <= set(summary.columns):
        return summary
    found = summary[keys].merge(table, on=keys, how="left", validate="many_to_one")
    found.index = summary.index
    out = summary.assign(builds=found["builds"].fillna(1).astype(int), replicates=found["replicates"].fillna("runs"))
    swap = out["replicates"] == "builds"
    out.loc[swap, "best_bw_bytes_lo"] = found.loc[swap, "bw_bytes_lo"]
    out.loc[swap, "best_bw_bytes_hi"] = found.loc[swap, "bw_bytes_hi"]
    return out
