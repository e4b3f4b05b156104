"""The key numbers each notebook records: one function per notebook, plain JSON out.

A notebook's ``key-numbers`` cell is one call, ``report.record(records.<notebook>(...))``; the tests, ``08_compare``
and the index read the record back (``report.read_record``, ``report.headline``). Every record holds a
``headline``: the few numbers the index shows (the quickstart's index shows its baselines instead). Bandwidth in
bytes/s, latency in ns; the headline's text in MB/s (1 MB = 1e6 bytes).

    quickstart         baseline, efficiency and tax per layout; the fewest jobs that saturate each
    baseline           01: baseline per rw, best bandwidth and IOPS per block size
    scaling            02: efficiency per device count, slope per device, knee
    layout_tax         03: efficiency and tax per layout, the winner per rw, what the machine cannot build
    latency            04: IOPS, bandwidth, tail latency and Little's law per point
    metadata           05: files per second per op and number of files
    shared_file        06: N-to-1 against N-to-N
    consistency        07: run-to-run and within-run variation
    comparison         08: sources compared and their largest spread
    compare            flashscale compare's report: each change with its interval and verdict, what differs
    reference_studies  published figures against ours
    applications       09: each application's best number per layout, and the bottleneck verdicts
    cluster            10: aggregate per host count, cluster efficiency, the binding limit, failed hosts
    job_file           11: each job group's best bandwidth, efficiency and tax per layout
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..analysis import baseline_and_tax, evidence
from ..analysis.prediction import ceilings, scoring
from ..analysis.metadata import ENGINES
from ..analysis.cluster_numbers import ALL
from ..measure.units import percent, rate


def plain(value):
    """A number as plain JSON: numpy scalars as Python ones, NaN as None."""
    value = value.item() if isinstance(value, np.generic) else value
    return None if isinstance(value, float) and math.isnan(value) else value


def _stage(result) -> dict:
    """What every stage records of how it ran: its backend and notes (a ``campaign.CampaignResult``)."""
    return {"backend": result.backend, "notes": result.notes}


def _unsupported(support: pd.DataFrame) -> dict[str, str]:
    """Layout -> what this machine lacks to build it (``campaign.layout_support`` rows)."""
    lacking = support.loc[~support["supported"]]
    return dict(zip(lacking["layout"], lacking["missing"]))


# What a summary row adds to its record beside best, efficiency and tax, when the summary has it: the layout's own
# ideal (``baseline_and_tax.with_ideal``), the tax test (``stats.summary_intervals``: which test, at what level) and
# how many runs (and builds: ``analysis.builds.over_builds``) its best point took and why they stopped.
EVIDENCE = ("ideal_bw_bytes", "layout_efficiency", "design_tax", "efficiency_lo", "efficiency_hi", "tax_lo", "tax_hi",
            "tax_p", "tax_tested", "tax_verdict", "tax_reps_needed", "tax_margin", "tax_test", "tax_confidence",
            "best_reps", "best_reps_reason", "builds", "replicates")


def _evidence(row) -> dict:
    return {name: plain(getattr(row, name)) for name in EVIDENCE if hasattr(row, name)}


def _runs(table: pd.DataFrame) -> dict:
    """What a measuring notebook records of its runs: how many came out above the known truth, how many were too
    short to give a rate, and each layout's precondition (bytes written, seconds)."""
    done = evidence.precondition(table)
    runs = baseline_and_tax.runs(table)
    short = int(baseline_and_tax.flag(runs, "too_short").sum()) if "too_short" in runs.columns else 0
    return {"above_truth": len(baseline_and_tax.truth_check(table)), "too_short": short,
            "precondition": {r.layout: {"io_bytes": plain(r.io_bytes), "runtime_s": plain(r.runtime_s)}
                             for r in done.itertuples()}}


# What a saturation row records (``saturation.saturation``), keyed as the summary's rows.
SATURATION = ("bs", "saturation_fraction", "best_bw_bytes", "reached", "saturating_numjobs", "saturating_iodepth",
              "saturating_bw_bytes", "knee_numjobs", "max_numjobs", "one_job_bw_bytes", "one_job_bw_bytes_lo",
              "one_job_bw_bytes_hi", "one_job_reps", "one_job_fraction", "note")


