"""Preconditioning, the known truth and runs too short to measure.

On the emulated array a read of files a time-based write point only partly wrote is caught by the truth check
(xfs answers unwritten extents with zeros without reading the device); preconditioned, the same read meets the cap.
"""
from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pandas as pd
import pytest

from flashscale.measure import campaign_folder
from flashscale.campaigns import campaign
from flashscale.measure import fio, precondition, results
from flashscale.measure.sweep import Sweep
from flashscale.system.commands import Runner

from conftest import leftover_mounts, loop_devices_backed_under
from flashscale.measure import truth

MB = 1_000_000
MIB = 2**20


def row(rw="read", devices=2, runtime_s=3.0, read=0.0, write=0.0) -> dict:
    return {"rw": rw, "devices": devices, "runtime_s": runtime_s, "read_bw_bytes": read, "write_bw_bytes": write}


CAPS = {"read": 100 * MB, "write": 50 * MB}


def test_the_truth_is_devices_times_the_cap_of_the_direction_read_or_written():
    assert truth.evidence(row("read", read=199 * MB), CAPS)["truth_bw_bytes"] == 200 * MB
    assert truth.evidence(row("randwrite", write=99 * MB), CAPS)["truth_bw_bytes"] == 100 * MB
    assert truth.evidence(row("randrw", read=1, write=1), CAPS)["truth_bw_bytes"] == 300 * MB


def test_a_row_above_its_truth_by_more_than_the_tolerance_is_flagged():
    # 3 s runs: the throttle's first 100 ms slice allows 0.1 / 3 = 3.3% over; 2% is the floor for long runs
    assert truth.tolerance(3.0) == pytest.approx(0.1 / 3) and truth.tolerance(60.0) == pytest.approx(0.02)
    assert not truth.evidence(row(read=206 * MB), CAPS)["above_truth"]
    assert truth.evidence(row(read=207 * MB), CAPS)["above_truth"]
    assert not truth.evidence(row(read=203 * MB, runtime_s=60.0), CAPS)["above_truth"]
    assert truth.evidence(row(read=205 * MB, runtime_s=60.0), CAPS)["above_truth"]


def test_a_mixed_rw_is_held_to_each_direction_s_own_cap():
    # 250 MB/s in all is under the 300 MB/s of both caps, but the write side is 50% over its own 100 MB/s
    flagged = truth.evidence(row("rw", read=100 * MB, write=150 * MB), CAPS)
    assert flagged["above_truth"] and flagged["truth_bw_bytes"] == 300 * MB
    assert not truth.evidence(row("rw", read=200 * MB, write=100 * MB), CAPS)["above_truth"]


def test_uncapped_and_metadata_runs_have_no_truth():
    for checked in (truth.evidence(row(read=10**12), {}), truth.evidence(row("filecreate", write=10**12), CAPS)):
        assert math.isnan(checked["truth_bw_bytes"]) and not checked["above_truth"]


def test_a_run_under_a_second_is_too_short_to_measure():
    assert truth.evidence(row("filecreate", runtime_s=0.1), CAPS)["too_short"]
    assert truth.evidence(row(runtime_s=0.0), CAPS)["too_short"]
    assert not truth.evidence(row(runtime_s=truth.MIN_RUNTIME_S, read=MB), CAPS)["too_short"]


def test_rows_written_before_the_checks_existed_read_with_their_defaults(tmp_path):
    old = {"campaign": "c", "rw": "read", "devices": 1, "runtime_s": 0.2, "bw_bytes": 1.0, "warmup": False}
    new = {**old, "runtime_s": 3.0, "phase": "precondition", "truth_bw_bytes": 2.0, "above_truth": True,
           "too_short": False}
    campaign_folder.append_rows(tmp_path, [old, new])
    table = results.rebuild_table(tmp_path)
    assert list(table["phase"]) == ["measure", "precondition"] and list(table["above_truth"]) == [False, True]
    assert table["truth_bw_bytes"].isna().tolist() == [True, False]
    assert list(table["too_short"]) == [True, False]  # derived from runtime_s: the rule does not change with age
    assert table["above_truth"].dtype == bool and table["phase"].dtype == "string"
    pd.DataFrame([old]).to_parquet(tmp_path / "old.parquet")
    loaded = results.load(tmp_path / "old.parquet")
    assert loaded["phase"].tolist() == ["measure"] and loaded["too_short"].tolist() == [True]


def test_the_precondition_writes_each_file_of_the_largest_numjobs_once_in_full():
    sweep = Sweep(rw=["write", "randread"], numjobs=[1, 2, 5], size=24 * MIB, bs=[4096])
    job = precondition.job(sweep, ("/m/0", "/m/1"))
    text = fio.render(job)
    assert "rw=write\n" in text and "direct=1\n" in text and "end_fsync=1\n" in text and "size=25165824\n" in text
    assert "time_based=1" not in text and "runtime=" not in text and "ramp_time=" not in text
    assert "bs=1048576\n" in text and "iodepth=1\n" in text
    # the read points' job sections, so fio's file names <section>.<job>.0: 3 files on /m/0, 2 on /m/1
    assert "[flashscale-t0]\nnumjobs=3\ndirectory=/m/0\n" in text
    assert "[flashscale-t1]\nnumjobs=2\ndirectory=/m/1\n" in text
    assert precondition.point(job) == "precondition-write-bs1048576-nj5-qd1"


