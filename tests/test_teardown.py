"""Teardown records a kind and its details, undoes in reverse through the one undo of each kind, verifies it, keeps
going past failures, retries while busy, and keeps its manifest honest. Run on the fake machine of test_devices."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass

import pytest

from flashscale.errors import CommandError, ConfigError, FlashscaleError
from flashscale.system.commands import Completed, RecordingRunner
from flashscale.system.teardown import Teardown

from test_devices import FakeMachine, Kernel


@pytest.fixture
def machine(tmp_path) -> FakeMachine:
    m = FakeMachine(tmp_path / "machine")
    for name in ("a", "b"):
        m.add_mount("tmpfs", f"/mnt/{name}", "tmpfs")
    return m


def test_undo_runs_last_first_and_the_manifest_goes_when_all_is_undone(machine, tmp_path):
    teardown = Teardown(tmp_path / "m.json", machine.runner, machine)
    outer, inner = tmp_path / "outer", tmp_path / "outer" / "inner"
    for kind, path in (("dir", outer), ("mount", "/mnt/a"), ("dir", inner), ("mount", "/mnt/b")):
        teardown.record(kind, path=str(path))
        if kind == "dir":
            path.mkdir()
    created = json.loads((tmp_path / "m.json").read_text())["created"]
    assert created[1] == {"kind": "mount", "path": "/mnt/a", "pid": os.getpid()}
    teardown.close()
    assert machine.runner.history == [("umount", "/mnt/b"), ("umount", "/mnt/a")]
    assert not outer.exists() and machine.mounts() == []  # inner went first, or outer's rmdir would have failed
    assert not (tmp_path / "m.json").exists()


def test_an_unknown_kind_cannot_be_recorded(machine, tmp_path):
    with pytest.raises(ConfigError, match="'zpool'.*undo only mount"):
        Teardown(tmp_path / "m.json", machine.runner, machine).record("zpool", path="/tank")


def test_a_failure_does_not_stop_the_rest_and_stays_in_the_manifest(machine, tmp_path):
    machine.runner.replies[("umount", "/mnt/a")] = Completed(("umount",), 32, "", "umount: /mnt/a: not permitted")
    teardown = Teardown(tmp_path / "m.json", machine.runner, machine, retries=0)
    first, last = tmp_path / "first", tmp_path / "last"
    first.mkdir()
    teardown.record("dir", path=str(first))
    teardown.record("mount", path="/mnt/a")
    last.mkdir()
    teardown.record("dir", path=str(last))
    with pytest.raises(FlashscaleError, match="mount.*/mnt/a"):
        teardown.close()
    assert not first.exists() and not last.exists()
    assert json.loads((tmp_path / "m.json").read_text())["created"] == [
        {"kind": "mount", "path": "/mnt/a", "pid": os.getpid()}]


def test_an_undo_that_leaves_the_thing_there_is_a_failure(machine, tmp_path):
    """The undo is verified: a umount that reports success but leaves the mount is not taken at its word."""
    deaf = RecordingRunner()  # records and succeeds, but the fake kernel never hears of it
    teardown = Teardown(tmp_path / "m.json", deaf, machine, retries=0)
    teardown.record("mount", path="/mnt/a")
    with pytest.raises(FlashscaleError, match="mount /mnt/a is still there after it was undone"):
        teardown.close()
    assert deaf.history == [("umount", "/mnt/a")] and (tmp_path / "m.json").exists()


@dataclass
class BusyKernel(Kernel):
    """umount says "target is busy" ``busy`` times before it works."""

    busy: int = 0

    def run(self, argv, **kw) -> Completed:
        if argv[0] == "umount" and self.busy:
            self.busy -= 1
            self.history.append(tuple(argv))
            raise CommandError(argv, 32, f"umount: {argv[1]}: target is busy.")
        return super().run(argv, **kw)


@pytest.mark.parametrize("busy,retries,undone", [(2, 5, True), (5, 2, False)])
def test_busy_is_retried_a_bounded_number_of_times(machine, tmp_path, busy, retries, undone):
    kernel = BusyKernel(machine=machine, busy=busy)
    teardown = Teardown(tmp_path / "m.json", kernel, machine, retries=retries, wait_s=0)
    teardown.record("mount", path="/mnt/a")
    if undone:
        teardown.close()
    else:
        with pytest.raises(FlashscaleError, match="target is busy"):
            teardown.close()
    assert len(kernel.history) == min(busy + 1, retries + 1)
    assert (machine.mounted("/mnt/a") is None) == undone


def test_a_cgroup_that_still_holds_processes_is_not_removed(machine, tmp_path):
    cgroup = tmp_path / "cg" / "flashscale-1"
    cgroup.mkdir(parents=True)
    (cgroup / "cgroup.procs").write_text("4242\n")
    teardown = Teardown(tmp_path / "m.json", machine.runner, machine)
    teardown.record("cgroup", path=str(cgroup))
    with pytest.raises(FlashscaleError, match="4242"):
        teardown.close()
    assert cgroup.exists()


BTRFS_MEMBERS = [{"path": "/dev/nvme0n1", "id": "eui:0025385b71b00000"},
                 {"path": "/dev/nvme1n1", "id": "eui:0025385b71b00001"}]


@pytest.fixture
def btrfs_machine(machine) -> FakeMachine:
    """The fake machine with two NVMe devices that were a btrfs's members, now unmounted."""
    for index, member in enumerate(BTRFS_MEMBERS):
        machine.disk(f"nvme{index}n1", eui=member["id"].split(":")[1])
    return machine