def _saturation(summary: pd.DataFrame, saturated: pd.DataFrame) -> dict:
    """Per ``layout/devices/rw`` of the summary: the saturation row at the block size of its best point."""
    at_best = summary[["layout", "devices", "rw", "best_bs"]].rename(columns={"best_bs": "bs"})
    rows = saturated.merge(at_best, on=["layout", "devices", "rw", "bs"], how="inner", validate="one_to_one")
    return {f"{r['layout']}/{r['devices']}/{r['rw']}": {name: plain(r[name]) for name in SATURATION}
            for r in rows.to_dict("records")}


def quickstart(summary: pd.DataFrame, baseline: pd.DataFrame, result, saturated: pd.DataFrame | None = None,
               scored: pd.DataFrame | None = None) -> dict:
    """The numbers a report stands on: baseline per rw, efficiency and tax per layout and rw (with the layout's own
    ideal, and the tax's test when the summary has them), jbod's efficiency per device count and rw, and of the runs
    (``result.table``): the truth check, the runs too short, the precondition. With ``saturated``
    (``saturation.saturation``), ``saturation``: per layout/devices/rw, at its best point's block size, the fewest
    jobs (and queue depth) shown to reach 95% of the best, or ``reached`` false, and what one job delivers. With
    ``scored`` (``analysis.prediction.scoring.against``: the predictions stated before each layout was built),
    ``prediction_error``: the largest |measured / predicted - 1| per ``layout/rw``, and ``predictions_outside``: the
    points whose measurement and prediction differ by more than the margin (``analysis.agreement``: the interval
    of their ratio wholly beyond it)."""
    rows = {f"{r.layout}/{r.devices}/{r.rw}": {"best_bw_bytes": float(r.best_bw_bytes),
                                                "efficiency": float(r.efficiency),
                                                "tax": None if r.tax != r.tax else float(r.tax), **_evidence(r)}
            for r in summary.itertuples()}
    base = {r.rw: float(r.baseline_bw_bytes) for r in baseline.itertuples()}
    jbod = {f"{r.devices}/{r.rw}": plain(r.efficiency) for r in summary.itertuples() if r.layout == "jbod"}
    found = {} if saturated is None else {"saturation": _saturation(summary, saturated)}
    return {**_stage(result), "baseline_bw_bytes": base, "layouts": rows, "jbod_efficiency": jbod,
            **_runs(result.table), **found, **_predicted(scored)}


def _predicted(scored: pd.DataFrame | None) -> dict:
    """Of ``scored`` (``analysis.prediction.scoring.against``: the predictions stated before each layout was built),
    ``prediction_error``: the largest |measured / predicted - 1| per ``layout/rw``, ``predictions_outside``: the
    points whose measurement and prediction differ by more than the margin (``analysis.agreement``), and ``repeatability``: per ``layout/rw``, jbod
    at 1 job against the single device (``scoring.repeatability``, the machine's drift); nothing without it."""
    if scored is None:
        return {}
    outside = scored["beyond_margin"].fillna(False).astype(bool).sum() if "beyond_margin" in scored.columns else 0
    again = scoring.repeatability(scored)
    return {"prediction_error": scoring.largest_errors(scored), "predictions_outside": int(outside),
            "repeatability": {f"{r.layout}/{r.rw}": float(r.error) for r in again.itertuples()}}


def baseline(result, table: pd.DataFrame, base: pd.DataFrame, by_bs: pd.DataFrame) -> dict:
    """01_baseline: runs, the baseline per rw, best bandwidth and IOPS per (rw, bs) (``baseline_and_tax.best_by_bs``)."""
    return {**_stage(result), "runs": len(table),
            "baseline_bw_bytes": dict(zip(base["rw"], base["baseline_bw_bytes"])),
            "best_bw_bytes": {f"{r.rw}/{r.bs}": r.bw_bytes for r in by_bs.itertuples()},
            "best_iops": {f"{r.rw}/{r.bs}": r.iops for r in by_bs.itertuples()},
            "headline": {f"baseline {r.rw}": rate(r.baseline_bw_bytes) for r in base.itertuples()}}


