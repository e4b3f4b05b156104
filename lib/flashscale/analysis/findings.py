"""The findings in words: every sentence the notebooks and reports say about a measurement, built from the
analysis tables. Pure functions, tables in, a list of sentences out; bandwidth in MB/s (1 MB = 1e6 bytes),
latency in microseconds, block sizes in KiB and MiB (``bs_text``).

    conclusions(summary)                     efficiency and tax of a ``baseline_and_tax.summarize`` table
    baseline_sentences(base, bs)             the single-device baseline per rw
    efficiency_sentences(best)               ``baseline_and_tax.best_by_devices``: efficiency per device count
    device_sentences(scaling_rows)           ``scaling.device_scaling``: what each added device brings
    knee_sentences(fits)                     ``scaling.fit_table``: the knee (or the rise still going), the USL fit
    saturation_sentences(saturated)          ``saturation.saturation``: the fewest jobs to saturate, one job's share
    winner_sentences(won, checks)            ``layout_tax.winners`` and ``layout_tax.consistency``
    latency_sentences(points)                ``latency.by_point``: peak IOPS and its tail latency
    metadata_sentences(points)               ``metadata.by_files``: rates against the number of files
    shared_file_sentences(points, against)   ``shared_file.summary`` and ``shared_file.versus``
    repetition_sentences(reps, steady)       ``stats.repetition_stats`` and ``monitor.stability``
    comparison_sentences(wide)               ``compare.side_by_side``: which source is fastest
    too_short_sentences(frame)               the runs too fast to measure at their size: no rate
    truth_sentences(frame)                   the runs above the emulated array's known cap: measurement errors
    steady_round_sentences(frame)            the precondition in rounds: steady (SNIA PTS) at which round, or not
    precondition_sentences(frame)            what the precondition wrote, per layout, and how long it took
    measurement_sentences(frame)             all of ``evidence``'s: what a measuring notebook says of its runs
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from . import baseline_and_tax
from ..errors import AnalysisError
from .drift import WITHHELD
from .metadata import ENGINES
from .shared_file import LABEL
from ..measure.truth import THROTTLE_SLICE_S
# the sentences on the runs themselves live in ``evidence``; named here too, as every sentence is a finding
from .evidence import bs_text
from ..measure.units import ONE_RUN, bounds, duration, percent, rate


def _design_clause(row: pd.Series) -> str:
    """What of a mirror's shortfall against devices x baseline is its design and what is overhead ('' when the
    layout has no design cost, or the summary predates ``design_tax``)."""
    design = row.get("design_tax", 0.0)
    if not design > 0:
        return ""
    share, own = 1.0 - design, row["layout_efficiency"]
    said = f"; a mirror writes every block twice, so its own ideal is {percent(share, 0)}: {percent(own, 0)} of that ideal, "
    if round(own, 2) >= 1.0:
        return said + "no overhead beyond the mirror's"
    return (said + f"so of the {percent(1 - row['efficiency'], 0)} shortfall {percent(design, 0)} is the mirror's design and "
            f"{percent(share - row['efficiency'], 0)} is overhead")


def _efficiency_sentence(row: pd.Series, at_bs: str) -> str:
    devices = int(row["devices"])
    ideal = devices * row["baseline_bw_bytes"]
    return (
        f"{row['layout']} reaches {percent(row['efficiency'], 0)} of {devices} x the single-device baseline "
        f"for {row['rw']}{at_bs} ({rate(row['best_bw_bytes'])} of {rate(ideal)})"
        + _design_clause(row)
    )


def _untested(row: pd.Series) -> str:
    """Why a tax has no verdict: the repetitions there were; with fewer than two runs on a side, one run gives no
    interval and no verdict against the margin can be given."""
    if "tax_verdict" not in row.index:
        return " (not tested against the noise: no repetitions given)"
    n, m = int(row["best_reps"]), int(row["reference_reps"])
    runs = ("one run each" if n < 2 and m < 2
            else f"{baseline_and_tax.count_of(n, 'run')} of {row['layout']}, {m} of {row['reference']}")
    margin = f" against the {100 * row['tax_margin']:g}% margin" if "tax_margin" in row.index else ""
    return f" ({runs}; {ONE_RUN}: no verdict{margin} can be given)"


def _interval(row: pd.Series, faster: bool = False) -> str:
    """The tax's interval in words (as how much faster, for a gain), its level and the repetitions behind it."""
    n, m = int(row["best_reps"]), int(row["reference_reps"])
    runs = f"n = {n}" if n == m else f"n = {n} and {m}"
    if row.get("tax_test") == "group-sequential":  # PRECISION ran its runs to a decision (or to the most)
        said = "decided" if row.get("best_reps_reason") == "decided" else "still undecided at the most runs"
        runs += f", {said} by the group-sequential test"
    level = f"{percent(row['tax_confidence'], 0)} interval" if "tax_confidence" in row.index else "interval"
    if row["tax_lo"] == row["tax_hi"]:
        return f"the same in every run, {runs}"
    if faster:
        return f"{level} {percent(-row['tax_hi'])} to {percent(-row['tax_lo'])} faster{_geometric(row, True)}, {runs}"
    return (f"{level} {percent(row['tax_lo'], signed=True)} to {percent(row['tax_hi'], signed=True)}"
            f"{_geometric(row)}, {runs}")


