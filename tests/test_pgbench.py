"""pgbench's summary and its --aggregate-interval logs, on real output of pgbench 15 (tests/golden/applications)."""
from __future__ import annotations

from pathlib import Path

import pytest

from flashscale.errors import ConfigError, FlashscaleError
from flashscale.measure.workloads import pgbench

GOLDEN = Path(__file__).parent / "golden" / "applications"


def test_summary_gives_tps_and_latency_in_ns():
    found = pgbench.summary((GOLDEN / "pgbench-15.out").read_text())
    assert found == {"tps": (177.881904, "tps"), "latency_mean": (pytest.approx(11.210e6), "ns"),
                     "latency_stddev": (pytest.approx(10.158e6), "ns")}
    with pytest.raises(FlashscaleError, match="'tps'"):
        pgbench.summary("pgbench: error: connection to server failed\n")


def test_interval_logs_of_every_thread_make_one_series():
    logs = [p.read_text() for p in sorted(GOLDEN.glob("pgbench_log.*"))]
    series = pgbench.intervals(logs, interval_s=1)
    assert list(series["t_s"]) == [0, 1, 2, 3][:len(series)]
    second = series.iloc[1]
    assert second["transactions"] == 72 + 64 and second["tps"] == 136
    assert second["latency_mean_ns"] == pytest.approx((1006947 + 1008831) / 136 * 1e3)
    assert second["latency_min_ns"] == pytest.approx(613e3) and second["latency_max_ns"] == pytest.approx(49099e3)
    # pgbench writes no line for its last, unfinished interval: the series holds fewer than the 533 of the summary
    assert 0 < series["transactions"].sum() < 533


def test_axes_are_checked():
    with pytest.raises(ConfigError, match="clients"):
        pgbench.Pgbench(clients=())