def scaling(result, source: str, base: pd.DataFrame, best: pd.DataFrame, by_devices: pd.DataFrame,
            fits: pd.DataFrame) -> dict:
    """02_scaling: efficiency per device count (``baseline_and_tax.best_by_devices``), the slope per added device
    (``scaling.device_scaling``) and the knee (``scaling.fit_table``) of jbod."""
    return {**_stage(result), "baseline_source": source,
            "baseline_bw_bytes": dict(zip(base["rw"], base["baseline_bw_bytes"])),
            "efficiency": {f"jbod/{r.devices}/{r.rw}": r.efficiency for r in best.itertuples()},
            "slope_efficiency": dict(zip(by_devices["rw"], by_devices["slope_efficiency"])),
            "knee_numjobs": {f"jbod/{r.devices}/{r.rw}": r.knee_numjobs for r in fits.itertuples()},
            "headline": {f"efficiency {r.rw} on {r.devices}": percent(r.efficiency, 0) for r in best.itertuples()}}


def layout_tax(result, source: str, support: pd.DataFrame, summary: pd.DataFrame, won: pd.DataFrame,
               scored: pd.DataFrame | None = None) -> dict:
    """03_layout_tax: best, efficiency and tax per layout (``baseline_and_tax.summarize``), the winner per rw
    (``layout_tax.winners``) and the layouts this machine could not build; with ``scored``, the predictions' errors
    and the points outside their interval, as the quickstart's (``_predicted``)."""
    layouts = {f"{r.layout}/{r.devices}/{r.rw}": {"best_bw_bytes": r.best_bw_bytes, "efficiency": r.efficiency,
                                                   "tax": r.tax, **_evidence(r)} for r in summary.itertuples()}
    return {**_stage(result), "baseline_source": source, "unsupported": _unsupported(support), "layouts": layouts,
            "winners": dict(zip(won["rw"], won["winner"])), **_predicted(scored),
            "headline": {f"winner {r.rw}": f"{r.winner} ({rate(r.best_bw_bytes)})" for r in won.itertuples()}}


def latency(result, points: pd.DataFrame) -> dict:
    """04_latency_iops: per (rw, bs, iodepth) of ``latency.littles_law``: IOPS, bandwidth, p99 completion latency
    and Little's ratio; the headline is the peak IOPS per (rw, bs)."""
    keys = [f"{r.rw}/{r.bs}/qd{r.iodepth}" for r in points.itertuples()]
    numbers = {column: dict(zip(keys, points[column])) for column in ("iops", "bw_bytes", "clat_p99_ns",
                                                                       "littles_ratio")}
    peaks = points.loc[points.groupby(["rw", "bs"])["iops"].idxmax()]
    return {**_stage(result), **numbers,
            "headline": {f"peak IOPS {r.rw} {r.bs} B": f"{r.iops:,.0f}" for r in peaks.itertuples()}}


TOO_FAST = "too fast to measure at this size"


def _metadata_headline(points: pd.DataFrame) -> dict[str, str]:
    """Per op, the rate with the most files; where every such run was too short to time, says so, never a rate."""
    most = points[points["files"] == points["files"].max()]
    best = most.groupby("op", sort=False)["rate"].max()
    return {f"{op}s/s ({int(most['files'].iloc[0]):,} files)": TOO_FAST if pd.isna(best[op]) else f"{best[op]:,.0f}"
            for op in ENGINES if op in best}


def metadata(result, rows: pd.DataFrame, ops, points: pd.DataFrame) -> dict:
    """05_metadata, keyed ``layout/op/nj<numjobs>/<files>`` (``metadata.by_files``): rate, latency, runtime and
    completeness per point (``rate`` None and ``too_short`` true where the runs were too short to time); the
    headline is each op's rate with the most files, or ``TOO_FAST``."""
    keys = [f"{r.layout}/{r.op}/nj{r.numjobs}/{r.files}" for r in points.itertuples()]
    columns = ("rate", "latency_rate", "clat_mean_ns", "runtime_ms", "complete", "files", "too_short")
    numbers = {column: {k: plain(v) for k, v in zip(keys, points[column])} for column in columns}
    return {**_stage(result), "runs": len(rows), "ops": list(ops), **numbers,
            "headline": _metadata_headline(points)}


