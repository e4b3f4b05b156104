"""Every refusal of the guard on real loop devices, with each device's contents checksummed before and after.

The loop devices are the test's own (``losetup --find --show`` on sparse files in tmp_path) and are detached by
name afterwards. A bystander loop device, made by the test outside flashscale, must be untouched at the end. This
kernel has no partition tables and no md / dm, so "a mounted partition" and "held by md" are shown by telling the
guard's view of sysfs that one test loop device is a partition of, or held by, another; the refusal and the
untouched contents are real.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from flashscale import cli
from flashscale.arrays import erase
from flashscale.system.commands import RecordingRunner, Runner
from flashscale.system.devices import Device, System
from flashscale.system.usage import Mount
from flashscale.errors import ConfigError, RefusedError
from flashscale.arrays.guard import Guard

from conftest import loop_backing_file, sha256

pytestmark = pytest.mark.root
MiB = 2**20


def sh(*argv: str) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout.strip()


class Loops:
    """Loop devices this test made; ``close`` undoes swap, mounts and btrfs registrations, then detaches them."""

    def __init__(self, folder: Path):
        self.folder, self.made, self.mounts, self.swaps, self.btrfs = folder, [], [], [], []

    def make(self, size: int = 64 * MiB, fill: bool = True) -> Device:
        backing = self.folder / f"dev{len(self.made)}.img"
        with open(backing, "xb") as fh:
            fh.truncate(size)
            for offset in (0, size // 2, size - MiB) if fill else ():
                fh.seek(offset)
                fh.write(os.urandom(MiB))
        path = sh("losetup", "--find", "--show", str(backing))
        self.made.append((path, str(backing)))
        return Device(path, f"loop:{backing}")

    def mount(self, source: str, fstype: str) -> str:
        target = self.folder / f"mnt{len(self.mounts)}"
        target.mkdir()
        sh("mount", "-t", fstype, "-o", "ro", source, str(target))
        self.mounts.append(str(target))
        return str(target)

    def close(self) -> None:
        for swap in self.swaps:
            subprocess.run(["swapoff", swap], check=False)
        for target in reversed(self.mounts):
            subprocess.run(["umount", target], check=False)
        if self.btrfs:
            subprocess.run(["btrfs", "device", "scan", "--forget", *self.btrfs], check=False, capture_output=True)
        for path, backing in reversed(self.made):
            if loop_backing_file(path) == backing:  # never detach a loop device that is no longer ours
                subprocess.run(["losetup", "--detach", path], check=False)


@pytest.fixture
def loops(tmp_path):
    made = Loops(tmp_path)
    yield made
    made.close()


def refused_untouched(devices: list[Device], attempt, match: str, exc=RefusedError) -> str:
    """Run ``attempt``; it must raise ``exc`` matching ``match`` and leave every device's contents as they were."""
    before = [sha256(d.path) for d in devices]
    with pytest.raises(exc, match=match) as caught:
        attempt()
    assert [sha256(d.path) for d in devices] == before
    return str(caught.value)


def erase_all(devices, confirm=None, wipe=False, system=None):
    guard = Guard(devices, confirm if confirm is not None else [d.id for d in devices], wipe, system or System())
    return erase.erase(devices, guard, Runner())


def test_a_regular_file_named_like_a_device_and_a_missing_path_are_refused(tmp_path):
    fake = tmp_path / "loop99"
    fake.write_bytes(os.urandom(MiB))
    devices = [Device(str(fake), "loop:/x.img")]
    message = refused_untouched(devices, lambda: erase_all(devices), "not a block device")
    assert str(fake) in message
    with pytest.raises(RefusedError, match="no such path"):
        erase_all([Device(str(tmp_path / "nvme9n1"), "eui:1")])


def test_a_device_not_in_the_campaigns_list_is_refused(loops):
    mine, other = loops.make(), loops.make()
    guard = Guard([mine], mine.id)
    message = refused_untouched([other], lambda: guard.run(Runner(), ["blkdiscard", other.path], [other.path]),
                                "it is not in the campaign's list")
    assert other.path in message


def test_a_path_that_now_holds_another_device_is_refused(loops):
    first, second = loops.make(), loops.make()
    stale = Device(second.path, first.id)  # what the test bed said sat at this path
    message = refused_untouched([second], lambda: erase_all([stale]), "no longer the named device")
    assert second.path in message and second.id in message


def test_a_confirmation_mismatch_refuses_every_device(loops):
    a, b = loops.make(), loops.make()
    message = refused_untouched([a, b], lambda: erase_all([a, b], confirm=[a.id, "loop:/not/this.img"]),
                                "does not match the campaign's devices")
    assert a.path in message and b.path in message and "not confirmed: " + b.id in message


def test_a_confirmation_that_is_not_strings_is_refused_before_anything(loops):
    a = loops.make()
    refused_untouched([a], lambda: erase_all([a], confirm=123), "papermill", exc=ConfigError)


def test_a_mounted_device_is_refused_even_when_wiping_is_allowed(loops):
    a = loops.make()
    sh("mkfs.ext4", "-q", a.path)
    target = loops.mount(a.path, "ext4")
    message = refused_untouched([a], lambda: erase_all([a], wipe=True), f"it is mounted at {target}")
    assert a.path in message


def test_a_device_with_a_mounted_partition_is_refused(loops):
    disk, part = loops.make(), loops.make()
    sh("mkfs.ext4", "-q", part.path)
    target = loops.mount(part.path, "ext4")

    class PartitionedView(System):  # this kernel has no partition tables: one loop device plays the partition
        def partitions(self, name):
            return [Path(part.path).name] if name == Path(disk.path).name else []

    refused_untouched([disk], lambda: erase_all([disk], system=PartitionedView()),
                      f"its partition {Path(part.path).name} is mounted at {target}")


