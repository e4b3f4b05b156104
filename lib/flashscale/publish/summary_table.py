"""The summary of ``flashscale analyze`` as a terminal shows it: which columns, in what order, and which are left
out first where the terminal is narrow (``publish.console`` fits and formats them).

    columns(summary, metric, by, asked, wide)   the columns shown, and what is said once instead of a column
"""
from __future__ import annotations

from typing import Iterable

import pandas as pd

from ..analysis.metrics import LATENCY, METRICS
from ..errors import ConfigError
from ..measure.units import size

# The columns a person reads first, in order, where the summary has them (each one's _lo/_hi merged into it), and
# those left out first, first, where the terminal is too narrow for them all.
FIRST = ("layout", "devices", "rw", "best_bs", "best_bw_bytes", "best_iops", "best_numjobs", "best_iodepth",
         "efficiency", "tax", "tax_verdict", "load_flag")
LATENCY_FIRST = ("layout", "devices", "rw", "best_bs", "best_numjobs", "best_iodepth", "best_bw_bytes")
EXTRAS = ("builds", "replicates", "knee_numjobs", "usl_peak_numjobs", "expected_ceiling_bw_bytes", "binding_limit",
          "ceiling_fraction")
DROP_FIRST = ("best_iodepth", "best_numjobs", "replicates", "builds", "usl_peak_numjobs", "best_bs", "devices",
              "load_flag", "reference_clat_p50_ns", "reference_clat_p99_ns", "reference_clat_p999_ns", "best_bw_bytes",
              "efficiency", "knee_numjobs")
# Every column a person reads (--wide).
SHOWN = ("layout", "devices", "rw", "bs", "best_bs", "best_bw_bytes", "best_iops", "best_numjobs", "best_iodepth",
         "baseline_bw_bytes", "baseline_iops", "efficiency", "tax", "tax_verdict", "load_flag", "best_reps",
         "best_reps_reason", "builds", "replicates", "knee_numjobs", "usl_peak_numjobs", "fit_note",
         "expected_ceiling_bw_bytes", "binding_limit", "ceiling_fraction")


def columns(summary: pd.DataFrame, metric: str, by: Iterable[str] = (), asked: str | None = None,
            wide: bool = False) -> tuple[list[str], list[str]]:
    """The columns the table of ``summary`` shows: ``asked`` (--columns: names of the summary's columns, comma
    separated; ConfigError naming any it has not), all a person reads (``wide``), else those read first for
    ``metric`` (--by's after rw, --fit's and --ceilings' at the end); and the lines it says once instead of a column
    that repeats one value."""
    latency = [METRICS[metric], f"reference_{METRICS[metric]}", "latency_tax"] if metric in LATENCY else []
    if asked is not None:
        names = [c.strip() for c in asked.split(",") if c.strip()]
        unknown = [c for c in names if c not in summary.columns]
        if unknown or not names:
            raise ConfigError(f"--columns {asked!r}: no column {unknown or names} in the summary; it has "
                              f"{', '.join(c for c in summary.columns if not c.endswith(('_lo', '_hi')))}")
        return names, []
    by = [c for c in by if c in summary.columns]
    if wide:
        wide = [c for c in SHOWN if c in summary.columns]
        return [*wide[:3], *by, *wide[3:], *latency], []
    first = [c for c in (LATENCY_FIRST if latency else FIRST) if c in summary.columns]
    said = []
    if "load_flag" in first and not summary["load_flag"].fillna("").astype(bool).any():
        first.remove("load_flag")
    if "best_bs" in first and summary["best_bs"].nunique() == 1:
        first.remove("best_bs")
        said.append(f"bs: {size(summary['best_bs'].iloc[0])} at every best point")
    return [*first[:3], *by, *first[3:], *latency, *(c for c in EXTRAS if c in summary.columns)], said
