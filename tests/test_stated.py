"""Predictions stated before a layout is built (``flashscale.campaigns.preregistered``): from the baseline rows measured so far, once
per layout (a resumed campaign keeps what it stated), with this machine's limits."""
from __future__ import annotations

import json
import os

import pytest

from flashscale.measure import campaign_folder
from flashscale.campaigns import campaign, preregistered
from flashscale.system import host
from flashscale.errors import ConfigError
from flashscale.analysis.prediction.ceilings import pcie_rate
from flashscale.system.devices import System

POINTS = [{"rw": "read", "bs": 2**20, "numjobs": n, "iodepth": 1} for n in (1, 2)]


def single(bw: float, rep: int, numjobs: int) -> dict:
    return {"campaign": "t", "host": "h", "layout": "single", "devices": 1, "rw": "read", "bs": 2**20,
            "numjobs": numjobs, "iodepth": 1, "rep": rep, "warmup": False, "bw_bytes": bw, "runtime_s": 3.0,
            "point": f"read-nj{numjobs}", "cpu_busy_cores": 0.5}


def test_a_layout_is_predicted_once_from_the_baseline_and_kept_on_resume(tmp_path):
    campaign_folder.append_rows(tmp_path, [single(bw, rep, n) for n in (1, 2) for rep, bw in enumerate((1e8, 1.02e8))])
    state = preregistered.Preregistration(tmp_path, POINTS, lambda name: 4, preregistered.limits(cores=4))
    state("single")  # the baseline predicts nothing of itself
    assert campaign_folder.read_predictions(tmp_path).empty
    state("btrfs-raid0")
    first = campaign_folder.read_predictions(tmp_path)
    assert list(first["numjobs"]) == [1, 2] and (first["devices"] == 4).all()
    # a stripe gives every device numjobs / 4 jobs, held at the first measured point: 4 x 101 MB/s
    assert first["predicted_bw_bytes"].tolist() == pytest.approx([4 * 1.01e8] * 2)
    assert list(first["predicted_limit"]) == ["devices"] * 2
    # half a CPU for 102 MB/s at the cheapest repetition, 4 CPUs: the CPU would carry 816 MB/s; on half a CPU,
    # 102 MB/s, and it binds 2 devices' 202 MB/s
    assert first["cpu_limit_bw_bytes"].tolist() == pytest.approx([8.16e8] * 2, rel=1e-3)
    preregistered.Preregistration(tmp_path, POINTS, lambda name: 4, preregistered.limits(cores=0.5))("jbod")
    jbod = campaign_folder.read_predictions(tmp_path).query("layout == 'jbod'")
    assert jbod["predicted_bw_bytes"].tolist() == pytest.approx([1.01e8, 1.02e8], rel=1e-3)  # 1 job: 1 device
    assert list(jbod["predicted_limit"]) == ["devices", "cpu"]
    first = campaign_folder.read_predictions(tmp_path)
    campaign_folder.append_rows(tmp_path, [single(5e8, 2, 1)])  # measured later: not a reason to predict again
    state("btrfs-raid0")
    state("jbod")
    assert campaign_folder.read_predictions(tmp_path).equals(first)


def test_no_baseline_no_prediction(tmp_path):
    preregistered.Preregistration(tmp_path, POINTS, lambda name: 2, preregistered.limits())("jbod")
    assert campaign_folder.read_predictions(tmp_path).empty


def test_the_pcie_term_is_the_slowest_link_sysfs_names(tmp_path):
    for name, speed, width in (("nvme0n1", "8.0 GT/s PCIe", "4"), ("nvme1n1", "16.0 GT/s PCIe", "4")):
        function = tmp_path / "sys" / "devices" / "pci0000:00" / f"0000:00:0{name[4]}.0"
        (function / "nvme").mkdir(parents=True)
        (function / "current_link_speed").write_text(speed + "\n")
        (function / "current_link_width").write_text(width + "\n")
        (tmp_path / "sys" / "block" / name).mkdir(parents=True)
        os.symlink(function / "nvme", tmp_path / "sys" / "block" / name / "device")
    (tmp_path / "sys" / "block" / "loop3").mkdir(parents=True)
    system = System(sys=tmp_path / "sys", proc=tmp_path)
    assert system.pcie_link("nvme1n1") == (16.0, 4)
    assert preregistered.pcie_bps(["/dev/nvme0n1", "/dev/nvme1n1"], system) == pcie_rate(3, 4)
    assert preregistered.pcie_bps(["/dev/nvme0n1", "/dev/loop3"], system) is None  # a loop device has no link
    assert preregistered.limits(["/dev/nvme0n1"], system).pcie_link() == pcie_rate(3, 4)
    assert preregistered.limits().cores == len(os.sched_getaffinity(0))


def _folder(path, rows, fs="xfs", chunk=2**17):
    path.mkdir()
    campaign_folder.append_rows(path, rows)
    (path / "campaign.json").write_text(json.dumps({"spec": {"options": {"fs": fs, "chunk_bytes": chunk}}}))
    return path


def layout_row(layout: str, devices: int, bw: float, rep: int, numjobs: int) -> dict:
    return {**single(bw, rep, numjobs), "layout": layout, "devices": devices, "cpu_busy_cores": 0.5}


