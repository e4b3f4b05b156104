"""The emulated array on real loop devices: built, capped, and always torn down, touching nothing else."""
from __future__ import annotations


import pytest

from flashscale.measure import fio
from flashscale.system.commands import Runner
from flashscale.system.devices import loop_backing_file
from flashscale.arrays.emulated import ArraySpec, EmulatedArray
from flashscale.errors import ConfigError

from conftest import loop_devices_backed_under, sha256

pytestmark = pytest.mark.root


def test_the_array_is_built_capped_and_torn_down(tmp_path, foreign_loop):
    spec = ArraySpec(devices=2, device_size=2**30, read_bps=50_000_000, write_bps=40_000_000,
                     backing_root=str(tmp_path))
    with EmulatedArray(spec) as array:
        paths = [d.path for d in array.devices]
        assert len(loop_devices_backed_under(tmp_path)) == 2
        assert all(d.id == f"loop:{loop_backing_file(d.path)}" for d in array.devices)
        cgroup = array.throttle.path
        assert cgroup.exists()
        data = fio.run(fio.FioJob("read", 2**20, (paths[0],), runtime_s=2, ramp_s=1, size=2**28),
                       tmp_path / "point", Runner(), cgroup_procs=array.cgroup_procs)
        measured = fio.parse(data)["bw_bytes"]
        assert measured == pytest.approx(50_000_000, rel=0.1)  # the cap binds: the true answer is known
    assert loop_devices_backed_under(tmp_path) == []
    assert not cgroup.exists()
    assert list(tmp_path.glob("flashscale-array-*")) == []
    assert loop_backing_file(foreign_loop["path"]) == foreign_loop["backing"]
    assert sha256(foreign_loop["path"]) == foreign_loop["sha256"]


def test_an_error_inside_the_block_still_tears_everything_down(tmp_path):
    spec = ArraySpec(devices=2, device_size=2**29, backing_root=str(tmp_path))
    with pytest.raises(RuntimeError, match="boom"):
        with EmulatedArray(spec) as array:
            cgroup = array.throttle.path
            raise RuntimeError("boom")
    assert loop_devices_backed_under(tmp_path) == []
    assert not cgroup.exists()


def test_too_small_devices_are_refused_before_anything_is_made(tmp_path):
    with pytest.raises(ConfigError, match="device_size=1048576"):
        ArraySpec(devices=2, device_size=2**20, backing_root=str(tmp_path))
    with pytest.raises(ConfigError, match="devices=0"):
        ArraySpec(devices=0)
