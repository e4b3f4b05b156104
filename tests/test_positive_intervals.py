"""Intervals that respect what they measure (issue 42, item 4): a rate, a ratio or an efficiency never has an
interval below zero, and a point of one run says so in words instead of a range."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from flashscale.analysis import agreement
from flashscale.analysis.stats import describe, interval_t, ratio_interval, repetition_stats, summary_intervals
from flashscale.publish.tables import formatted

ROOT = Path(__file__).resolve().parents[1]
MB = 1e6

# Rates as fio reports them, from a crawling device (1 KB/s) to a fast array (100 GB/s), two to twelve runs.
rates = st.lists(st.floats(min_value=1e3, max_value=1e11, allow_nan=False, allow_infinity=False),
                 min_size=2, max_size=12)
levels = st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99, 0.999])


@settings(max_examples=300, deadline=None)
@given(rates, levels)
def test_no_interval_of_a_rate_goes_below_zero_and_each_holds_its_mean(values, confidence):
    values = np.array(values)
    lo, hi = interval_t(values, confidence)
    assert 0 < lo <= hi < np.inf
    mean = values.mean()
    assert lo <= mean * (1 + 1e-12) and mean <= hi * (1 + 1e-12)  # around the mean, to a rounding
    d = describe(values, confidence)
    assert (d["lo"], d["hi"]) == (lo, hi)


@settings(max_examples=200, deadline=None)
@given(rates, rates, levels)
def test_no_interval_of_a_ratio_goes_below_zero(a, b, confidence):
    lo, hi = ratio_interval(np.array(a), np.array(b), confidence)
    ratio = np.mean(a) / np.mean(b)
    assert 0 < lo <= ratio * (1 + 1e-12) and ratio <= hi * (1 + 1e-12)


@settings(max_examples=100, deadline=None)
@given(rates, rates)
def test_a_summary_shows_no_bound_below_zero(single, jbod):
    base = dict(rw="read", bs=1048576, numjobs=1, iodepth=1, warmup=False)
    rows = ([dict(base, layout="single", devices=1, rep=i, bw_bytes=v) for i, v in enumerate(single, 1)]
            + [dict(base, layout="jbod", devices=2, rep=i, bw_bytes=v) for i, v in enumerate(jbod, 1)])
    out = summary_intervals(pd.DataFrame(rows), reference="jbod")
    bounds = ["best_bw_bytes_lo", "baseline_bw_bytes_lo", "efficiency_lo", "layout_efficiency_lo"]
    assert (out[bounds] > 0).all().all()
    text = formatted(out, ["layout", "best_bw_bytes", "baseline_bw_bytes", "efficiency"])
    assert not text.apply(lambda c: c.str.contains(r"\(-\d| to -\d", regex=True)).any().any()


def test_one_run_says_so_in_words():
    assert all(np.isnan(interval_t(np.array([5e8]))))
    assert all(np.isnan(agreement.Side.of([5e8]).interval()))
    rows = [dict(layout="single", devices=1, rw="read", bs=1048576, numjobs=1, iodepth=1, warmup=False, rep=1,
                 bw_bytes=379 * MB)]
    reps = repetition_stats(pd.DataFrame(rows))
    text = formatted(reps, ["layout", "bw_bytes"])
    assert text["bandwidth"].iloc[0] == "379 MB/s (one run: no interval)"


def test_the_side_interval_is_the_agreements():
    """The one rule: the interval of a mean and of a ratio are both the t interval of a log, back-transformed."""
    a, b = np.array([100.0, 104.0, 98.0]), np.array([50.0, 51.0, 52.5])
    said = agreement.between(a, b)
    s_a, s_b = agreement.Side.of(a), agreement.Side.of(b)
    se = np.hypot(s_a.log_se, s_b.log_se)
    df = se ** 4 / (s_a.log_se ** 4 / 2 + s_b.log_se ** 4 / 2)
    lo, hi = agreement.Side(said.ratio, se, df, 6).interval()
    assert (said.lo, said.hi) == (pytest.approx(lo, rel=1e-12), pytest.approx(hi, rel=1e-12))


def test_analyze_on_the_docs_import_example_prints_no_interval_below_zero(tmp_path):
    """docs/howto/import.md's own example: jbod's best printed "1,057 MB/s (-981 to 3,096)" before."""
    cli = [sys.executable, "-m", "flashscale.cli"]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "lib")}
    folder = tmp_path / "imported"
    subprocess.run([*cli, "import", str(ROOT / "tests/golden/imported/benchfio"), "--to", str(folder),
                    "--pattern", "{layout}/{bs}/run-{rep}/{rw}-{iodepth}-{numjobs}.json",
                    "--map", str(ROOT / "tests/golden/imported/benchfio-map.yaml")],
                   check=True, capture_output=True, text=True, env=env, cwd=tmp_path)
    shown = subprocess.run([*cli, "analyze", str(folder), "--reference", "jbod"], check=True, capture_output=True,
                           text=True, env=env, cwd=tmp_path).stdout
    assert "best GB/s" in shown and not re.search(r"\(-\d| to -\d", shown)
    assert "1.06 (0.154–7.27)" in shown  # 1,057 MB/s x exp(-/+ t(0.975, 1) x cv / sqrt(2)), cv of 2 runs
