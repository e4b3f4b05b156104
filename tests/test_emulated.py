"""The emulated array: its exact plan on a fake machine, then on real loop devices: built, capped, and always torn
down, touching nothing else."""
from __future__ import annotations

import json
import os

import pytest

from flashscale.measure import fio, fio_output
from flashscale.system.commands import Runner
from flashscale.arrays.emulated import ArraySpec, EmulatedArray
from flashscale.errors import ConfigError, UnsupportedError

from conftest import loop_backing_file, loop_devices_backed_under, sha256
from test_devices import FakeMachine

MiB = 2**20


@pytest.fixture
def machine(tmp_path) -> FakeMachine:
    m = FakeMachine(tmp_path / "machine", loop=True)
    m.cgroup("v2", tmp_path / "cg2")
    return m


def test_on_a_fake_machine_the_plan_the_manifest_and_the_undo_are_exact(machine, tmp_path):
    spec = ArraySpec(devices=2, device_size=512 * MiB, read_bps=50_000_000, write_bps=40_000_000,
                     backing_root=str(tmp_path / "backing"))
    (tmp_path / "backing").mkdir()
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    with EmulatedArray(spec, machine.runner, machine, manifests=manifests) as array:
        work = array.workdir
        images = [str(work / f"device{i}.img") for i in range(2)]
        assert work.parent == tmp_path / "backing" and work.name.startswith("flashscale-array-")
        assert machine.runner.history == [("losetup", "--find", "--show", image) for image in images]
        assert [(d.path, d.id) for d in array.devices] == [("/dev/loop0", f"loop:{images[0]}"),
                                                           ("/dev/loop1", f"loop:{images[1]}")]
        assert (array.throttle.path / "io.max").read_text() == "7:1 rbps=50000000 wbps=40000000"
        assert array.throttle.path.parent == tmp_path / "cg2" and array.cgroup_procs == [array.throttle.procs_file]
        [manifest] = manifests.iterdir()
        created = json.loads(manifest.read_text())["created"]
        assert [{k: v for k, v in e.items() if k != "pid"} for e in created] == [
            {"kind": "dir", "path": str(work)}, {"kind": "cgroup", "path": str(array.throttle.path)},
            {"kind": "file", "path": images[0]}, {"kind": "loop", "path": "/dev/loop0", "backing_file": images[0]},
            {"kind": "file", "path": images[1]}, {"kind": "loop", "path": "/dev/loop1", "backing_file": images[1]}]
        assert {e["pid"] for e in created} == {os.getpid()}
        (array.throttle.path / "io.max").unlink()  # cgroupfs files vanish with the directory; a plain one needs help
        cgroup = array.throttle.path
    assert machine.runner.history[2:] == [("losetup", "--detach", "/dev/loop1"), ("losetup", "--detach", "/dev/loop0")]
    assert machine.loop_backing("/dev/loop0") is None and machine.loop_backing("/dev/loop1") is None
    assert not work.exists() and not cgroup.exists() and list(manifests.iterdir()) == []


def test_on_a_machine_without_loop_devices_nothing_is_made(tmp_path):
    machine = FakeMachine(tmp_path / "machine")  # no /dev/loop-control
    with pytest.raises(UnsupportedError, match="cannot build the emulated array: the kernel offers no .*loop-control"):
        EmulatedArray(ArraySpec(devices=2, backing_root=str(tmp_path)), machine.runner, machine).__enter__()
    (machine.proc / "self" / "status").write_text("Uid:\t1000\t1000\t1000\t1000\n")
    (machine.dev / "loop-control").write_text("")
    assert machine.loop_support_problem() == "flashscale is not running as root"
    assert machine.runner.history == [] and list(tmp_path.glob("flashscale-array-*")) == []


@pytest.mark.root
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
        measured = fio_output.parse(data)["bw_bytes"]
        assert measured == pytest.approx(50_000_000, rel=0.1)  # the cap binds: the true answer is known
    assert loop_devices_backed_under(tmp_path) == []
    assert not cgroup.exists()
    assert list(tmp_path.glob("flashscale-array-*")) == []
    assert loop_backing_file(foreign_loop["path"]) == foreign_loop["backing"]
    assert sha256(foreign_loop["path"]) == foreign_loop["sha256"]


@pytest.mark.root
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


def _mountinfo(tmp_path, *mounts: tuple[str, str]):
    """A System whose /proc/self/mountinfo lists ``mounts`` (mount point, file system type), nothing else."""
    from flashscale.system.devices import System
    (tmp_path / "proc" / "self").mkdir(parents=True)
    lines = [f"{n} 1 0:{n} / {point} rw,relatime shared:1 - {fstype} src{n} rw" for n, (point, fstype) in
             enumerate(mounts, start=20)]
    (tmp_path / "proc" / "self" / "mountinfo").write_text("\n".join(lines) + "\n")
    return System(proc=tmp_path / "proc")


def test_backing_files_off_memory_are_said_to_hold_writes_below_their_cap(tmp_path):
    from flashscale.arrays.emulated import backing_store_sentence
    system = _mountinfo(tmp_path, ("/", "ext4"), ("/dev/shm", "tmpfs"), ("/srv/fast", "ramfs"), ("/srv/fastx", "xfs"))
    assert backing_store_sentence("/dev/shm/flashscale-array-x", system) is None
    assert backing_store_sentence("/srv/fast/a", system) is None
    said = backing_store_sentence("/srv/fastx/a", system)  # not /srv/fast's: a mount point is a whole name
    assert "on xfs at /srv/fastx" in said and "BACKING_DIR" in said
    assert "on ext4 at /" in backing_store_sentence("/var/tmp/flashscale-array-y", system)
    assert backing_store_sentence("/x", _mountinfo(tmp_path / "none")) is None  # no mount known: nothing said