def test_a_layer_s_cost_is_stated_from_the_layout_on_fewer_devices_before_the_larger_is_built(tmp_path):
    """A campaign on 2 devices measured md-raid0 at 150 MB/s where its single device read 100 MB/s a job: md's
    own time per request is what the devices do not explain. The 4-device campaign states md-raid0 with that cost
    (the calibration named in predictions.csv) before it builds it, and never from itself."""
    two = _folder(tmp_path / "two", [single(bw, rep, n) for n in (1, 2) for rep, bw in enumerate((1e8, 1e8))]
                  + [layout_row("md-raid0", 2, 1.5e8, rep, n) for n in (1, 2) for rep in (0, 1)])
    four = _folder(tmp_path / "four", [single(bw, rep, n) for n in (1, 2) for rep, bw in enumerate((1e8, 1e8))])
    state = preregistered.Preregistration(four, POINTS, lambda name: 4, preregistered.limits(cores=4, probe=False), chunk_bytes=2**17,
                           calibrations=[two])
    state("md-raid0")
    got = campaign_folder.read_predictions(four).set_index("numjobs")
    assert set(got["calibration"]) == {"md-raid0 on 2 devices"}
    # 1 MiB over 128 KiB chunks reaches every member: 2 x 100 MB/s raw, 150 measured: 1/150 - 1/200 of a second a
    # MB is md's; on 4 devices 1 / (1/400 + 1/150 - 1/200) MB/s
    layer = 1 / 1.5e8 - 1 / 2e8
    assert got["layer_s_per_io"].tolist() == pytest.approx([layer * 2**20, 2 * layer * 2**20])
    assert got["predicted_bw_bytes"].tolist() == pytest.approx([1 / (1 / 4e8 + layer)] * 2)
    assert list(got["predicted_limit"]) == ["layer"] * 2
    preregistered.Preregistration(two, POINTS, lambda name: 2, preregistered.limits(cores=4, probe=False), calibrations=[two])("md-raid0")
    assert set(campaign_folder.read_predictions(two)["calibration"].isna()) == {True}  # its own 2 devices never do


def test_btrfs_raid0_on_two_devices_is_calibrated_by_btrfs_on_one(tmp_path):
    """For a two-device layout, its file system on one device: btrfs single read 80 MB/s where xfs read 100."""
    btrfs = _folder(tmp_path / "btrfs", [single(8e7, rep, n) for n in (1, 2) for rep in (0, 1)], fs="btrfs")
    here = _folder(tmp_path / "here", [single(1e8, rep, n) for n in (1, 2) for rep in (0, 1)])
    preregistered.Preregistration(here, POINTS, lambda name: 2, preregistered.limits(cores=4, probe=False), calibrations=[btrfs])(
        "btrfs-raid0")
    got = campaign_folder.read_predictions(here)
    assert set(got["calibration"]) == {"btrfs on one device"}
    assert (got["predicted_bw_bytes"] < 2e8).all()
    preregistered.Preregistration(here, POINTS, lambda name: 2, preregistered.limits(cores=4, probe=False), calibrations=[btrfs])("jbod")
    assert set(campaign_folder.read_predictions(here).query("layout == 'jbod'")["calibration"].isna()) == {True}  # xfs


def test_the_memory_is_measured_once_and_stated_beside_the_cpus():
    measured = preregistered.limits()
    assert measured.memory_bw_bytes > 1e8 and measured.cores == len(os.sched_getaffinity(0))
    assert preregistered.limits(ceilings={"memory_bw_bytes": 5e9}).memory_bw_bytes == pytest.approx(5e9)  # the engineer's word wins
    assert "memory measured: a copy at" in preregistered.limits_note(measured=measured)


def test_the_devices_queue_depth_is_the_fewest_tags_sysfs_names(tmp_path):
    for name, depth in (("nvme0n1", "1023"), ("nullb0", "8")):
        (tmp_path / "sys" / "block" / name / "queue").mkdir(parents=True)
        (tmp_path / "sys" / "block" / name / "queue" / "nr_requests").write_text(depth + "\n")
    system = System(sys=tmp_path / "sys", proc=tmp_path)
    assert host.queue_depth(["/dev/nvme0n1", "/dev/nullb0"], system) == 8
    assert host.queue_depth(["/dev/nvme0n1", "/dev/sdz"], system) is None  # sysfs names none for sdz
    assert host.queue_depth([], system) is None


def test_calibration_folders_are_a_campaign_parameter_named_under_data_dir_or_by_path(tmp_path):
    """CALIBRATION names the campaign folders whose layouts on fewer devices calibrate a layer's cost: a name under
    DATA_DIR or a path, checked when the spec is made, and handed to what states each prediction."""
    data = tmp_path / "data"
    _folder(data.parent / "elsewhere", [single(1e8, 0, 1)])
    data.mkdir()
    two = _folder(data / "two", [single(1e8, rep, 1) for rep in (0, 1)])
    spec = campaign.CampaignSpec.from_parameters(CAMPAIGN="four", DATA_DIR=str(data),
                                                 CALIBRATION=["two", str(tmp_path / "elsewhere")])
    assert spec.calibrations == ("two", str(tmp_path / "elsewhere"))
    state = campaign.preregistration(spec, campaign.choose(spec), tmp_path)
    assert list(state.calibrations) == [two, tmp_path / "elsewhere"]
    with pytest.raises(ConfigError, match="CALIBRATION 'nowhere' is not a campaign folder"):
        campaign.CampaignSpec.from_parameters(CAMPAIGN="four", DATA_DIR=str(data), CALIBRATION=["nowhere"])