def _geometric(row: pd.Series, faster: bool = False) -> str:
    """The tax the interval is of, named where it shows apart from the tax said: the test reads the ratio of the
    runs' geometric means (``stats.tax_tests``' ``tax_tested``), the tax said is that of their means."""
    tested = row.get("tax_tested")
    if tested is None or pd.isna(tested) or percent(tested) == percent(row["tax"]):
        return ""
    said = f"{percent(-tested)} faster" if faster else f"a {percent(tested, signed=True)} tax"
    return f" around {said}, the ratio of the runs' geometric means that the test reads"


def _tax_sentence(row: pd.Series, at_bs: str) -> str:
    """The tax in words, as strong as its verdict (``significance.practical``): a tax or a gain only when the
    interval lies beyond the margin, equivalent when it lies within, undecided (with the repetitions that would
    decide it) when it reaches across the margin's edge."""
    where = f"for {row['rw']}{at_bs} at {int(row['devices'])} devices"
    said, other = row.get("tax_verdict"), row["reference"]
    margin = f"{100 * row['tax_margin']:g}%" if "tax_margin" in row.index else ""
    if said == "tax":
        return (f"{row['layout']} costs a {percent(row['tax'])} tax against {other} {where} ({_interval(row)}; beyond "
                f"the {margin} margin)")
    if said == "gain":
        return (f"{row['layout']} is {percent(-row['tax'])} faster than {other} {where} ({_interval(row, True)}; "
                f"beyond the {margin} margin)")
    if said == "equivalent":
        return (f"{row['layout']} performs as {other} {where}: its tax, {percent(row['tax'], signed=True)}, is within the "
                f"{margin} margin ({_interval(row)})")  # the tax and its interval, signed alike, as the table
    if said == "inconclusive":
        needed = row.get("tax_reps_needed")
        decide = (f"about {int(needed)} runs a side would decide it" if pd.notna(needed)
                  else "more runs at this spread would not decide it: the estimate sits on the margin's edge")
        return (f"{row['layout']} against {other} {where} is undecided: {percent(row['tax'])} tax, but its interval "
                f"reaches across the {margin} margin ({_interval(row)}); {decide}")
    if said == WITHHELD:
        moved = row.get("reference_drift")
        change = (f"{percent(abs(moved))} {'slower' if moved > 0 else 'faster'}" if pd.notna(moved) else "changed")
        return (f"{row['layout']} against {other} {where}: no verdict (withheld): {other}, measured again after the "
                f"layouts (BRACKET), read {change} than before them at this point, beyond the {margin} margin, so "
                f"the tax as measured ({percent(row['tax'])}) may be the drift's")
    faster = f"{percent(-row['tax'])} faster than {other} {where}{_untested(row)}"
    if said is None:  # a summary without repetitions: the tax as computed, said to be untested
        return (f"{row['layout']} is {faster}" if row["tax"] < 0 else
                f"{row['layout']} costs a {percent(row['tax'])} tax against {other} {where}{_untested(row)}")
    # one run on a side: no verdict can be given, so no tax and no gain is claimed
    return (f"{row['layout']} measured {faster}" if row["tax"] < 0 else
            f"{row['layout']} measured {percent(row['tax'])} below {other} {where}{_untested(row)}")


