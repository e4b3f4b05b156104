"""bonnie++ on the emulated array: its block write at one process on one capped device is the cap; on every
layout its numbers land in the results table (09_applications's campaign, run once for the workloads' tests by
conftest's ``applications``), and its scratch directories are gone afterwards."""
from __future__ import annotations

import math

import pytest

from flashscale.campaigns import campaign
from flashscale.measure import monitoring
from flashscale.measure.workloads.bonnie import CACHED, STAT_CACHED, TOO_FAST, Bonnie

CAP = 200_000_000


def spec(tmp_path, backing, layouts, device_size):
    return campaign.CampaignSpec.from_parameters(
        CAMPAIGN="bonnie", DATA_DIR=str(tmp_path / "data"), BACKING_DIR=str(backing), DEVICES=2,
        DEVICE_SIZE=device_size, LAYOUTS=layouts, RW=["write"], BS=[2**20], NUMJOBS=[1], IODEPTH=[1],
        REPETITIONS=1, RUNTIME_S=1, RAMP_S=0, FILE_SIZE=16 * 2**20, PRECONDITION=False, CAP_READ_BPS=CAP,
        CAP_WRITE_BPS=CAP)


def rows(table, metric=None):
    apps = table[table["workload"] == "bonnie++"]
    return apps if metric is None else apps[apps["metric"] == metric]


@pytest.mark.root
@pytest.mark.long
def test_block_write_of_one_process_on_one_capped_device_is_the_cap_and_its_files_are_timed(
        tmp_path, fast_backing):
    # 1 GiB at 200 MB/s: over five seconds, long enough for bonnie++ to time (it prints +++++ under that)
    result = campaign.run(spec(tmp_path, fast_backing, ["single"], 2 * 2**30), progress=False,
                          workloads=[Bonnie(processes=(1,), file_mib=1024)])
    write = rows(result.table, "block_write").iloc[0]
    assert write["value"] == pytest.approx(CAP, rel=0.10) and write["unit"] == "bytes/s"
    assert write["bw_bytes"] == write["value"] and write["numjobs"] == 1 and write["phase"] == "workload"
    for _, row in rows(result.table).iterrows():  # a missing value always says why; a number never does
        assert math.isnan(row["value"]) == (str(row["missing_reason"]) in (TOO_FAST, CACHED, STAT_CACHED))
    # every rate of bytes carries its truth, and on one capped device none is above it
    held = rows(result.table)[rows(result.table)["unit"] == "bytes/s"]
    assert set(held["metric"]) == {"block_write", "block_rewrite", "block_read"}
    assert (held["truth_bw_bytes"] == CAP).all() and not held["above_truth"].any()
    assert write["runtime_s"] == pytest.approx(2**30 / write["value"])  # the time of its own test, not the run's
    # the default number of files (262,144) lets bonnie++ time its creates and deletes: numbers, not +++++
    for metric in ("seq_create", "seq_delete", "random_create", "random_delete"):
        timed = rows(result.table, metric).iloc[0]
        assert timed["value"] > 0 and timed["runtime_s"] >= 0.5, metric
    raw = result.directory / write["raw_dir"]
    assert "bonnie++ -d" in (raw / "commands.txt").read_text() and (raw / "bonnie0.log").is_file()
    series = monitoring.load(result.directory)
    assert (series["workload"] == "bonnie++").any()


@pytest.mark.root
@pytest.mark.notebook
@pytest.mark.long
def test_bonnie_runs_on_every_layout_with_processes_as_an_axis(applications):
    """09_applications's campaign (conftest.APPLICATIONS: 1 and 2 processes of 64 MiB, 1,024 files)."""
    result, _, _ = applications
    writes = rows(result.table, "block_write")
    assert sorted(zip(writes["layout"], writes["numjobs"])) == sorted(
        (layout, n) for layout in ("single", "jbod", "btrfs-raid0") for n in (1, 2))
    assert (writes["value"].isna() | (writes["value"] > 0)).all()
    held = rows(result.table)[rows(result.table)["unit"] == "bytes/s"]
    assert (held["truth_bw_bytes"] == held["devices"] * CAP).all()
    assert set(rows(result.table)["metric"]) >= {"block_write", "block_rewrite", "block_read", "seeks",
                                                 "seq_create", "random_delete"}
