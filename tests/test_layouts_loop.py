"""Layouts on real loop devices: built through the guard, geometry and mount options applied, torn down and
verified; md and LVM stop before touching anything on this kernel; an interrupted run is reaped from its manifest.
"""
from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from flashscale import cli
from flashscale.arrays import layouts
from flashscale.system import reap
from flashscale.system.commands import Runner
from flashscale.system.devices import System
from flashscale.arrays.emulated import ArraySpec, EmulatedArray
from flashscale.errors import RefusedError, UnsupportedError
from flashscale.arrays.layouts import Options
from flashscale.system.teardown import Teardown

from conftest import loop_backing_file, mounts_under, sha256
from test_guard_loop import MiB, Loops, sh

pytestmark = pytest.mark.root


@pytest.fixture
def loops(tmp_path):
    made = Loops(tmp_path)
    yield made
    made.close()


def confirm(devices):
    return [d.id for d in devices]


def mount_options(target: str) -> set[str]:
    """The options /proc/self/mountinfo shows for the mount at ``target``."""
    line = next(line for line in Path("/proc/self/mountinfo").read_text().splitlines() if f" {target} " in line)
    return set(line.split()[5].split(","))


def test_jbod_with_ext4_and_mount_options_is_built_and_torn_down(loops, tmp_path):
    devices = [loops.make(), loops.make()]
    teardown = Teardown(tmp_path / "manifest.json", Runner(), System())
    layout = layouts.build("jbod", devices, Runner(), teardown, confirm=confirm(devices),
                           options=Options(fs="ext4", mount_options="noatime,nodiratime,nodelalloc"))
    assert layout.backend == "loop" and layout.devices == 2 and len(layout.targets) == 2
    assert [System().signatures(d.path) for d in devices] == [["ext4"], ["ext4"]]
    assert {"noatime", "nodiratime"} <= mount_options(layout.targets[0])
    assert layout.commands[0] == f"blkdiscard {devices[0].path}"
    root = str(Path(layout.targets[0]).parent)
    teardown.close()
    assert mounts_under(root) == [] and not Path(root).exists() and not (tmp_path / "manifest.json").exists()
    assert all(loop_backing_file(d.path) for d in devices)  # the devices are the test's: still attached


def test_xfs_stripe_geometry_comes_from_the_layout(loops, tmp_path):
    device = loops.make(2**30, fill=False)
    teardown = Teardown(tmp_path / "manifest.json", Runner(), System())
    try:
        layout = layouts.build("single", [device], Runner(), teardown, confirm=device.id,
                               options=Options(stripe_single=True, chunk_bytes=256 * 2**10))
        info = sh("xfs_info", layout.targets[0])
        assert "sunit=64 " in info.replace("  ", " ") and "swidth=64 " in info.replace("  ", " ")  # 256 KiB / 4 KiB
    finally:
        teardown.close()


def test_btrfs_raid10_over_four_devices(loops, tmp_path):
    devices = [loops.make(128 * MiB, fill=False) for _ in range(4)]
    teardown = Teardown(tmp_path / "manifest.json", Runner(), System())
    try:
        layout = layouts.build("btrfs-raid10", devices, Runner(), teardown, confirm=confirm(devices))
        assert "Data, RAID10" in sh("btrfs", "filesystem", "df", layout.targets[0])
        assert System().usage(devices[3].path)[0].startswith("it is a member of the mounted btrfs")
    finally:
        teardown.close()
    assert all(System().usage(d.path) == [] for d in devices)


def test_jbod_of_btrfs_one_file_system_a_device(loops, tmp_path):
    """FS btrfs: each device its own btrfs (single data), so btrfs-raid0 can be read against btrfs per device, the
    file system's cost apart from its striping."""
    devices = [loops.make(128 * MiB, fill=False) for _ in range(2)]
    teardown = Teardown(tmp_path / "manifest.json", Runner(), System())
    try:
        layout = layouts.build("jbod", devices, Runner(), teardown, confirm=confirm(devices),
                               options=Options(fs="btrfs"))
        assert [System().signatures(d.path) for d in devices] == [["btrfs"], ["btrfs"]]
        for target in layout.targets:
            assert "Data, single" in sh("btrfs", "filesystem", "df", target)
            assert {"noatime", "nodiratime"} <= mount_options(target)
    finally:
        teardown.close()
    assert all(System().usage(d.path) == [] for d in devices)


@pytest.mark.parametrize("name", ["md-raid0", "md-imsm-raid0", "lvm-striped"])
def test_md_and_lvm_stop_before_touching_anything_on_this_kernel(loops, tmp_path, name):
    if layouts.missing(name, System(), Runner()) is None:
        pytest.skip(f"this machine can build {name}: the refusal cannot be shown here")
    devices = [loops.make(), loops.make()]
    before = [sha256(d.path) for d in devices]
    teardown = Teardown(tmp_path / "manifest.json", Runner(), System())
    runner = Runner()
    try:
        with pytest.raises(UnsupportedError, match="cannot run here: (the kernel has no (md driver|device-mapper)"
                                                   "|.* is not installed)"):
            layouts.build(name, devices, runner, teardown, confirm=confirm(devices))
        assert runner.history == [] and teardown.entries == [] and [sha256(d.path) for d in devices] == before
    finally:
        teardown.close()