def conclusions(summary: pd.DataFrame) -> list[str]:
    """Sentences computed from a ``baseline_and_tax.summarize`` table: efficiency of every multi-device row (for a mirror, what
    of the shortfall is its design and what overhead), tax of every non-reference row that has a reference to
    compare with (rows with a NaN tax are left out). A ``stats.summary_intervals`` table gives each tax its
    verdict against the margin (``_tax_sentence``), with its repetitions when untestable."""
    needed = ["layout", "devices", "rw", "best_bw_bytes", "baseline_bw_bytes", "efficiency", "tax", "reference"]
    missing = [c for c in needed if c not in summary.columns]
    if missing:
        raise AnalysisError(f"summary lacks column(s) {', '.join(map(repr, missing))}: pass the output of summarize")
    sentences = []
    for _, row in summary.iterrows():
        at_bs = f" with {bs_text(int(row['bs']))} blocks" if "bs" in summary.columns else ""
        if row["devices"] > 1 and np.isfinite(row["efficiency"]):
            sentences.append(_efficiency_sentence(row, at_bs))
        if row["layout"] != row["reference"] and np.isfinite(row["tax"]):
            sentences.append(_tax_sentence(row, at_bs))
    return sentences


def baseline_sentences(base: pd.DataFrame, baseline_bs: int) -> list[str]:
    """Per rw of ``baseline_and_tax.baseline``: the baseline, and the jobs and queue depth that reached it."""
    return [f"The baseline for {r.rw} is {rate(r.baseline_bw_bytes)}: the best single-device point at "
            f"{bs_text(baseline_bs)}, reached with {r.baseline_numjobs} job(s) at queue depth {r.baseline_iodepth}."
            for r in base.itertuples()]


def efficiency_sentences(best: pd.DataFrame) -> list[str]:
    """Per row of ``baseline_and_tax.best_by_devices``: its efficiency against devices x the baseline."""
    return [f"{r.layout} on {r.devices} device(s) reaches {percent(r.efficiency, 0)} of {r.devices} x the baseline for "
            f"{r.rw} ({rate(r.best_bw_bytes)} with {r.best_numjobs} job(s))." for r in best.itertuples()]


def device_sentences(scaling_rows: pd.DataFrame) -> list[str]:
    """From ``scaling.device_scaling``: what each added device brings, as a fraction of the baseline."""
    return [f"{r.layout} {r.rw}: each device adds {rate(r.slope_bw_bytes_per_device)}, "
            f"{percent(r.slope_efficiency, 0)} of the baseline, up to {r.max_devices} devices."
            for r in scaling_rows.itertuples()]


def _knee_clause(r) -> str:
    """Where the curve flattens: the knee when a plateau was reached, the last step's gain when not."""
    if not r.plateau_reached:
        rise = np.isfinite(r.last_step_gain)
        return "no plateau within the measured range" + (
            f": throughput still rises {percent(r.last_step_gain, 0)} at the last step" if rise else "")
    return f"95% of the plateau ({rate(r.plateau_bw_bytes)}) is reached at {r.knee_numjobs:.0f} job(s)"


def _usl_clause(r) -> str:
    """The USL fit, and its peak only as far as the fit establishes it."""
    if not np.isfinite(r.usl_sigma):
        return f"no scaling law was fitted ({r.fit_note})"
    said = f"the USL fit gives contention sigma = {r.usl_sigma:.3f} and coherency kappa = {r.usl_kappa:.4f}"
    if not np.isfinite(r.usl_peak_numjobs):
        return said + " (kappa is indistinguishable from 0): no peak is established"
    if r.usl_peak_extrapolated:
        return (said + f"; the USL puts the peak at {r.usl_peak_numjobs:.0f} jobs, beyond the largest measured "
                       "(an extrapolation)")
    return said + f"; the USL puts the peak at {r.usl_peak_numjobs:.0f} jobs"


def knee_sentences(fits: pd.DataFrame) -> list[str]:
    """One sentence per curve of ``scaling.fit_table(..., axis="numjobs")``: the knee (or the rise still going at
    the last step, without a plateau) and the USL fit (its peak only when kappa's interval excludes 0; a peak
    beyond the largest numjobs measured is named an extrapolation)."""
    return [f"{r.layout} on {r.devices} device(s), {r.rw}: {_knee_clause(r)}; {_usl_clause(r)}."
            for r in fits.itertuples()]


