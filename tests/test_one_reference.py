"""One rule for "N x the single device" (issue 42's review): the same rows, read by the rule the sweep's sequential
tax test follows while points run (``measure.reference``, through the recorder's rates) and by the analysis
(``analysis.stand_in``, through ``stats.summary_intervals``), name the same reference, tax the same layouts, and
give the same N x single values. Before the rule was one, they disagreed on a layout of one device (a file system
on one drive): the sweep decided its tax against 1 x single while the analysis gave it none."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from flashscale.analysis import stand_in
from flashscale.analysis.stats import summary_intervals
from flashscale.measure import reference

MB = 1e6
MIB = 1048576
POINT = "write-bs1048576-nj4-qd1"


def _rows(layout: str, devices: int, bws: list[float], build: int = 0) -> list[dict]:
    base = dict(layout=layout, devices=devices, rw="write", bs=MIB, numjobs=4, iodepth=1, warmup=False,
                point=POINT, status="ok", phase="measure", build=build)
    return [dict(base, rep=i, bw_bytes=bw * MB) for i, bw in enumerate(bws, start=1 + 10 * build)]


def _while_running(frame: pd.DataFrame) -> tuple[str | None, dict]:
    """What the recorder holds as the points run: the reference of the campaign's layouts, and each measured run's
    rate under (layout, point, build), as ``Recorder._point`` keeps them."""
    rates: dict = {}
    for row in frame.itertuples(index=False):
        rates.setdefault((row.layout, row.point, row.build), []).append(float(row.bw_bytes))
    return reference.reference_of(list(dict.fromkeys(frame["layout"]))), rates


@pytest.fixture
def without_jbod() -> pd.DataFrame:
    # the single device over two builds (100, 102 then 98), md-raid0 on 4 devices, btrfs-raid0 on 2, and xfs on
    # one device: no stand-in at one device, so no tax is asked of it by either
    rows = _rows("single", 1, [100, 102]) + _rows("single", 1, [98], build=1)
    rows += _rows("md-raid0", 4, [360, 368, 352]) + _rows("btrfs-raid0", 2, [190, 194, 186])
    rows += _rows("xfs", 1, [97, 99, 98])
    return pd.DataFrame(rows)


def test_the_sweep_and_the_analysis_name_the_same_n_times_single_with_the_same_runs(without_jbod):
    against, rates = _while_running(without_jbod)
    resolved, name = stand_in.resolve(without_jbod, "jbod")
    devices = dict(zip(without_jbod["layout"], without_jbod["devices"]))
    taxed = {layout: n for layout, n in devices.items() if reference.taxed(layout, n, against)}
    assert against == reference.SINGLE and taxed == {"md-raid0": 4, "btrfs-raid0": 2}
    assert name == reference.name(taxed.values()) == "N x single"
    for layout, n in taxed.items():  # the sequential test's reference runs are the analysis's stand-in rows
        while_running = reference.reference_runs(rates, against, layout, n, POINT)
        analysed = resolved.loc[(resolved["layout"] == name) & (resolved["devices"] == n), "bw_bytes"]
        assert sorted(while_running) == pytest.approx(sorted(analysed), rel=1e-12)
        assert sorted(while_running) == pytest.approx([n * bw * MB for bw in (98, 100, 102)], rel=1e-12)
    summary = summary_intervals(without_jbod, reference="jbod", baseline_bs=None).set_index("layout")
    assert set(summary["reference"]) == {name}
    for layout in devices:  # the same layouts carry a tax, tested on as many reference runs as the sweep held
        runs = reference.reference_runs(rates, against, layout, devices[layout], POINT)
        if runs is None:
            assert summary.loc[layout, "tax_verdict"] == "unknown" and math.isnan(summary.loc[layout, "tax"])
        else:
            assert summary.loc[layout, "reference_reps"] == len(runs)
            assert summary.loc[layout, "reference_bw_bytes"] == pytest.approx(sum(runs) / len(runs), rel=1e-12)
    assert summary.loc["md-raid0", "tax"] == pytest.approx(1 - 360 / 400, rel=1e-12)


def test_a_measured_jbod_is_the_reference_of_both_unscaled(without_jbod):
    frame = pd.concat([without_jbod, pd.DataFrame(_rows("jbod", 4, [390, 392, 388]))], ignore_index=True)
    against, rates = _while_running(frame)
    resolved, name = stand_in.resolve(frame, "jbod")
    assert against == name == "jbod" and len(resolved) == len(frame)  # nothing stands in
    for layout, n in dict(zip(frame["layout"], frame["devices"])).items():  # jbod on 4: a tax on 4 devices only
        runs = reference.reference_runs(rates, against, layout, n, POINT, against_devices=4)
        assert runs == (pytest.approx([390 * MB, 392 * MB, 388 * MB], rel=1e-12) if layout == "md-raid0" else None)
    summary = summary_intervals(frame, reference="jbod", baseline_bs=None).set_index("layout")
    assert summary.loc["md-raid0", "reference_bw_bytes"] == pytest.approx(390 * MB, rel=1e-12)
    assert summary.loc["md-raid0", "reference_reps"] == 3
    for layout in ("single", "btrfs-raid0", "xfs"):  # no jbod row at their devices: no tax, in both
        assert summary.loc[layout, "tax_verdict"] == "unknown" and math.isnan(summary.loc[layout, "tax"])


@pytest.mark.parametrize("layouts, asked, against", [
    (["single", "md-raid0"], "jbod", "single"), (["single", "jbod", "md-raid0"], "jbod", "jbod"),
    (["md-raid0", "lvm-striped"], "jbod", None), (["single"], "jbod", None),
    (["single", "lvm-striped"], "md-raid0", None), (["single", "lvm-striped"], "lvm-striped", "lvm-striped"),
])
def test_the_campaigns_rule_and_the_sweeps_reference_are_one(layouts, asked, against):
    """The campaign refuses a REFERENCE exactly where the sweep would find none to decide a tax against."""
    from flashscale.campaigns.rules import rule_problems
    assert reference.reference_of(layouts, asked) == against
    assert (rule_problems({"REFERENCE": asked, "LAYOUTS": layouts}, ["LAYOUTS"]) == []) == (against is not None)
