"""Runs unlike the others of their point, and runs that stalled: flagged with their evidence, never dropped
(analysis.outliers, measure.rate_log, analysis.evidence's sentences). The unlike rule's false-flag rate is held to its
stated 1% by Monte Carlo on our own function, over the runs and spreads a user may have; the rate log's evidence is
read from logs written as fio writes them (the format of tests/golden's runs: time_ms, KiB/s, direction, bs, offset)."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from flashscale.analysis import evidence, outliers
from flashscale.analysis.stats import interval_t
from flashscale.measure import fio, rate_log, results

MC_DRAWS = 4000


@pytest.mark.parametrize("runs, spread", [(3, 0.02), (3, 0.2), (5, 0.005), (5, 0.02), (10, 0.2)])
def test_a_run_like_the_others_is_flagged_at_most_its_stated_rate(runs, spread):
    rng = np.random.default_rng(runs * 1000 + int(spread * 1000))
    draws = 400e6 * np.exp(rng.normal(0.0, spread, (MC_DRAWS, runs)))
    share = np.mean([outliers.unlike(v, margin=0.0) for v in draws])  # no margin: the t rule alone
    mc = math.sqrt(outliers.LEVEL * (1 - outliers.LEVEL) / (MC_DRAWS * runs))
    # measured 0.53%, 0.98%, 1.00%, 1.03%, 0.99% per run on 20,000 draws (the floor on ties takes some at 3 runs)
    assert share <= outliers.LEVEL + 3 * mc, share


def test_a_run_30_percent_slow_among_five_is_flagged_and_ties_flag_nothing_within_the_margin():
    rng = np.random.default_rng(7)
    draws = 400e6 * np.exp(rng.normal(0.0, 0.02, (1000, 5)))
    draws[:, 2] *= 0.7
    found = np.array([outliers.unlike(v) for v in draws])
    assert found[:, 2].mean() > 0.99 and found[:, [0, 1, 3, 4]].mean() < 0.01  # measured 100%, 0.0%
    assert not outliers.unlike([400e6, 400e6, 400e6, 399e6]).any()  # 0.25% off runs that tie: within 2%
    assert outliers.unlike([400e6, 400e6, 400e6, 380e6]).tolist() == [False, False, False, True]
    assert not outliers.unlike([400e6, 100e6]).any()  # two runs: neither is the odd one
    assert not outliers.unlike([400e6, 0.0, 390e6]).any()


@given(st.lists(st.floats(1.0, 1e12), min_size=0, max_size=12), st.floats(0.0, 0.5))
@settings(max_examples=200, deadline=None)
def test_the_rule_answers_every_run_and_never_flags_more_than_all_but_one(values, margin):
    odd = outliers.unlike(values, margin)
    assert odd.shape == (len(values),) and odd.dtype == bool
    assert odd.sum() <= max(len(values) - 1, 0)


def _table(rates, stall=None):
    rows = [{"layout": "jbod", "devices": 2, "rw": "write", "bs": 2**20, "numjobs": 1, "iodepth": 1, "rep": k,
             "bw_bytes": r, "runtime_s": 10.0, "phase": "measure", "status": "ok", "warmup": False}
            for k, r in enumerate(rates)]
    for row, s in zip(rows, stall or []):
        row.update(s)
    return results.to_frame(rows)


def test_the_report_names_the_odd_run_and_keeps_it_in_the_interval():
    table = _table([400e6, 402e6, 398e6, 401e6, 280e6])
    (said,) = evidence.outlier_sentences(table)
    assert said.startswith("jbod (2 device(s)) write 1 MiB with 1 job(s), rep 4 at 280 MB/s, -30.0% from the other "
                           "4 runs (400 MB/s): unlike them")
    assert "1% of the time" in said and "kept and counted" in said
    assert said in evidence.measurement_sentences(table)
    assert evidence.outlier_sentences(table, margin=0.5) == []  # 30% is within a 50% margin
    low, high = interval_t(table["bw_bytes"].to_numpy())  # every run counted: the interval is the five runs'
    assert low < 280e6 * 1.2 and high > 400e6 * 0.99


def test_a_table_whose_every_run_is_too_short_gets_no_flag_and_no_error():
    """Found by test-long: 05_metadata on plain directories, every run under a second, stopped with AnalysisError
    where the report must say its runs are too short (baseline_and_tax.rates refuses such a table)."""
    table = _table([400e6, 402e6, 280e6]).assign(too_short=True)
    assert evidence.outlier_sentences(table) == [] and evidence.stall_sentences(table) == []
    assert any("too fast to measure" in s for s in evidence.measurement_sentences(table))


def _log(folder, job, seconds, kib_s):
    lines = [f"{int(t * 1000)}, {int(v)}, 1, 1048576, 0" for t, v in zip(seconds, kib_s)]
    (folder / f"bw_bw.{job}.log").write_text("\n".join(lines) + "\n")


def test_a_stall_in_the_log_is_its_row_s_evidence_and_the_report_says_it(tmp_path):
    seconds = np.arange(1, 11)
    one, two = np.full(10, 200_000.0), np.full(10, 200_000.0)  # 200,000 KiB/s a job, two jobs
    one[3:5] = [100_000, 60_000]
    two[3:6] = [0, 0, 150_000]
    _log(tmp_path, 1, seconds, one)
    _log(tmp_path, 2, seconds, two)
    got = rate_log.evidence(tmp_path, 1000)
    # nine full seconds (the tenth, the last, left out): the 4th and the 5th (100,000 and 60,000 summed) under half
    # the median of 400,000, the 6th (350,000) not; at exactly half, a second is not under it
    assert got == pytest.approx({"rate_seconds": 9.0, "stall_s": 2.0, "rate_low": 0.15, "rate_low_at_s": 5.0})
    _log(tmp_path, 1, seconds, np.full(10, 200_000.0))
    _log(tmp_path, 2, seconds, [*[200_000] * 4, 0, *[200_000] * 5])
    assert rate_log.evidence(tmp_path, 1000)["stall_s"] == pytest.approx(0.0)
    _log(tmp_path, 1, seconds, one)
    _log(tmp_path, 2, seconds, two)
    table = _table([400e6, 401e6, 399e6], stall=[{}, got, {}])
    (said,) = evidence.stall_sentences(table)
    assert said == ("jbod (2 device(s)) write 1 MiB with 1 job(s), rep 1: stalled 2 s of its 9 under half its "
                    "median second (its slowest second 15% of it, 5 s in); kept and counted.")


def test_a_steady_log_shows_no_stall_and_no_log_or_a_short_one_shows_nothing(tmp_path):
    _log(tmp_path, 1, np.arange(1, 7), [100_000, 101_000, 99_000, 100_500, 98_000, 120_000])
    got = rate_log.evidence(tmp_path, 1000)
    assert got["stall_s"] == pytest.approx(0.0) and got["rate_low"] == pytest.approx(98_000 / 100_000)
    assert all(math.isnan(v) for v in rate_log.evidence(tmp_path / "none", 1000).values())
    assert all(math.isnan(v) for v in rate_log.evidence(tmp_path, None).values())
    short = tmp_path / "short"
    short.mkdir()
    _log(short, 1, [1, 2, 3], [100_000, 10, 100_000])
    got = rate_log.evidence(short, 1000)
    # 2 full seconds say nothing of a median
    assert got["rate_seconds"] == pytest.approx(2.0) and math.isnan(got["stall_s"])


def test_a_crafted_log_is_read_as_none_and_never_followed(tmp_path):
    (tmp_path / "bw_bw.1.log").write_text("not, a, log\n\x00\x01\n")
    (tmp_path / "outside").write_text("1000, 5, 1, 0, 0\n" * 5)
    (tmp_path / "bw_bw.2.log").symlink_to(tmp_path / "outside")
    assert all(math.isnan(v) for v in rate_log.evidence(tmp_path, 1000).values())


def test_a_timed_job_logs_once_a_second_and_a_sweep_s_own_log_is_kept():
    job = fio.FioJob(rw="write", bs=2**20, numjobs=1, iodepth=1, runtime_s=5, ramp_s=1, targets=("/dev/x",))
    logged = rate_log.logged(job)
    assert dict(logged.extra) == {"write_bw_log": "bw", "log_avg_msec": "1000"}
    assert rate_log.interval_ms(logged) == 1000 and rate_log.logged(logged) == logged
    own = fio.FioJob(rw="read", bs=4096, numjobs=1, iodepth=1, runtime_s=5, ramp_s=0, targets=("/dev/x",),
                     extra=(("write_bw_log", "bw"), ("log_avg_msec", "250")))
    assert rate_log.logged(own) == own and rate_log.interval_ms(own) == 250
    assert rate_log.interval_ms(job) is None
    untimed = fio.FioJob(rw="write", bs=2**20, numjobs=1, iodepth=1, runtime_s=5, ramp_s=0, targets=("/dev/x",),
                         time_based=False)
    assert rate_log.logged(untimed) == untimed
    crafted = fio.FioJob(rw="read", bs=4096, numjobs=1, iodepth=1, runtime_s=5, ramp_s=0, targets=("/dev/x",),
                         extra=(("write_bw_log", "bw"), ("log_avg_msec", "1e3; rm")))
    assert rate_log.interval_ms(crafted) is None
    rendered = fio.render(logged, log_dir=Path("/data/run/rep0"))
    assert "write_bw_log=/data/run/rep0/bw" in rendered and "log_avg_msec=1000" in rendered
