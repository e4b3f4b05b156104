"""A real tax is found on real devices: one of four emulated devices capped 10% lower (a test helper lowers its
cap as the array is built) makes a stripe as slow as its slowest member, 4 x 180 = 720 MB/s, while jbod's jobs,
one per device, still add up to 3 x 200 + 180 = 780 MB/s. btrfs-raid0's 7.7% tax against jbod is beyond the 2%
margin and must be called a tax; with every device at the same cap the same campaign finds no tax (the quickstart's
test)."""
from __future__ import annotations

import pytest

from flashscale import campaign
from flashscale.analysis import stats
from flashscale.system.throttle import Throttle

pytestmark = pytest.mark.root
CAP = 200_000_000
SLOW = 0.9  # the last device's cap, as a fraction of the others'


@pytest.fixture
def one_slow_device(monkeypatch):
    """Every array built while this is in use caps its 4th device at SLOW x the cap."""
    real = Throttle.cap
    capped: list[str] = []

    def cap(self, majmin, read_bps, write_bps):
        capped.append(majmin)
        if len(capped) % 4 == 0:
            read_bps, write_bps = int(read_bps * SLOW), int(write_bps * SLOW)
        return real(self, majmin, read_bps, write_bps)

    monkeypatch.setattr(Throttle, "cap", cap)
    return capped


def test_a_stripe_held_back_by_one_slow_device_pays_a_tax_beyond_the_margin(tmp_path, one_slow_device):
    spec = campaign.CampaignSpec.from_parameters(
        CAMPAIGN="slow", DATA_DIR=str(tmp_path / "data"), DEVICES=4, DEVICE_SIZE=2**30, CAP_READ_BPS=CAP,
        CAP_WRITE_BPS=CAP, LAYOUTS=["jbod", "btrfs-raid0"], RW=["read"], BS=[1048576], NUMJOBS=[4], IODEPTH=[1],
        REPETITIONS=3, RUNTIME_S=3, RAMP_S=1, FILE_SIZE=64 * 2**20)
    result = campaign.run(spec, progress=False)
    assert len(one_slow_device) == 4  # one array for both layouts: its 4th device is the slow one
    summary = stats.summary_intervals(result.table, reference="jbod", baseline_bs=None, margin=0.02)
    raid0 = summary.set_index("layout").loc["btrfs-raid0"]
    jbod = summary.set_index("layout").loc["jbod"]
    assert jbod["best_bw_bytes"] == pytest.approx((3 + SLOW) * CAP, rel=0.04)
    assert raid0["best_bw_bytes"] == pytest.approx(4 * SLOW * CAP, rel=0.04)
    assert raid0["tax"] == pytest.approx(1 - 4 * SLOW / (3 + SLOW), abs=0.02)  # 7.7%
    assert raid0["tax_verdict"] == "tax" and raid0["tax_lo"] > 0.02