def test_a_member_of_a_mounted_multi_device_btrfs_is_refused(loops):
    a, b = loops.make(128 * MiB), loops.make(128 * MiB)
    sh("mkfs.btrfs", "-q", "-d", "raid0", "-m", "raid0", a.path, b.path)
    loops.btrfs += [a.path, b.path]
    loops.mount(a.path, "btrfs")
    refused_untouched([b], lambda: erase_all([b], wipe=True), "it is a member of the mounted btrfs")


def test_a_device_held_by_md_dm_or_lvm_is_refused(loops):
    a = loops.make()

    class HeldView(System):  # no md or dm in this kernel: sysfs is told that md127 holds the device
        def holders(self, name):
            return ["md127"] if name == Path(a.path).name else []

    refused_untouched([a], lambda: erase_all([a], system=HeldView()), r"it is held by md127 \(an md, dm or LVM")


def test_active_swap_is_refused(loops):
    a = loops.make(fill=False)
    sh("mkswap", "-q", a.path)
    sh("swapon", a.path)
    loops.swaps.append(a.path)
    try:
        refused_untouched([a], lambda: erase_all([a], wipe=True), "it is active swap")
    finally:
        subprocess.run(["swapoff", a.path], check=False)


def test_the_root_file_systems_device_is_refused(loops):
    a = loops.make()
    majmin = sh("stat", "-L", "-c", "%t:%T", a.path)
    majmin = ":".join(str(int(x, 16)) for x in majmin.split(":"))

    class RootView(System):  # as if this loop device held /
        def mounts(self):
            return [*super().mounts(), Mount(majmin, "/", "ext4", a.path)]

    refused_untouched([a], lambda: erase_all([a], system=RootView()), "it holds the root file system")


def test_the_real_root_disk_is_refused_without_being_opened():
    root = next((m for m in System().mounts() if m.mountpoint == "/"), None)
    if root is None or not root.source.startswith("/dev/"):
        pytest.skip(f"/ is not on a block device here ({root.source if root else 'no / mount'})")
    try:
        device = System().identify(root.source)
    except RefusedError as exc:
        pytest.skip(f"the root device has no stable identity: {exc}")
    runner = RecordingRunner()
    guard = Guard([device], device.id, wipe=True, system=System(runner=runner))
    with pytest.raises(RefusedError, match="holds the root file system"):
        guard.run(runner, ["blkdiscard", device.path], [device])
    assert runner.history == []  # not even blkid was asked


def test_a_device_open_exclusively_elsewhere_is_refused(loops):
    a = loops.make()
    fd = os.open(a.path, os.O_RDONLY | os.O_EXCL)
    try:
        refused_untouched([a], lambda: erase_all([a]), r"cannot be opened exclusively \(O_EXCL\)")
    finally:
        os.close(fd)


def test_a_signature_the_plan_did_not_say_to_wipe_is_refused(loops):
    a = loops.make()
    sh("mkfs.ext4", "-q", a.path)
    refused_untouched([a], lambda: erase_all([a]), "it carries a ext4 signature the plan did not say to wipe")
    refused_untouched([a], lambda: erase_all([a], wipe=["xfs"]), "ext4 signature")


@pytest.mark.parametrize("method", ["discard", "zero", "wipe"])
def test_erase_verifies_no_signature_is_left_and_records_it(loops, method):
    a = loops.make()
    sh("mkfs.ext4", "-q", a.path)
    record = erase_all([a], wipe=["ext4"]) if method == "discard" else \
        erase.erase([a], Guard([a], a.id, wipe=True), Runner(), method=method)
    assert record[0]["method"] == method and record[0]["id"] == a.id
    assert System().signatures(a.path) == []


def test_the_erase_command_refuses_with_status_1_and_touches_nothing(loops, capsys):
    a, b = loops.make(), loops.make()
    sh("mkfs.ext4", "-q", b.path)
    before = [sha256(a.path), sha256(b.path)]
    assert cli.main(["erase", a.path, b.path, "--confirm", f"{a.id},{b.id}"]) == 1
    err = capsys.readouterr().err
    assert f"{b.path} ({b.id}): it carries a ext4 signature" in err and f"{a.path} (" not in err.split("refused")[1]
    assert cli.main(["erase", a.path, "--confirm", "loop:/wrong.img"]) == 1
    assert cli.main(["erase", a.path, b.path, "--confirm", f"{a.id},{b.id}", "--wipe-signatures", "--dry-run"]) == 0
    assert [sha256(a.path), sha256(b.path)] == before


def test_the_erase_command_takes_identities_and_records_what_it_did(loops, tmp_path, capsys):
    a = loops.make()
    sh("mkfs.ext4", "-q", a.path)
    log = tmp_path / "erase.jsonl"
    assert cli.main(["erase", a.id, "--confirm", a.id, "--wipe-signatures", "ext4", "--method", "zero",
                     "--record", str(log)]) == 0
    header, row = capsys.readouterr().out.splitlines()[:2]  # a table by default; its record is JSON (--record)
    assert header.split()[:3] == ["device", "id", "method"] and row.split()[:3] == [a.path, a.id, "zero"]
    assert f'"id": "{a.id}"' in log.read_text() and System().signatures(a.path) == []


def test_the_bystander_is_untouched_so_far(bystander):  # conftest checks it again after the whole suite
    assert loop_backing_file(bystander["path"]) == bystander["backing"]
    assert sha256(bystander["path"]) == bystander["sha256"]
