"""make bench-cost's scoring and store: every run a row, every figure rescored from the rows alone.

A row is one run of one question's point: ``scenario`` (how much the caps vary run to run), ``mode`` ("fixed" or
"precise"), ``campaign``, ``question`` ("single", "jbod", "btrfs-raid0"), ``rep``, ``bw_bytes`` (what fio measured),
``truth_bps`` (the known mean of what the point's devices allow, by construction), ``caps_set`` (the caps the bench
set on the point's devices before this run), ``run_s`` (the run's runtime + ramp as asked: its device time),
``reps_reason`` and ``most`` (the sweep's max_repetitions; 0 for a fixed count).

A run on the emulated array may be above its truth by the throttle's first slice (``measure.truth.tolerance``: 5% of
a 2 s run, 2% from 5 s on); each question is therefore scored twice: its interval against the exact truth
(``coverage``), and against the truth as the harness states it, up to that tolerance above (``tolerated``).

Per campaign, three questions are scored against their truths: the single-device baseline's 95% interval
(``stats.interval_t``) against its known mean, jbod's efficiency over 2 x the baseline (``stats.ratio_interval``)
against its truth (1.0 where jbod's devices are the single device's), btrfs-raid0's tax against jbod
(``significance.tax_test``) against its truth, and its verdict against a 2% margin (``significance.practical``; in
the precise mode the sequential test's final look, ``significance.sequential_tax``, as the campaign decided it).
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pandas as pd

from flashscale.analysis import significance, stats
from flashscale.measure import truth as harness_truth

ROWS = "rows.jsonl.gz"
SETTINGS = "settings.json"
MARGIN = significance.DEFAULT_MARGIN


def right_verdict(truth_tax: float, margin: float = MARGIN) -> str:
    """The verdict a tax of ``truth_tax`` deserves against ``margin``."""
    return "tax" if truth_tax > margin else ("gain" if truth_tax < -margin else "equivalent")


def verdict(btrfs: np.ndarray, jbod: np.ndarray, most: int) -> str:
    """btrfs-raid0's verdict against jbod: the sequential test's final look where the point ran until it decided
    (``most`` > 0), else the fixed grid's 95% test read against the margin."""
    if most:  # its last look, at the fewer side's runs (the reference sampled as the looks needed it, or to the most)
        return significance.sequential_tax(btrfs, jbod, most, MARGIN, reference_grows=True).verdict
    return significance.practical(significance.tax_test(btrfs, jbod), MARGIN)


def score_campaign(runs: pd.DataFrame) -> dict:
    """One campaign's runs scored: device time, and each question's interval against its truth."""
    got = {q: g.sort_values("rep") for q, g in runs.groupby("question")}
    bw = {q: g["bw_bytes"].to_numpy(float) for q, g in got.items()}
    truth = {q: float(g["truth_bps"].iloc[0]) for q, g in got.items()}
    lo, hi = stats.interval_t(bw["single"])
    e_lo, e_hi = stats.ratio_interval(bw["jbod"], 2 * bw["single"])
    efficiency = truth["jbod"] / (2 * truth["single"])
    test = significance.tax_test(bw["btrfs-raid0"], bw["jbod"])
    tax = 1.0 - truth["btrfs-raid0"] / truth["jbod"]
    said = verdict(bw["btrfs-raid0"], bw["jbod"], int(runs["most"].iloc[0]))
    grow = 1 + harness_truth.tolerance(float(runs["runtime_s"].min()))  # a run may be this far above its truth
    band = harness_truth.tax_band(tax, float(runs["runtime_s"].min()))
    return {"device_s": float(runs["run_s"].sum()), "runs": len(runs),
            "baseline_covered": bool(lo <= truth["single"] <= hi),
            "efficiency_covered": bool(e_lo <= efficiency <= e_hi),
            "tax_covered": bool(test.lo <= tax <= test.hi),
            "baseline_tolerated": bool(lo <= truth["single"] * grow and hi >= truth["single"]),
            "efficiency_tolerated": bool(e_lo <= efficiency * grow and e_hi >= efficiency / grow),
            "tax_tolerated": bool(test.lo <= band[1] and test.hi >= band[0]),
            "right": said == right_verdict(tax), "verdict": said}