def _point_key(r) -> str:
    return f"{r.layout}/{r.rw}/nj{r.numjobs}"


def shared_file(result, rows: pd.DataFrame, file_size: int, support: pd.DataFrame, points: pd.DataFrame,
                against: pd.DataFrame) -> dict:
    """06_shared_file, keyed ``<mode>`` then ``layout/rw/nj<numjobs>`` (``shared_file.summary``), and the ratio
    N-to-1 / N-to-N per point (``shared_file.versus``)."""
    numbers = {}
    for column in ("bw_bytes", "expected_bytes", "ceiling_bytes", "fraction", "bytes_ok", "within_caps",
                   "reach_devices", "runtime_s"):
        numbers[column] = {mode: {_point_key(r): plain(getattr(r, column)) for r in group.itertuples()}
                           for mode, group in points.groupby("variant", sort=True)}
    numbers["ratio"] = {_point_key(r): plain(r.ratio) for r in against.itertuples()}
    headline = {f"N-to-1 {r.layout} {r.rw}": f"{rate(r.n_to_1_bw_bytes)} ({percent(r.ratio, 0)} of N-to-N)"
                for r in against.itertuples()}
    return {**_stage(result), "runs": len(rows), "file_size": file_size, "unsupported": _unsupported(support),
            **numbers, "headline": headline}


def consistency(result, nodes: list[int], reps: pd.DataFrame, steady: pd.DataFrame) -> dict:
    """07_consistency: run-to-run statistics per point (``stats.repetition_stats``) and the variation within
    runs (``monitor.stability``)."""
    repetitions = {f"{r.layout}/{r.rw}/nj{r.numjobs}": {"mean": r.bw_bytes, "median": r.bw_bytes_median,
                                                         "std": r.bw_bytes_std, "cv": r.bw_bytes_cv, "reps": r.reps}
                   for r in reps.itertuples()}
    return {**_stage(result), "numa_nodes": nodes, "repetitions": repetitions,
            "within_run_cv": float(steady["cv"].mean()), "intervals": int(steady["intervals"].sum()),
            "headline": {"run-to-run CV": percent(reps['bw_bytes_cv'].max()),
                         "within-run CV": percent(steady['cv'].mean())}}


def comparison(where: pd.DataFrame, absent: list[str], frame: pd.DataFrame, wide: pd.DataFrame) -> dict:
    """08_compare: the sources (``raw.gather``), those not found, and per row of ``compare.side_by_side``
    measured by more than one source its spread, fastest / slowest."""
    spread = {" ".join(map(str, k)): float(r.dropna().max() / r.dropna().min())
              for k, r in wide.iterrows() if r.notna().sum() > 1}
    return {"sources": list(where["source"]), "absent": absent, "rows": len(frame), "spread": spread,
            "headline": {"sources": str(len(where)), "largest spread": percent(max(spread.values(), default=1) - 1, 0)}}


def compare(changed: pd.DataFrame, alone: pd.DataFrame, differs: pd.DataFrame, margin: float) -> dict:
    """compare: the margin, how many verdicts of each kind, every change (its point, metric, both means, the change
    and its interval, the verdict, the runs a side), what differs (what, a, b) and how many points one side ran."""
    keep = [c for c in changed.columns if c not in ("said", "held", "q", "speed_hi")]
    counts = changed["verdict"].value_counts() if len(changed) else pd.Series(dtype=int)
    largest = percent(changed["change"].iloc[0], 1, signed=True) if len(changed) else "-"
    return {"margin": margin, "verdicts": {str(k): int(v) for k, v in counts.items()},
            "changes": [{k: plain(v) for k, v in row.items()} for row in changed[keep].to_dict("records")],
            "environment": differs.to_dict("records"), "only_in_one": len(alone),
            "headline": {"verdicts": str(len(changed)), "slower": str(int(counts.get("slower", 0))),
                         "largest change": largest}}