def test_the_precondition_of_a_shared_file_and_of_block_devices():
    shared = fio.render(precondition.job(Sweep(numjobs=[2, 4], shared_file=True, size=8 * MIB), ("/m/0", "/m/1")))
    assert "numjobs=4\ndirectory=/m/0\nfilename=flashscale-shared\noffset_increment=8388608\n" in shared
    assert "size=8388608\n" in shared and "/m/1" not in shared  # 4 regions of 8 MiB: the whole shared file
    devices = fio.render(precondition.job(Sweep(numjobs=[8], size=3 * MIB), ("/dev/loop3", "/dev/loop4")))
    assert "numjobs=1\nfilename=/dev/loop3\n" in devices and "numjobs=1\nfilename=/dev/loop4\n" in devices
    served = fio.render(precondition.job(Sweep(numjobs=[8], size=3 * MIB), ("nbd://10.213.1.1:10809/",)))
    assert "numjobs=1\nioengine=nbd\nuri=nbd://10.213.1.1:10809/\n" in served  # a device over the network too
    assert "bs=1048576\n" in devices
    assert "bs=4096\n" in fio.render(precondition.job(Sweep(size=MIB + 4096), ("/m/0",)))  # a whole number of blocks


def test_a_metadata_sweep_needs_no_precondition():
    assert precondition.job(Sweep(rw=["filecreate"], bs=[4096], nrfiles=[10]), ("/m/0",)) is None


def written_to_the_end(path: Path) -> bool:
    """No hole and no unwritten extent in ``path``: ext4 and xfs report unwritten extents as holes."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.lseek(fd, 0, os.SEEK_HOLE) == os.fstat(fd).st_size
    finally:
        os.close(fd)


def test_real_fio_writes_the_very_files_the_read_points_open(tmp_path):
    targets = (str(tmp_path / "a"), str(tmp_path / "b"))
    for target in targets:
        os.mkdir(target)
    sweep = Sweep(rw=["read"], numjobs=[1, 3], size=4 * MIB, runtime_s=1, ramp_s=0)
    fio.run(precondition.job(sweep, targets), tmp_path / "pre", Runner())
    files = sorted(p.relative_to(tmp_path).as_posix() for t in targets for p in Path(t).iterdir())
    assert files == ["a/flashscale-t0.0.0", "a/flashscale-t0.1.0", "b/flashscale-t1.0.0"]
    assert all(written_to_the_end(tmp_path / f) and (tmp_path / f).stat().st_size == 4 * MIB for f in files)
    for point in sweep.points():  # each read point opens only these files: fio lays out none of its own
        fio.run(sweep.job(point, targets), tmp_path / f"read-{point['numjobs']}", Runner())
    assert sorted(p.relative_to(tmp_path).as_posix() for t in targets for p in Path(t).iterdir()) == files


CAP_READ, CAP_WRITE = 100 * MB, 20 * MB
# 4 jobs writing for 2 s at 20 MB/s leave 10 MB written of each 64 MiB file; reading for 2 s at 100 MB/s passes
# those 10 MB and goes on into the unwritten rest
SMALL = dict(CAMPAIGN="pre", DEVICES=1, DEVICE_SIZE=2**30, LAYOUTS=["single"], FS="xfs", RW=["write", "read"],
             NUMJOBS=[4], BS=[MIB], REPETITIONS=1, RUNTIME_S=2, RAMP_S=0, FILE_SIZE=64 * MIB, CAP_READ_BPS=CAP_READ,
             CAP_WRITE_BPS=CAP_WRITE)


def measure(tmp_path: Path, **overrides) -> campaign.CampaignResult:
    spec = campaign.CampaignSpec.from_parameters(**SMALL, DATA_DIR=str(tmp_path / "data"), BACKING_DIR=str(tmp_path),
                                                 **overrides)
    result = campaign.run(spec, progress=False)
    assert loop_devices_backed_under(tmp_path) == [] and leftover_mounts(result.directory) == []
    return result


@pytest.mark.root
def test_without_precondition_a_read_of_partly_written_files_is_caught_by_the_truth(tmp_path):
    table = measure(tmp_path, PRECONDITION=False).table.set_index("rw")
    assert set(table["phase"]) == {"measure"}
    assert table.loc["read", "truth_bw_bytes"] == CAP_READ
    assert table.loc["read", "read_bw_bytes"] > CAP_READ * (1 + truth.tolerance(2.0))
    assert table.loc["read", "above_truth"] and not table.loc["write", "above_truth"]


@pytest.mark.root
def test_preconditioned_the_read_meets_the_cap(tmp_path):
    result = measure(tmp_path)
    table = result.table
    first = table[table["phase"] == "precondition"]
    assert len(first) == 1 and first.index[0] == 0 and first["raw_dir"].tolist() == ["raw/single/precondition"]
    assert first["io_bytes"].tolist() == [4 * 64 * MIB] and first["runtime_s"].iloc[0] > 0
    assert "end_fsync=1" in (result.directory / "raw/single/precondition/job.fio").read_text()
    env = json.loads((result.directory / "raw/single/precondition/env.json").read_text())
    assert env["cgroup"] == [] and math.isnan(first["truth_bw_bytes"].iloc[0])  # it prepares: never capped
    measured = table[table["phase"] == "measure"].set_index("rw")
    assert list(measured.index) == ["write", "read"] and not measured["above_truth"].any()
    assert measured.loc["read", "read_bw_bytes"] == pytest.approx(CAP_READ, rel=truth.tolerance(2.0))
    assert measured.loc["write", "write_bw_bytes"] == pytest.approx(CAP_WRITE, rel=truth.tolerance(2.0))