def score(rows: pd.DataFrame) -> pd.DataFrame:
    """Per scenario and mode: campaigns, mean device time and runs a campaign, coverage of the truth by the 95%
    intervals (all three questions' intervals pooled, and each), the share of right verdicts."""
    scored = pd.DataFrame([{"scenario": s, "mode": m, "campaign": c, **score_campaign(g)}
                           for (s, m, c), g in rows.groupby(["scenario", "mode", "campaign"], sort=False)])
    covered = ["baseline_covered", "efficiency_covered", "tax_covered"]
    tolerated = [c.replace("covered", "tolerated") for c in covered]
    table = scored.groupby(["scenario", "mode"], sort=False).agg(
        campaigns=("campaign", "size"), device_s=("device_s", "mean"), runs=("runs", "mean"),
        **{c: (c, "mean") for c in covered + tolerated}, right=("right", "mean")).reset_index()
    table["coverage"] = table[covered].mean(axis=1)
    table["tolerated"] = table[tolerated].mean(axis=1)
    return table


def lines(table: pd.DataFrame) -> list[str]:
    """The table in words, each scenario's precise mode beside its fixed grid."""
    said = []
    for scenario, group in table.groupby("scenario", sort=False):
        by = {row.mode: row for row in group.itertuples()}
        fixed, ours = by["fixed"], by["precise"]
        said.append(
            f"info {scenario}, {fixed.campaigns} campaigns each: fixed 3 runs {fixed.device_s:.0f} s of device time "
            f"({fixed.runs:.1f} runs), coverage {fixed.coverage:.1%} (baseline {fixed.baseline_covered:.0%}, "
            f"efficiency {fixed.efficiency_covered:.0%}, tax {fixed.tax_covered:.0%}), right verdicts "
            f"{fixed.right:.0%}, within the harness's tolerance {fixed.tolerated:.1%}; precise {ours.device_s:.0f} s "
            f"({ours.device_s / fixed.device_s:.2f} x, {ours.runs:.1f} runs), coverage {ours.coverage:.1%} (baseline "
            f"{ours.baseline_covered:.0%}, efficiency "
            f"{ours.efficiency_covered:.0%}, tax {ours.tax_covered:.0%}), right verdicts {ours.right:.0%}, "
            f"within the harness's tolerance {ours.tolerated:.1%}")
    return said


def markdown(table: pd.DataFrame) -> str:
    """The table as docs/validation.md shows it."""
    head = ("| scenario | mode | campaigns | device s a campaign | runs | coverage (baseline, efficiency, tax) "
            "| within the harness's tolerance | right verdicts |\n|---|---|---|---|---|---|---|---|\n")
    body = "".join(
        f"| {r.scenario} | {r.mode} | {r.campaigns} | {r.device_s:.0f} | {r.runs:.1f} | {r.coverage:.1%} "
        f"({r.baseline_covered:.0%}, {r.efficiency_covered:.0%}, {r.tax_covered:.0%}) | {r.tolerated:.1%} "
        f"| {r.right:.0%} |\n"
        for r in table.itertuples())
    return head + body


def store(folder: Path, rows: list[dict], settings: dict) -> None:
    """Every run's row (gzip'd JSON lines) and the settings beside them, in ``folder`` (made here, new)."""
    folder.mkdir(parents=True, exist_ok=False)
    with gzip.open(folder / ROWS, "wt") as fh:
        fh.writelines(json.dumps(row) + "\n" for row in rows)
    (folder / SETTINGS).write_text(json.dumps(settings, indent=1) + "\n")


def load(folder: Path) -> pd.DataFrame:
    """The rows a run of the bench stored in ``folder``."""
    with gzip.open(Path(folder) / ROWS, "rt") as fh:
        return pd.DataFrame([json.loads(line) for line in fh])
