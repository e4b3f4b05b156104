"""A user's own job file measured on every layout (``measure.jobrun.workload``): each group's bandwidth, its
efficiency and its tax.

Pure functions on the results table; they read only the job file's rows (``workload`` "jobfile"), which the
sweep's own analysis (``core``) never reads. A group is one stonewall / new_group group of the file, named by its
first section; a point is a group at one combination of the swept axes (bs, numjobs, iodepth).

    runs(frame)        the job file's measured runs: no warm-up, none too short to be a rate
    points(frame)      per (layout, devices, group, rw, bs, numjobs, iodepth): mean bandwidth over the repetitions,
                       their spread and count, the known truth and whether any run was above it
    summarize(frame)   per (layout, devices, group, rw): the best point over the swept axes, its efficiency against
                       devices x the baseline layout's best of the same group, and its tax against the reference
                       layout's best at the same devices and group (``baseline_and_tax.tax``), with the tax test of their
                       repetitions (``stats.tax_tests``)

The tax is at the same devices, as ``baseline_and_tax.summarize`` defines it: ``single`` (one device) has none against a
``jbod`` of several; its efficiency says what the layouts of many devices make of each one.
"""
from __future__ import annotations

import pandas as pd

from . import baseline_and_tax, stand_in, stats
from ..errors import AnalysisError
from ..measure.results import JOBFILE_WORKLOAD as WORKLOAD

KEYS = ["layout", "devices", "group", "rw", "bs", "numjobs", "iodepth"]
GROUP = ["layout", "devices", "group", "rw"]
TAX_KEYS = ["devices", "group", "rw"]  # the tax is against the reference's best at the same devices and group


def runs(frame: pd.DataFrame) -> pd.DataFrame:
    """The job file's measured runs (``workload`` "jobfile"): warm-ups and runs flagged ``too_short`` dropped;
    a table without them, or with two rows of one point and rep, is refused (AnalysisError)."""
    if "workload" not in frame.columns or "group" not in frame.columns:
        raise AnalysisError("the results hold no job file runs (no workload and group columns): run the campaign "
                            "with a job file workload (measure.jobrun.workload)")
    rows = frame[frame["workload"].astype("string").eq(WORKLOAD).fillna(False).astype(bool)]
    for name in ("warmup", "too_short"):
        rows = rows[~baseline_and_tax.flag(rows, name)] if name in rows.columns else rows
    if rows.empty:
        raise AnalysisError(f"no measured job file runs among {len(frame)} row(s) (all warm-up, too short or "
                            "of the sweep)")
    twice = rows.duplicated([*KEYS, "rep"])
    if twice.any():
        first = rows[twice].iloc[0]
        raise AnalysisError(f"{int(twice.sum())} job file row(s) repeat a point and rep already seen "
                            f"({', '.join(f'{k}={first[k]}' for k in [*KEYS, 'rep'])})")
    return rows.reset_index(drop=True)


def points(frame: pd.DataFrame) -> pd.DataFrame:
    """Per point: ``bw_bytes`` (mean over repetitions), ``bw_std``, ``reps``, the mean ``read_bw_bytes`` and
    ``write_bw_bytes``, ``truth_bw_bytes`` and ``above_truth`` (any repetition above it)."""
    rows = runs(frame)
    values = {"bw_bytes": ("bw_bytes", "mean"), "bw_std": ("bw_bytes", "std"), "reps": ("bw_bytes", "size"),
              "read_bw_bytes": ("read_bw_bytes", "mean"), "write_bw_bytes": ("write_bw_bytes", "mean")}
    if "truth_bw_bytes" in rows.columns:
        values["truth_bw_bytes"] = ("truth_bw_bytes", "first")
        values["above_truth"] = ("above_truth", "any")
    out = rows.groupby(KEYS, sort=True, observed=True, dropna=False).agg(**values).reset_index()
    out["reps"] = out["reps"].astype("int64")
    return out


def summarize(frame: pd.DataFrame, reference: str = "jbod", baseline_layout: str = "single",
              confidence: float = 0.95, margin: float = stats.DEFAULT_MARGIN) -> pd.DataFrame:
    """Per (layout, devices, group, rw): ``best_bw_bytes`` and the point it was measured at (``best_bs``,
    ``best_numjobs``, ``best_iodepth``, ``reps``); ``baseline_bw_bytes`` (the ``baseline_layout``'s best of the
    group) and ``efficiency`` = best / (devices x baseline), NaN without one; ``reference_bw_bytes`` and ``tax``
    against ``reference`` at the same devices and group (NaN where it has no such row); ``tax_lo``, ``tax_hi``,
    ``tax_p`` and ``tax_verdict`` (against ``margin``: tax, gain, equivalent, inconclusive, unknown; 'reference',
    with bounds 0 and 0, on its own rows), as every table with a tax gives them (``stats.tax_tests``). A jbod
    ``reference`` that ran no job file: N x the single device's runs (``stand_in``), its own rows left out."""
    asked = reference
    frame, reference = stand_in.resolve(frame, reference)
    pts = points(frame)
    if reference not in set(pts["layout"]):
        raise AnalysisError(f"reference layout {reference!r} ran no job file; layouts that did: "
                            f"{', '.join(sorted(set(pts['layout'])))}")
    best = baseline_and_tax.best_points(pts, GROUP).rename(columns={
        "bw_bytes": "best_bw_bytes", "bs": "best_bs", "numjobs": "best_numjobs", "iodepth": "best_iodepth"})
    base = best.loc[best["layout"] == baseline_layout, ["group", "rw", "best_bw_bytes"]]
    out = best.merge(base.rename(columns={"best_bw_bytes": "baseline_bw_bytes"}), on=["group", "rw"], how="left",
                     validate="many_to_one")
    out["efficiency"] = out["best_bw_bytes"] / (out["devices"] * out["baseline_bw_bytes"])
    out = baseline_and_tax.with_tax(out, reference, TAX_KEYS)
    tests = stats.tax_tests(out, runs(frame), reference, TAX_KEYS, confidence=confidence, margin=margin)
    columns = [*GROUP, "best_bw_bytes", "best_bs", "best_numjobs", "best_iodepth", "reps", "baseline_bw_bytes",
               "efficiency", "reference_bw_bytes", "tax"]
    tested = tests[["tax_lo", "tax_hi", "tax_p", "tax_verdict", "tax_reps_needed", "tax_margin"]]
    out = pd.concat([out[columns], tested], axis=1).assign(reference=reference)
    return out if reference == asked else out[out["layout"] != reference].reset_index(drop=True)