def reference_studies(claims: pd.DataFrame, ceil003: pd.DataFrame) -> dict:
    """reference_studies: each published claim stated against ours (``baseline_and_tax.compare_with_stated``), seed 003's
    binding limits and the PCIe gen2 x8 link seed 004 names."""
    numbers = {c.claim: {"stated": float(c.stated), "ours": float(c.ours), "agrees": bool(c.agrees)}
               for c in claims.itertuples()}
    numbers["seed003_binding_limit"] = sorted(set(ceil003["binding_limit"]))
    numbers["seed004_pcie_gen2_x8_bw_bytes"] = ceilings.pcie_rate(2, 8)
    return numbers


def applications(apps: pd.DataFrame, verdicts: pd.DataFrame) -> dict:
    """09: per layout, the transfer's best copy rate and pgbench's best tps; each (layout, workload)'s bottleneck
    verdict (``analysis.monitor.bottlenecks``)."""
    def best(workload: str, metric: str) -> dict:
        rows = apps[(apps["workload"] == workload) & (apps["metric"] == metric)]
        return {str(k): plain(v) for k, v in rows.groupby("layout")["value"].max().items()}
    copy, tps = best("transfer", "copy_bw"), best("pgbench", "tps")
    said = {f"{layout}/{workload}": str(group["verdict"].iloc[0])
            for (layout, workload), group in verdicts.groupby(["layout", "workload"])}
    headline = {f"copy {k}": rate(v) for k, v in copy.items() if v is not None}
    headline.update({f"pgbench {k}": f"{v:,.0f} tps" for k, v in tps.items() if v is not None})
    return {"application_rows": int(len(apps)), "workloads": sorted(apps["workload"].unique()),
            "layouts": sorted(apps["layout"].unique()), "copy_bw_bytes": copy, "tps": tps, "verdicts": said,
            "headline": headline}


def cluster(table: pd.DataFrame, efficiency: pd.DataFrame, limits: pd.DataFrame,
            tax: pd.DataFrame | None = None, scored: pd.DataFrame | None = None) -> dict:
    """10: the cluster's best aggregate and efficiency per layout, rw and host count, the limit that binds, each
    layout's tax against the hosts' local storage (when measured), failed rows; with ``scored``
    (``analysis.prediction.scoring.against``: the predictions stated before each host count ran), ``prediction_error``: the
    largest |measured / predicted - 1| of the cluster's own points per ``layout/rw/hosts``, and
    ``predictions_outside``: the points (the hosts' own among them) outside their interval by more than the
    margin."""
    eff = {f"{r.layout}/{r.rw}/{r.hosts}": {"best_bw_bytes": plain(r.best_bw_bytes),
                                             "efficiency": plain(r.efficiency)} for r in efficiency.itertuples()}
    binds = {f"{r.layout}/{r.rw}/{r.hosts}": str(r.binding_limit) for r in limits.itertuples() if r.host == ALL}
    taxes = {} if tax is None else {f"{r.layout}/{r.rw}/{r.hosts}": plain(r.tax) for r in tax.itertuples()}
    failed = table[table["status"] == "failed"]
    headline = {f"{key} host(s)": f"{rate(v['best_bw_bytes'])}, efficiency {percent(v['efficiency'], 0)}"
                for key, v in eff.items() if v["best_bw_bytes"] is not None and v["efficiency"] is not None}
    return {"cluster": eff, "binding_limit": binds, "tax": taxes, "failed_rows": int(len(failed)),
            "failed_hosts": sorted(failed["host"].astype(str).unique()), "headline": headline, **_predicted(scored)}


def job_file(summary: pd.DataFrame) -> dict:
    """11: per (layout, group): the best bandwidth, its efficiency and its tax with the test's verdict."""
    groups = {f"{r.layout}/{r.devices}/{r.group}": {"best_bw_bytes": plain(r.best_bw_bytes),
                                                     "efficiency": plain(r.efficiency), "tax": plain(r.tax),
                                                     "tax_verdict": str(r.tax_verdict)}
              for r in summary.itertuples()}
    headline = {f"{r.layout} {r.group}": rate(r.best_bw_bytes) for r in summary.itertuples()
                if r.layout != "single"}
    return {"groups": groups, "headline": headline}