def _one_job_clause(r, of: str, delivers: str = "one job delivers ") -> str:
    """What one job delivers, with its interval and runs, and its share ``of`` the best."""
    if not np.isfinite(r.one_job_bw_bytes):
        return "no point was measured at one job"
    runs = f"n = {r.one_job_reps}"
    if not np.isfinite(r.one_job_bw_bytes_lo):
        spread = ONE_RUN if r.one_job_reps < 2 else f"{runs}: no interval"
    elif r.one_job_bw_bytes_lo == r.one_job_bw_bytes_hi:
        spread = f"the same in every run, {runs}"
    else:
        spread = f"95% interval {bounds(r.one_job_bw_bytes_lo, r.one_job_bw_bytes_hi)}, {runs}"
    return f"{delivers}{rate(r.one_job_bw_bytes)} ({spread}), {percent(r.one_job_fraction, 0)} of {of}"


def _saturation_sentence(r, at_bs: str) -> str:
    """One row of ``saturation.saturation`` in words: the fewest jobs, or not reached; one job."""
    where = f"{r.layout} on {baseline_and_tax.count_of(r.devices, 'device')}, {r.rw}{at_bs}"
    share, best = percent(r.saturation_fraction, 0), rate(r.best_bw_bytes)
    if not r.reached:
        return f"{where}: {share} of its best {r.note}; {_one_job_clause(r, f'the best measured ({best})')}."
    why = f" ({r.note})" if r.note else ""
    depth = f" at queue depth {r.saturating_iodepth:.0f}" if r.saturating_iodepth != 1 else ""
    if r.saturating_numjobs == 1:
        return f"{where}: one job{depth} is enough, {_one_job_clause(r, f'its best ({best})', '')}{why}."
    jobs = f"{r.saturating_numjobs:.0f} jobs{depth}"
    each = ", one per device" if r.saturating_numjobs == r.devices and r.devices > 1 else ""
    return f"{where}: {share} of its best ({best}) at {jobs}{each}{why}; {_one_job_clause(r, 'it')}."


def saturation_sentences(saturated: pd.DataFrame) -> list[str]:
    """Per row of ``saturation.saturation``: the fewest jobs (and the queue depth, where not 1) whose repetitions
    show 95% of the layout's best, or that it was not reached within the measured range; and what one job
    delivers, with its interval, as a share of the best. Block sizes named when there are several."""
    several = saturated["bs"].nunique() > 1
    return [_saturation_sentence(r, f" with {bs_text(int(r.bs))} blocks" if several else "")
            for r in saturated.itertuples()]


def _tested(r) -> str:
    """At how many of a layout's thread counts its tax lies beyond the margin (``layout_tax.consistency``)."""
    tested = getattr(r, "taxes_tested", None)
    if tested is None:
        return "; not tested against the noise"
    if tested == 0:
        return "; too few runs to test any against the noise"
    return f"; beyond the margin at {r.taxes_real} of the {tested} tested"


def winner_sentences(won: pd.DataFrame, checks: pd.DataFrame) -> list[str]:
    """The winner per rw, and how steady each layout's tax is across thread counts (``layout_tax.consistency``)."""
    out = []
    for r in won.itertuples():
        margin = f", {percent(r.margin, 0)} ahead of {r.runner_up}" if np.isfinite(r.margin) else ""
        out.append(f"For {r.rw} on {r.devices} devices, {r.winner} wins with {rate(r.best_bw_bytes)}"
                   f"{margin}.")
    for r in checks.itertuples():
        if r.thread_counts > 1 and np.isfinite(r.tax_spread):
            out.append(f"{r.layout} {r.rw}: tax between {percent(r.tax_min)} and {percent(r.tax_max)} over "
                       f"{r.thread_counts} thread counts ({'steady' if r.tax_spread < 0.1 else 'it moves'})"
                       f"{_tested(r)}.")
    return out


def latency_sentences(points: pd.DataFrame) -> list[str]:
    """Peak IOPS per (rw, bs) and what the deepest queue costs in tail latency (``latency.by_point`` rows)."""
    out = []
    for (rw, bs), group in points.groupby(["rw", "bs"], sort=True):
        top = group.loc[group["iops"].idxmax()]
        low = group.loc[group["iodepth"].idxmin()]
        out.append(f"{rw} {bs_text(int(bs))}: {top['iops']:,.0f} IOPS at most (queue depth {int(top['iodepth'])}, "
                   f"{rate(top['bw_bytes'])}); p99 completion latency {duration(top['clat_p99_ns'], 'ns')} "
                   f"there against {duration(low['clat_p99_ns'], 'ns')} at queue depth {int(low['iodepth'])}.")
    return out


