"""A real tax is found on real devices: one of four emulated devices capped 10% lower (``CAP_SCALE=[1, 1, 1, 0.9]``)
makes a stripe as slow as its slowest member, 4 x 180 = 720 MB/s, while jbod's jobs, one per device, still add up to
3 x 200 + 180 = 780 MB/s. btrfs-raid0's 7.7% tax against jbod is beyond the 2% margin and must be called a tax; with
every device at the same cap the same campaign finds no tax (the quickstart's test). Each layout's rows carry the
truth of the devices it uses at their own caps (720 and 780 MB/s), and no run is above it. Runs of 5 s
(``truth.SLICE_FREE_S``): in a shorter one the throttle's first slice lets a run out more than 2% above its truth,
which then gives no rate (too short), and the runs left bias the means (3 s runs: a tax of 5.4% measured once in
CI, the truth 7.7%)."""
from __future__ import annotations

import pytest

from flashscale.campaigns import campaign
from flashscale.analysis import stats
from flashscale.measure import truth

from conftest import loop_devices_backed_under

pytestmark = pytest.mark.root
CAP = 200_000_000
SLOW = 0.9  # the last device's cap, as a fraction of the others'


def test_a_stripe_held_back_by_one_slow_device_pays_a_tax_beyond_the_margin(tmp_path, fast_backing):
    spec = campaign.CampaignSpec.from_parameters(
        CAMPAIGN="slow", DATA_DIR=str(tmp_path / "data"), BACKING_DIR=str(fast_backing), DEVICES=4,
        DEVICE_SIZE=2**30, CAP_READ_BPS=CAP, CAP_WRITE_BPS=CAP, CAP_SCALE=[1, 1, 1, SLOW],
        LAYOUTS=["jbod", "btrfs-raid0"], RW=["read"], BS=[1048576], NUMJOBS=[4], IODEPTH=[1], REPETITIONS=3,
        RUNTIME_S=round(truth.SLICE_FREE_S), RAMP_S=1, FILE_SIZE=64 * 2**20)
    assert [spec.array.device_caps(i) for i in range(4)] == [(CAP, CAP)] * 3 + [(SLOW * CAP, SLOW * CAP)]
    result = campaign.run(spec, progress=False)
    assert not loop_devices_backed_under(fast_backing)
    measured = result.table[result.table["phase"] == "measure"]
    truths = measured.groupby("layout")["truth_bw_bytes"].unique()
    assert list(truths["jbod"]) == [pytest.approx((3 + SLOW) * CAP)]
    assert list(truths["btrfs-raid0"]) == [pytest.approx(4 * SLOW * CAP)]
    assert not measured["above_truth"].any()
    summary = stats.summary_intervals(result.table, reference="jbod", baseline_bs=None, margin=0.02)
    raid0 = summary.set_index("layout").loc["btrfs-raid0"]
    jbod = summary.set_index("layout").loc["jbod"]
    assert jbod["best_bw_bytes"] == pytest.approx((3 + SLOW) * CAP, rel=0.04)
    assert raid0["best_bw_bytes"] == pytest.approx(4 * SLOW * CAP, rel=0.04)
    assert raid0["tax"] == pytest.approx(1 - 4 * SLOW / (3 + SLOW), abs=0.02)  # 7.7%
    assert raid0["tax_verdict"] == "tax" and raid0["tax_lo"] > 0.02