def test_btrfs_members_are_forgotten_one_by_one_and_one_the_kernel_does_not_know_is_nothing_to_do(
        btrfs_machine, tmp_path):
    (btrfs_machine.dev / "btrfs-control").write_text("")
    btrfs_machine.runner.replies[("btrfs", "device", "scan", "--forget", "/dev/nvme1n1")] = Completed(
        ("btrfs",), 1, "", "ERROR: cannot unregister device '/dev/nvme1n1': No such file or directory\n")
    teardown = Teardown(tmp_path / "m.json", btrfs_machine.runner, btrfs_machine)
    teardown.record("btrfs-devices", members=BTRFS_MEMBERS)
    teardown.close()
    assert btrfs_machine.runner.history == [("btrfs", "device", "scan", "--forget", "/dev/nvme0n1"),
                                            ("btrfs", "device", "scan", "--forget", "/dev/nvme1n1")]
    assert not (tmp_path / "m.json").exists()


def test_without_btrfs_control_nothing_is_forgotten_and_the_undo_succeeds(btrfs_machine, tmp_path):
    """The VM lab's guest has no udev, so no /dev/btrfs-control: ``--forget`` could only fail there."""
    teardown = Teardown(tmp_path / "m.json", btrfs_machine.runner, btrfs_machine)
    teardown.record("btrfs-devices", members=BTRFS_MEMBERS)
    teardown.close()
    assert btrfs_machine.runner.history == [] and not (tmp_path / "m.json").exists()


@pytest.mark.parametrize("control", [True, False])
def test_a_btrfs_member_still_mounted_is_a_failure_that_names_the_members(btrfs_machine, tmp_path, control):
    if control:
        (btrfs_machine.dev / "btrfs-control").write_text("")
    mounted = btrfs_machine.sys / "fs" / "btrfs" / "f00d" / "devices"
    mounted.mkdir(parents=True)
    (mounted / "nvme1n1").symlink_to(btrfs_machine.node("nvme1n1"))
    teardown = Teardown(tmp_path / "m.json", btrfs_machine.runner, btrfs_machine, retries=0)
    teardown.record("btrfs-devices", members=BTRFS_MEMBERS)
    with pytest.raises(FlashscaleError, match="btrfs-devices /dev/nvme0n1, /dev/nvme1n1 is still there"):
        teardown.close()
    assert (tmp_path / "m.json").exists()


def test_a_btrfs_forget_that_fails_otherwise_is_a_failure(btrfs_machine, tmp_path):
    (btrfs_machine.dev / "btrfs-control").write_text("")
    btrfs_machine.runner.replies[("btrfs", "device", "scan", "--forget", "/dev/nvme0n1")] = Completed(
        ("btrfs",), 1, "", "ERROR: cannot unregister device '/dev/nvme0n1': Invalid argument\n")
    teardown = Teardown(tmp_path / "m.json", btrfs_machine.runner, btrfs_machine, retries=0)
    teardown.record("btrfs-devices", members=BTRFS_MEMBERS)
    with pytest.raises(FlashscaleError, match="Invalid argument"):
        teardown.close()
    assert (tmp_path / "m.json").exists()


def test_a_directory_s_undo_removes_only_the_files_our_jobs_named(machine, tmp_path):
    """fio names a job's files after its section (``flashscale-*``), and a fio server names a client's after the
    client's address first (``127.0.0.1.flashscale-*``): those go; a file of anyone else's stays, and so does the
    directory, the undo failing where it stands."""
    ours = tmp_path / "ours"
    ours.mkdir()
    for name in ("flashscale-t0.0.0", "127.0.0.1.flashscale-t0.1.0", "10.213.1.2.flashscale-w.0.0"):
        (ours / name).write_text("fio's")
    teardown = Teardown(tmp_path / "m.json", machine.runner, machine, retries=0)
    teardown.record("dir", path=str(ours))
    teardown.close()
    assert not ours.exists()
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    kept = ("notes.txt", "127.0.0.1.data", "1.2.3.flashscale-x", "x.flashscale-y", "flashscale")
    for name in (*kept, "flashscale-j.0.0"):
        (theirs / name).write_text("someone's")
    teardown = Teardown(tmp_path / "n.json", machine.runner, machine, retries=0)
    teardown.record("dir", path=str(theirs))
    with pytest.raises(FlashscaleError, match="dir"):
        teardown.close()
    assert sorted(p.name for p in theirs.iterdir()) == sorted(kept)