def test_an_existing_mount_point_keeps_everything_but_our_own_directory(tmp_path):
    shared = tmp_path / "gpfs-scratch"
    shared.mkdir()
    (shared / "results.txt").write_text("someone else's")
    (shared / "flashscale-t0.0.0").write_text("named like ours, but not in our directory")
    teardown = Teardown(tmp_path / "manifest.json", Runner(), System())
    layout = layouts.use_directory(shared, teardown, count=2)
    for target in layout.targets:
        (Path(target) / "flashscale-t0.0.0").write_bytes(b"fio data")
    teardown.close()
    assert sorted(p.name for p in shared.iterdir()) == ["flashscale-t0.0.0", "results.txt"]


def test_the_emulated_arrays_layouts_go_through_the_guard(tmp_path):
    spec = ArraySpec(devices=2, device_size=2**30, backing_root=str(tmp_path))
    with EmulatedArray(spec) as array:
        ours = [d.path for d in array.devices]
        for name in ("jbod", "btrfs-raid0"):
            teardown = Teardown(tmp_path / f"{name}.json", Runner(), System())
            try:
                if name == "btrfs-raid0":  # jbod left xfs behind: unless the devices are claimed, the guard refuses
                    with pytest.raises(RefusedError, match="xfs signature the plan did not say to wipe"):
                        layouts.build(name, array.devices, Runner(), teardown, confirm=confirm(array.devices))
                layouts.build(name, array.devices, Runner(), teardown, confirm=confirm(array.devices), claimed=ours)
            finally:
                teardown.close()
        with pytest.raises(RefusedError, match="not confirmed"):
            layouts.build("single", array.devices, Runner(), Teardown(tmp_path / "x.json", Runner(), System()),
                          confirm=array.devices[0].id)


BUILD_AND_HANG = """
import sys, time
from pathlib import Path
from flashscale.arrays import layouts
from flashscale.system.commands import Runner
from flashscale.system.devices import System
from flashscale.system.teardown import Teardown
devices = [System().identify(p) for p in sys.argv[2:]]
layouts.build("jbod", devices, Runner(), Teardown(Path(sys.argv[1]), Runner(), System()),
              confirm=[d.id for d in devices], options=layouts.Options(fs="ext4"))
print("ready", flush=True)
time.sleep(600)
"""


def start_and_kill(manifest: Path, devices, kill: bool = True) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", BUILD_AND_HANG, str(manifest), *[d.path for d in devices]],
                            stdout=subprocess.PIPE, text=True)
    ready = proc.stdout.readline().strip()
    proc.stdout.close()
    assert ready == "ready"
    if kill:
        proc.send_signal(signal.SIGKILL)  # a kernel dying under papermill: no teardown at all
        proc.wait()
    return proc


def test_reap_tears_down_what_a_killed_run_left_and_nothing_else(loops, tmp_path, capsys):
    devices = [loops.make(), loops.make()]
    bystander = loops.make()
    manifest = tmp_path / "manifests" / "run.json"
    manifest.parent.mkdir(mode=0o700)
    start_and_kill(manifest, devices)
    left = [e["path"] for e in json.loads(manifest.read_text())["created"] if e["kind"] == "mount"]
    assert len(left) == 2 and all(System().mounted(p) for p in left)
    bystander_sum = sha256(bystander.path)
    assert cli.main(["reap", "--manifest-dir", str(manifest.parent)]) == 0
    assert "reaped" in capsys.readouterr().out
    assert all(System().mounted(p) is None and not Path(p).exists() for p in left) and not manifest.exists()
    assert all(loop_backing_file(d.path) for d in [*devices, bystander]) and sha256(bystander.path) == bystander_sum


def test_reap_leaves_a_run_in_progress_alone(loops, tmp_path):
    devices = [loops.make()]
    manifest = tmp_path / "running.json"
    proc = start_and_kill(manifest, devices, kill=False)
    try:
        [outcome] = reap.reap([manifest])
        assert outcome.state == "running" and manifest.exists()
        assert all(System().mounted(e["path"]) for e in outcome.entries if e["kind"] == "mount")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert reap.reap([manifest])[0].state == "reaped"


def test_reap_never_detaches_a_loop_device_that_is_no_longer_what_was_recorded(loops, tmp_path):
    mine = loops.make()
    manifest = tmp_path / "old.json"
    manifest.write_text('{"created": [{"kind": "loop", "path": "%s", "backing_file": "/gone/device0.img"}]}'
                        % mine.path)
    manifest.chmod(0o600)
    [outcome] = reap.reap([manifest])
    assert outcome.state == "reaped" and loop_backing_file(mine.path) == mine.id.removeprefix("loop:")
