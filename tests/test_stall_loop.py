"""A run held back mid-way on a real capped loop device: fio's own bandwidth log shows the stall, the run's row
carries the evidence (measure.rate_log), the report names it, and the run is kept and counted (analysis.outliers).
The stall is made as another tenant would make it: the device's cap in the campaign's own throttled cgroup lowered
to a tenth for 2 s of the second run's 8, then put back."""
from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from flashscale.analysis import evidence
from flashscale.campaigns import campaign
from conftest import our_cgroups, run_beside

CAP = 100_000_000
STALL_S = 2.0


def _hold_back(data: Path, done: threading.Event, said: list) -> None:
    """When the second run's fio is under way (its run before it ended, it let go), its cgroup's write caps at a
    tenth for ``STALL_S``, then as they were."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not done.is_set():
        # fio opens its --output as it starts and writes it as it ends: the first run has ended once its output holds
        # something, and the second is under way while its output (opened when it was started ahead) is still empty.
        # (Waiting for the second's job file without its output caught only the moment before fio opened it: under
        # make test-half-cpu the test found no such moment, "the second run never started".)
        first = [p for p in data.glob("**/raw/single/*/rep0/fio.json") if p.stat().st_size > 0]
        second = list(data.glob("**/raw/single/*/rep1/fio.json"))
        if first and second and second[0].stat().st_size == 0:
            break
        time.sleep(0.05)
    else:
        said.append("the second run never started")
        return
    time.sleep(3.0)  # its ramp (1 s), then 2 s of its steady rate
    caps = [g / "blkio.throttle.write_bps_device" for g in our_cgroups()]
    before = {c: [line.split() for line in c.read_text().splitlines() if line.strip()] for c in caps}
    for c, rules in before.items():
        for majmin, _ in rules:
            c.write_text(f"{majmin} {CAP // 10}")
    said.append(f"held back {sum(len(r) for r in before.values())} device(s)")
    time.sleep(STALL_S)
    for c, rules in before.items():
        for majmin, bps in rules:
            c.write_text(f"{majmin} {bps}")


@pytest.mark.root
def test_a_run_held_back_mid_way_is_flagged_stalled_with_its_evidence_and_kept(tmp_path, fast_backing):
    spec = campaign.CampaignSpec.from_parameters(
        CAMPAIGN="stall", DATA_DIR=str(tmp_path / "data"), BACKING_DIR=str(fast_backing), DEVICES=1,
        DEVICE_SIZE=2**30, CAP_READ_BPS=CAP, CAP_WRITE_BPS=CAP, LAYOUTS=["single"], RW=["write"], BS=[2**20],
        NUMJOBS=[1], IODEPTH=[1], REPETITIONS=2, RUNTIME_S=8, RAMP_S=1, FILE_SIZE=64 * 2**20, PRECONDITION=False)
    result, said = run_beside(spec, _hold_back, tmp_path / "data")
    assert said == ["held back 1 device(s)"], said
    rows = result.table[result.table["phase"] == "measure"].set_index("rep")
    assert rows["rate_seconds"].min() >= 6  # 8 s logged once a second, the last left out
    # the clean run: no second under half its median (its slowest measured 0.99 of it here, 0.878 under make
    # test-half-cpu's half share of the CPUs: a clean run's seconds move with the machine, the rule's half does not)
    assert rows.loc[0, "stall_s"] == pytest.approx(0.0) and rows.loc[0, "rate_low"] > 0.5
    # 2 s at a tenth of the cap: one or two of its seconds under half its median (as the log's seconds fall)
    assert 1 <= rows.loc[1, "stall_s"] <= 3 and rows.loc[1, "rate_low"] < 0.5, rows.loc[1].to_dict()
    assert rows.loc[1, "bw_bytes"] < 0.9 * rows.loc[0, "bw_bytes"]  # kept, at the rate it ran
    (sentence,) = evidence.stall_sentences(result.table)
    assert sentence.startswith("single (1 device(s)) write 1 MiB with 1 job(s), rep 1: stalled ")
    assert sentence in evidence.measurement_sentences(result.table)
