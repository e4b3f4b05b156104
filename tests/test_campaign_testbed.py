"""Campaigns on real devices named in a test bed file (loop devices the test made stand in for NVMe), the layout
``mounted`` inside an existing directory, and layouts the kernel cannot build refused before anything is made."""
from __future__ import annotations

from pathlib import Path

import pytest

import papermill

from flashscale.campaigns import campaign
from flashscale.notebooks import execute
from flashscale.errors import ConfigError, RefusedError, UnsupportedError

from conftest import leftover_mounts, loop_devices_backed_under, sha256

ROOT = Path(__file__).resolve().parents[1]
TINY = dict(RW=["write"], BS=[1048576], NUMJOBS=[1], IODEPTH=[1], REPETITIONS=1, RUNTIME_S=1, RAMP_S=0, FILE_SIZE=16 * 2**20,
            WARMUP=False)


def spec(tmp_path: Path, **overrides) -> campaign.CampaignSpec:
    return campaign.CampaignSpec.from_parameters(CAMPAIGN="bed", DATA_DIR=str(tmp_path / "data"), **TINY, **overrides)


@pytest.mark.root
def test_a_test_bed_campaign_is_a_dry_run_by_default_and_touches_nothing(tmp_path, bed):
    before = [sha256(d.path) for d in bed["devices"]]
    with pytest.raises(campaign.DryRun) as stopped:
        campaign.run(spec(tmp_path, TESTBED=bed["file"], LAYOUTS=["single", "jbod", "btrfs-raid0"]), progress=False)
    text = str(stopped.value)
    assert "nothing was touched" in text
    for device in bed["devices"]:
        assert f"blkdiscard {device.path}" in text and f"# {device.path} is {device.id}" in text
    assert "mkfs.xfs" in text and "mkfs.btrfs" in text and "mount -t xfs -o noatime,nodiratime" in text
    assert [sha256(d.path) for d in bed["devices"]] == before
    assert not (tmp_path / "data").exists()


@pytest.mark.root
def test_a_campaign_on_the_first_devices_of_a_test_bed_needs_only_their_confirmation(tmp_path, bed):
    first, second = bed["devices"]
    with pytest.raises(campaign.DryRun) as stopped:  # the whole bed confirmed, one device used: not a mismatch
        campaign.run(spec(tmp_path, TESTBED=bed["file"], CONFIRM=bed["ids"], USE_DEVICES=1, LAYOUTS=["single"]),
                     progress=False)
    assert f"# {first.path} is {first.id}" in str(stopped.value) and second.id not in str(stopped.value)
    with pytest.raises(ConfigError, match="USE_DEVICES=3 but the test bed .* names only 2 devices"):
        campaign.run(spec(tmp_path, TESTBED=bed["file"], USE_DEVICES=3, LAYOUTS=["single"]), progress=False)


@pytest.mark.root
def test_a_confirmation_that_does_not_match_refuses_every_device_before_any_erase(tmp_path, bed):
    before = [sha256(d.path) for d in bed["devices"]]
    with pytest.raises(RefusedError, match="not confirmed: " + bed["ids"][1]):
        campaign.run(spec(tmp_path, TESTBED=bed["file"], DRY_RUN=False, CONFIRM=bed["ids"][:1],
                          LAYOUTS=["single", "jbod"]), progress=False)
    with pytest.raises(ConfigError, match="CONFIRM is empty"):
        campaign.run(spec(tmp_path, TESTBED=bed["file"], DRY_RUN=False, LAYOUTS=["single"]), progress=False)
    with pytest.raises(ConfigError, match="123 is a int"):
        spec(tmp_path, TESTBED=bed["file"], DRY_RUN=False, CONFIRM=123)
    assert [sha256(d.path) for d in bed["devices"]] == before
    assert not (tmp_path / "data").exists()


@pytest.mark.root
def test_a_confirmed_test_bed_campaign_measures_through_the_guard(tmp_path, bed):
    result = campaign.run(spec(tmp_path, TESTBED=bed["file"], DRY_RUN=False, CONFIRM=",".join(bed["ids"]),
                               LAYOUTS=["single", "jbod"], FS="ext4"), progress=False)
    table = result.table[result.table["phase"] == "measure"]  # each layout's precondition is not a measurement
    assert result.backend == "testbed" and "guard" in result.notes[0]
    assert set(table["layout"]) == {"single", "jbod"} and (table["bw_bytes"] > 0).all()
    assert table["cap_bps"].isna().all()
    assert table.loc[table["layout"] == "jbod", "devices"].tolist() == [2]
    assert leftover_mounts(result.directory) == []
    # the devices are the user's: still attached after the campaign (only erased), nothing of ours left on them
    assert sorted(line.split()[0] for line in loop_devices_backed_under(tmp_path)) == \
        sorted(d.path for d in bed["devices"])


@pytest.mark.root
def test_a_layout_the_kernel_cannot_build_stops_the_campaign_before_anything_is_made(tmp_path):
    if Path("/proc/mdstat").exists():
        pytest.skip("this kernel has md: the refusal cannot be shown here")
    with pytest.raises(UnsupportedError, match=r"md-raid0: .*/proc/mdstat.*Nothing was touched"):
        campaign.run(spec(tmp_path, LAYOUTS=["single", "md-raid0"], BACKING_DIR=str(tmp_path)), progress=False)
    assert not (tmp_path / "data").exists() and loop_devices_backed_under(tmp_path) == []


def test_the_mounted_layout_measures_inside_a_directory_and_removes_only_its_own(tmp_path):
    existing = tmp_path / "gpfs"
    existing.mkdir()
    (existing / "someone-else.dat").write_bytes(b"x" * 4096)
    with pytest.raises(ConfigError, match="needs MOUNT_DIR"):
        spec(tmp_path, LAYOUTS=["mounted"])
    with pytest.raises(ConfigError, match="'/no/such/dir' is not an existing directory"):
        spec(tmp_path, LAYOUTS=["mounted"], MOUNT_DIR="/no/such/dir")
    result = campaign.run(spec(tmp_path, EMULATION="directory", LAYOUTS=["single", "mounted"], MOUNT_DIR=str(existing),
                               MOUNT_DEVICES=3), progress=False)
    measured = result.table[result.table["phase"] == "measure"]
    mounted = measured[measured["layout"] == "mounted"]
    assert len(mounted) == 1 and mounted["devices"].tolist() == [3] and (mounted["bw_bytes"] > 0).all()
    assert sorted(p.name for p in existing.iterdir()) == ["someone-else.dat"]
    assert (existing / "someone-else.dat").read_bytes() == b"x" * 4096


@pytest.mark.root
def test_a_notebook_on_a_test_bed_stops_at_the_plan_by_default(tmp_path, bed):
    before = [sha256(d.path) for d in bed["devices"]]
    with pytest.raises(papermill.PapermillExecutionError) as stopped:
        execute.execute_notebook(ROOT / "notebooks" / "01_baseline.ipynb", tmp_path / "out.ipynb",
                                 {"TESTBED": bed["file"], "CAMPAIGN": "bed", "DATA_DIR": str(tmp_path / "data")}, ROOT,
                                 progress_bar=False)
    assert stopped.value.ename == "DryRun" and "nothing was touched" in stopped.value.evalue
    assert f"blkdiscard {bed['devices'][0].path}" in stopped.value.evalue
    assert [sha256(d.path) for d in bed["devices"]] == before
    assert not list((tmp_path / "data").glob("bed/01_baseline/rows.jsonl"))
