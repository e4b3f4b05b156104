"""The many-files transfer on the emulated array: on every layout its files/s and bytes/s land in the table, and
neither its write phase (each file fsynced) nor its copy exceeds what the capped devices can move; its files are
gone afterwards."""
from __future__ import annotations

import pytest

from flashscale import campaign
from flashscale.analysis import applications
from flashscale.measure.workloads import common
from flashscale.measure.workloads.transfer import Transfer

CAP = 200_000_000


@pytest.mark.root
def test_neither_phase_can_exceed_the_capped_devices_on_any_layout(tmp_path):
    spec = campaign.CampaignSpec.from_parameters(
        CAMPAIGN="transfer", DATA_DIR=str(tmp_path / "data"), BACKING_DIR=str(tmp_path), DEVICES=2,
        DEVICE_SIZE=2**30, LAYOUTS=["single", "jbod", "btrfs-raid0"], RW=["write", "read"], BS=[2**20],
        NUMJOBS=[2], IODEPTH=[1], REPETITIONS=1, RUNTIME_S=2, RAMP_S=0, FILE_SIZE=32 * 2**20, CAP_READ_BPS=CAP,
        CAP_WRITE_BPS=CAP)
    result = campaign.run(spec, progress=False, workloads=[Transfer(files=48, file_mib=8, streams=(1, 4))])
    rows = result.table[result.table["workload"] == "transfer"]
    assert sorted(set(zip(rows["layout"], rows["numjobs"]))) == sorted(
        (layout, n) for layout in ("single", "jbod", "btrfs-raid0") for n in (1, 4))
    copies = rows[rows["metric"] == "copy_bw"]
    for _, rate in rows[rows["unit"] == "bytes/s"].iterrows():  # the write phase too: timed until its fsyncs
        assert rate["truth_bw_bytes"] == rate["devices"] * CAP
        assert 0 < rate["value"] <= rate["truth_bw_bytes"] * (1 + common.tolerance(rate["runtime_s"])), rate["layout"]
        assert not rate["above_truth"]
    assert set(rows[rows["unit"] == "bytes/s"]["metric"]) == {"write_bw", "copy_bw"}
    commands = (result.directory / rows["raw_dir"].iloc[0] / "commands.txt").read_text().splitlines()
    assert len(commands) == 2 and all("conv=fsync" in line.split() for line in commands)
    files = rows[rows["metric"] == "copy_files"]
    assert list(files["value"] * 8 * 2**20) == pytest.approx(list(copies["value"]), rel=1e-9)
    taxes = applications.tax(result.table)
    jbod = taxes[(taxes["layout"] == "jbod") & (taxes["metric"] == "copy_bw")]
    assert len(jbod) == 2 and (jbod["fio_bytes"] > 0).all() and jbod["tax"].notna().all()
    leftovers = [p for p in (result.directory / "raw").rglob("file*") if p.is_file()]
    assert leftovers == []  # the files were written on the layout, never in the raw folder
    # and each transfer was in the campaign's progress, counted in its total
    lines = (result.directory / "progress.log").read_text().splitlines()
    total = len(result.table[result.table["workload"] != "transfer"]) + 6  # the fio runs, and 3 layouts x 2 streams
    assert f"{total} run(s) on 3 layout(s)" in lines[0]
    done = [line for line in lines if " transfer s" in line and ": done (" in line]
    assert len(done) == 6 and done[-1].startswith(f"[{total}/{total}] btrfs-raid0 transfer s4 rep0: done")
