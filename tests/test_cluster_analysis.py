"""A cluster's numbers come from its measured runs only: warm-ups, precondition rows and failed hosts left out."""
from __future__ import annotations

import pandas as pd
import pytest

from flashscale.analysis import cluster_numbers
from flashscale.errors import AnalysisError
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
    out = cluster_numbers.efficiency(table()).set_index("hosts")
    assert out.loc[2, "best_bw_bytes"] == 390 * MB
    assert out.loc[2, "efficiency"] == pytest.approx(390 / 400)


def test_the_cluster_figure_draws_only_measured_runs():
    axis = plots.cluster_throughput(table()).axes[0]
    heights = sorted(y for line in axis.get_lines() for y in line.get_ydata())
    assert max(heights) == pytest.approx(390)


def two_layouts() -> pd.DataFrame:
    """Local storage at the devices' 400 MB/s on 2 hosts; over nbd each host's link carries 100 MB/s of data."""
    rows = [("jbod", "host0", 1, 200 * MB, float("nan")), ("jbod", "all", 1, 200 * MB, float("nan")),
            ("jbod", "all", 2, 400 * MB, float("nan")),
            ("nbd", "host0", 1, 99 * MB, 100 * MB), ("nbd", "all", 1, 99 * MB, 200 * MB),
            ("nbd", "host0", 2, 98 * MB, 100 * MB), ("nbd", "all", 2, 196 * MB, 200 * MB)]
    frame = pd.DataFrame(rows, columns=["layout", "host", "hosts", "bw_bytes", "network_bw_bytes"])
    return frame.assign(rw="read", phase="measure", warmup=False, status="ok", cap_bps=100 * MB,
                        devices=lambda t: 2 * t["hosts"].where(t["host"] == "all", 1))


def test_the_tax_of_each_layout_is_against_the_hosts_local_storage_at_the_same_host_count():
    tax = cluster_numbers.tax(two_layouts()).set_index(["layout", "hosts"])["tax"]
    assert tax[("jbod", 2)] == 0
    assert tax[("nbd", 1)] == pytest.approx(1 - 99 / 200) and tax[("nbd", 2)] == pytest.approx(1 - 196 / 400)
    with pytest.raises(AnalysisError, match="no layout of the hosts' own storage"):
        cluster_numbers.tax(two_layouts().query("layout == 'nbd'"))


def test_only_a_layout_whose_data_crosses_a_known_link_meets_the_network_ceiling():
    limits = cluster_numbers.ceilings(two_layouts()).set_index(["layout", "hosts", "host"])  # at the caps held: 100 MB/s
    assert limits.loc[("jbod", 2, "all"), "binding_limit"] == "device"
    assert pd.isna(limits.loc[("jbod", 2, "all"), "ceiling_network_bw_bytes"])
    assert limits.loc[("nbd", 2, "all"), "binding_limit"] == "network"
    assert limits.loc[("nbd", 2, "all"), "expected_ceiling_bw_bytes"] == 2 * 100 * MB  # the fabric: a link per host
    assert limits.loc[("nbd", 2, "host0"), "expected_ceiling_bw_bytes"] == 100 * MB  # the host: its own link
    assert limits.loc[("nbd", 2, "host0"), "ceiling_device_bw_bytes"] == 200 * MB


def test_the_devices_ceiling_is_the_cap_the_rows_were_held_to_and_none_where_none_was():
    lowered = cluster_numbers.ceilings(two_layouts().assign(cap_bps=60 * MB)).set_index(["layout", "hosts", "host"])
    assert lowered.loc[("jbod", 2, "all"), "ceiling_device_bw_bytes"] == pytest.approx(4 * 60 * MB)
    real = cluster_numbers.ceilings(two_layouts().assign(cap_bps=float("nan"))).set_index(["layout", "hosts", "host"])
    assert pd.isna(real.loc[("jbod", 2, "all"), "ceiling_device_bw_bytes"])  # a real host's devices: unknown
    assert real.loc[("nbd", 2, "all"), "binding_limit"] == "network"