def _trend(group: pd.DataFrame) -> str:
    first, last = group.iloc[0], group.iloc[-1]
    if len(group) == 1:
        return f"{first['rate']:,.0f} {first['op']}s/s with {first['files']:,} files"
    change = last["rate"] / first["rate"] - 1
    return (f"{first['rate']:,.0f} {first['op']}s/s with {first['files']:,} files and {last['rate']:,.0f} with "
            f"{last['files']:,} ({percent(change, 0, signed=True)})")


def _op_ratios(group: pd.DataFrame) -> list[str]:
    """Remove and stat against create, on the most files of one (layout, devices, numjobs)."""
    most = group[group["files"] == group["files"].max()].set_index("op")
    out = []
    for op in ("remove", "stat"):
        if op in most.index and "create" in most.index:
            ratio = most.loc[op, "rate"] / most.loc["create", "rate"]
            than = f"{ratio:.1f} times as fast as" if ratio >= 1 else f"{percent(1 - ratio, 0)} slower than"
            out.append(f"With {int(most['files'].iloc[0]):,} files, {op}s run {than} creates "
                       f"({most.loc[op, 'rate']:,.0f} against {most.loc['create', 'rate']:,.0f} per s).")
    return out


def metadata_sentences(points: pd.DataFrame, coarse: float = 0.02) -> list[str]:
    """The findings of ``metadata.by_files``: each op's rate from the fewest to the most files, remove and stat
    against create on the most files (seed 004: removes 40% slower than creates, stats far faster), how much of
    the time per file is the operation itself, whether every run counted its files, and runs too short to time
    well (``resolution`` above ``coarse``)."""
    out = []
    timed = points[points["rate"].notna()]  # the rest ran too short to time: ``too_short_sentences`` names them
    for (layout, devices, numjobs), group in timed.groupby(["layout", "devices", "numjobs"], sort=True):
        where = f"{layout} ({baseline_and_tax.count_of(devices, 'device')}), {numjobs} job(s)"
        for op in [op for op in ENGINES if op in set(group["op"])]:
            out.append(f"{where}: {_trend(group[group['op'] == op].sort_values('files'))}.")
        out += _op_ratios(group)
    share = timed["rate"] / timed["latency_rate"]
    if not share.empty:
        out.append(f"The operation itself takes {percent(share.min(), 0)} to {percent(share.max(), 0)} of the time per file "
                   f"(rate x mean latency / jobs); the rest is fio's loop and the system around the call.")
    incomplete = points[~points["complete"]]
    out.append("Every run operated on exactly its files (fio's operation count and latency samples both equal "
               "nrfiles x numjobs)." if incomplete.empty else
               f"{len(incomplete)} point(s) did not count nrfiles x numjobs operations: "
               + ", ".join(f"{r.op} {r.files}" for r in incomplete.itertuples()) + ".")
    rough = timed[timed["resolution"] > coarse]
    if not rough.empty:
        out.append(f"{len(rough)} point(s) ran for under {1 / coarse:.0f} ms, so their rate is coarse (fio times in "
                   "whole ms): " + ", ".join(f"{r.op} {r.files:,} files in {r.runtime_ms:.0f} ms"
                                             for r in rough.itertuples()) + "; give them more files.")
    return out


def _reach_sentence(group: pd.DataFrame) -> str:
    """One (mode, layout, numjobs): the devices its files reach, and each rw's bandwidth against their caps."""
    r = group.iloc[0]
    said = f"{LABEL[r.variant]} on {r.layout} with {r.numjobs} job(s)"
    if not np.isfinite(r.ceiling_bytes):
        runs = ", ".join(f"{g.rw} {rate(g.bw_bytes)}" for g in group.itertuples())
        return f"{said} uses {r.targets_used} of {r.targets} target(s), with no cap: {runs}."
    runs = ", ".join(f"{g.rw} {rate(g.bw_bytes)} ({percent(g.fraction, 0)})" for g in group.itertuples())
    return (f"{said}: its files reach {r.reach_devices:g} of {r.devices} device(s), "
            f"{rate(r.ceiling_bytes)} of caps; {runs}.")


def _caps_sentence(points: pd.DataFrame) -> list[str]:
    """Whether any capped shared-file run beat its caps by more than one throttle slice."""
    capped = points[np.isfinite(points["ceiling_bytes"])]
    over = capped[~capped["within_caps"]]
    if capped.empty:
        return []
    return [f"Every capped run took at least its bytes / its cap sum, less one throttle slice "
            f"({THROTTLE_SLICE_S:g} s): none beat its caps." if over.empty else
            f"{len(over)} point(s) beat their caps by more than one throttle slice: "
            + ", ".join(f"{LABEL[r.variant]} {r.layout} {r.rw}" for r in over.itertuples()) + "."]


