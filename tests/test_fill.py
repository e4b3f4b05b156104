"""The workload-independent precondition of a test bed: each device written in full ``passes`` times after its
erase, through the guard, before the layout is built; printed in the dry run."""
from __future__ import annotations


import pytest

from flashscale.campaigns import campaign
from flashscale.arrays import fill, layouts
from flashscale.errors import ConfigError
from flashscale.system.commands import Runner
from flashscale.system.devices import Device, System
from flashscale.system.teardown import Teardown

from test_guard_loop import Loops

MiB = 2**20
DEVICES = [Device("/dev/nvme0n1", "nvme:A"), Device("/dev/nvme1n1", "nvme:B")]


def test_each_device_is_written_whole_passes_times_one_step_each():
    steps = fill.steps(DEVICES, 3)
    assert [s.writes for s in steps] == [("/dev/nvme0n1",), ("/dev/nvme1n1",)]
    for step, device in zip(steps, DEVICES):
        assert step.argv[0] == "fio" and f"--filename={device.path}" in step.argv
        assert {"--rw=write", "--size=100%", "--loops=3", "--direct=1"} <= set(step.argv)
    assert fill.steps(DEVICES, 0) == []


@pytest.mark.parametrize("passes", [-1, 1.5, True, "2"])
def test_bad_passes_are_named(passes):
    with pytest.raises(ConfigError, match=f"PRECONDITION_PASSES={passes!r}"):
        campaign.CampaignSpec.from_parameters(PRECONDITION_PASSES=passes)


def test_the_dry_run_prints_the_fill_between_the_erase_and_the_build():
    lines = layouts.dry_run("jbod", DEVICES, fill_passes=2).splitlines()
    first_fill = next(i for i, line in enumerate(lines) if line.startswith("fio "))
    assert lines[:first_fill] == ["blkdiscard /dev/nvme0n1", "blkdiscard /dev/nvme1n1"]
    assert [line.split()[2] for line in lines[first_fill:first_fill + 2]] == [
        "--filename=/dev/nvme0n1", "--filename=/dev/nvme1n1"]
    assert lines[first_fill + 2].startswith("mkfs.xfs")
    assert not any(line.startswith("fio ") for line in layouts.dry_run("jbod", DEVICES).splitlines())


def zero_blocks(path: str, size: int) -> int:
    with open(path, "rb") as fh:
        return sum(fh.read(MiB).count(0) == MiB for _ in range(size // MiB))


@pytest.mark.root
def test_after_the_erase_every_byte_of_the_device_is_written(tmp_path):
    loops = Loops(tmp_path)
    size = 512 * MiB  # xfs needs more than 300 MB
    try:
        device = loops.make(size)
        teardown = Teardown(tmp_path / "manifest.json", Runner(), System())
        try:
            layout = layouts.build("single", [device], Runner(), teardown, confirm=device.id, fill_passes=1)
            assert any(c.startswith(f"fio --name=flashscale-fill-0 --filename={device.path}") for c in layout.commands)
        finally:
            teardown.close()
        filled = zero_blocks(device.path, size)  # the discard left zeros, the fill wrote over them, mkfs.xfs
        assert filled <= 64  # zeroed only its internal log again (64 MiB at most on a device this small)
        teardown = Teardown(tmp_path / "manifest2.json", Runner(), System())
        try:  # without the fill, the discard leaves most of the device zeros
            layouts.build("single", [device], Runner(), teardown, confirm=device.id, claimed=[device.path])
        finally:
            teardown.close()
        assert zero_blocks(device.path, size) > size // MiB // 2 > filled
    finally:
        loops.close()
