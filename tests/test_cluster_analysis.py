"""A cluster's numbers come from its measured runs only: warm-ups, precondition rows and failed hosts left out."""
from __future__ import annotations

import pandas as pd
import pytest

from flashscale.analysis import cluster
from flashscale.publish import plots

MB = 1e6


def table() -> pd.DataFrame:
    rows = [
        # host, hosts, phase, warmup (as a CSV reads it), status, bw
        ("host0", 1, "measure", "False", "ok", 200 * MB),
        ("all", 1, "measure", "False", "ok", 200 * MB),
        ("all", 2, "measure", "False", "ok", 390 * MB),
        ("all", 2, "measure", "True", "ok", 900 * MB),          # a warm-up: never a result
        ("all", 2, "precondition", "False", "ok", 2000 * MB),   # preparing files: never a result
        ("all", 2, "measure", "False", "failed", float("nan")),
    ]
    frame = pd.DataFrame(rows, columns=["host", "hosts", "phase", "warmup", "status", "bw_bytes"])
    return frame.assign(rw="read", jobs_per_host=1, devices=2)


def test_efficiency_counts_only_measured_runs_of_hosts_that_answered():
    out = cluster.efficiency(table()).set_index("hosts")
    assert out.loc[2, "best_bw_bytes"] == 390 * MB
    assert out.loc[2, "efficiency"] == pytest.approx(390 / 400)


def test_the_cluster_figure_draws_only_measured_runs():
    axis = plots.cluster_throughput(table()).axes[0]
    heights = sorted(y for line in axis.get_lines() for y in line.get_ydata())
    assert max(heights) == pytest.approx(390)