def shared_file_sentences(points: pd.DataFrame, against: pd.DataFrame, same: float = 0.05) -> list[str]:
    """Sharing one file against a file per job: its cost per point (below ``same``: the same bandwidth), each
    mode's bandwidth against the caps of the devices its files reach, whether every run moved exactly numjobs x
    size bytes, and whether any beat its caps."""
    out = []
    for r in against.itertuples():
        word = (f"gets the same bandwidth within {percent(same, 0)}" if abs(r.cost) < same else
                f"costs {percent(r.cost, 0)}" if r.cost > 0 else f"is {percent(-r.cost, 0)} faster")
        out.append(f"{r.layout} {r.rw}, {r.numjobs} job(s): N-to-1 moves {rate(r.n_to_1_bw_bytes)} and "
                   f"N-to-N {rate(r.n_to_n_bw_bytes)}: one shared file {word}.")
    out += [_reach_sentence(group) for _, group in points.groupby(["variant", "layout", "numjobs"], sort=False)]
    bad = points[~points["bytes_ok"]]
    out.append("Every run moved exactly numjobs x size bytes (fio's io_bytes), in both modes." if bad.empty else
               f"{len(bad)} point(s) did not move numjobs x size bytes: "
               + ", ".join(f"{LABEL[r.variant]} {r.layout} {r.rw}" for r in bad.itertuples()) + ".")
    return out + _caps_sentence(points)


def repetition_sentences(reps: pd.DataFrame, steady: pd.DataFrame) -> list[str]:
    """Run-to-run spread per point (``stats.repetition_stats``) and the mean spread within runs
    (``monitor.stability``)."""
    out = [f"{r.rw} with {r.numjobs} job(s): {r.reps} runs, mean {rate(r.bw_bytes)}, median "
           f"{rate(r.bw_bytes_median)}, deviation {rate(r.bw_bytes_std)} (coefficient of variation "
           f"{percent(r.bw_bytes_cv)})." if r.reps >= 2 else
           f"{r.rw} with {r.numjobs} job(s): {rate(r.bw_bytes)} ({ONE_RUN})." for r in reps.itertuples()]
    return out + [f"Within runs, bandwidth moves by {percent(steady['cv'].mean())} (mean coefficient of variation over "
                  f"{len(steady)} runs)."]


def comparison_sentences(wide: pd.DataFrame) -> list[str]:
    """Per row of ``compare.side_by_side`` measured by more than one source: which source is fastest and by how
    much over the slowest."""
    out = []
    for key, row in wide.iterrows():
        row = row.dropna()
        if len(row) < 2:
            continue
        name = " ".join(str(k) for k in (key if isinstance(key, tuple) else (key,)))
        if row.max() == row.min():
            out.append(f"{name}: the same in every source ({rate(row.max())}).")
            continue
        out.append(f"{name}: {row.idxmax()} is fastest ({rate(row.max())}), "
                   f"{percent(row.max() / row.min() - 1, 0)} above {row.idxmin()} ({rate(row.min())}).")
    return out


def bottleneck_sentences(verdicts: pd.DataFrame) -> list[str]:
    """One sentence per layout and workload from ``analysis.monitor.bottlenecks``: whether the devices were the
    bottleneck (every member saturated), one did the work while others idled, a CPU was saturated, or neither."""
    said = {"devices": "every device was saturated: the devices were the bottleneck",
            "uneven": "some devices were saturated while others idled: the work did not spread over them",
            "cpu": "no device was saturated and one CPU was busy all the time: the CPU was the limit",
            "neither": "neither the devices nor a CPU was saturated: latency or the software set the pace"}
    out = []
    for (layout, workload), runs in verdicts.groupby(["layout", "workload"], sort=True):
        common = runs["verdict"].value_counts()
        top = common.index[0]
        share = f"{common.iloc[0]} of {len(runs)} runs" if len(runs) > 1 else "its run"
        out.append(f"{layout}, {workload}: in {share}, {said[top]} (devices loaded {percent(runs['min_load'].min(), 0)} "
                   f"to {percent(runs['max_load'].max(), 0)}, busiest CPU {percent(runs['cpu_busiest'].median(), 0)}).")
    return out
