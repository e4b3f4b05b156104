"""The guard's refusals on a VM's real NVMe namespaces, under a real kernel with md, device-mapper and LVM.

The loop-device versions of these cases are in tests/test_guard_loop.py; the host's kernel has no md and no dm, so
there "held by md" is told to the guard. Here the kernel makes the array and the logical volume, and the guard reads
them from sysfs as it would on a test bed. This module runs inside the VM only (its name has no ``test_`` prefix, so
the host's ``pytest tests`` does not collect it)::

    FLASHSCALE_VM_DEVICES='["wwid:nvme.1b36-...", "wwid:nvme.1b36-..."]' PYTHONDONTWRITEBYTECODE=1 \\
        python -m pytest tests/vm_guest/guest_guard.py -p no:cacheprovider

FLASHSCALE_VM_DEVICES lists the identities (as ``flashscale devices`` prints them) of at least two QEMU NVMe
namespaces these tests may destroy; without it every test is skipped. A device that is not a QEMU NVMe namespace,
or is in use when a test starts, stops that test before anything is written.

Each case writes a random pattern on the devices, builds the adversarial state with the system's own tools (mkfs,
mount, mdadm, LVM, a process holding the device with O_EXCL), then asks flashscale's own erase (``Guard`` and
``erase.erase``, zeroing) to destroy it. It must be refused, with a message naming the device and the reason, nothing
may have run, and five 1 MiB spots (first, last, and three between) must read back, with O_DIRECT, as they did
before. The first test is the control: where the guard allows the erase, the same spots change. Whatever a test
built is undone in its fixture, last made first undone, even when the test fails; afterwards every device must be
free and unsigned again.
"""
from __future__ import annotations

import errno
import hashlib
import json
import mmap
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

from flashscale.arrays import erase
from flashscale.arrays.guard import Guard
from flashscale.errors import CommandError, RefusedError
from flashscale.system.commands import Runner
from flashscale.system.devices import Device, System

ENV = "FLASHSCALE_VM_DEVICES"
MiB = 2**20
SPOTS = 5
ZERO_MiB = hashlib.sha256(bytes(MiB)).hexdigest()
MD_ARRAY = "/dev/md42"
VG, LV = "fsguardvg", "probe"
LVM_ENV = {"DM_DISABLE_UDEV": "1", "LVM_SUPPRESS_FD_WARNINGS": "1"}  # no udev in the guest: lvm makes the nodes
LVM_CONFIG = ("devices { use_devicesfile=0 obtain_device_list_from_udev=0 } "
              "activation { udev_sync=0 udev_rules=0 }")
FORCE = {"ext4": "-F", "xfs": "-f"}  # mkfs's "overwrite what is there" flag
HOLDER = ("import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY | os.O_EXCL); print('held', flush=True); "
          "sys.stdin.read()")

pytestmark = pytest.mark.skipif(
    not os.environ.get(ENV),
    reason=f"runs inside the VM only: set {ENV} to a JSON list of at least two identities of QEMU NVMe devices "
           "these tests may destroy")


def sh(*argv: str, env: dict | None = None) -> str:
    """Run a command of the test's own (not flashscale's); its failure fails the test with its stderr."""
    done = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, **(env or {})})
    assert done.returncode == 0, f"{' '.join(argv)} exited {done.returncode}: {done.stderr.strip()}"
    return done.stdout.strip()


def lvm(command: str, *args: str, device: Device) -> str:
    """An LVM command that sees no device but ``device`` (``--devices``) and works without udev."""
    return sh("lvm", command, "--config", LVM_CONFIG, f"--devices={device.path}", *args, env=LVM_ENV)


# ---- the devices' bytes ---------------------------------------------------------------------------------------
def spot_offsets(path: str) -> list[int]:
    """Where the five 1 MiB spots are: the first MiB, the last, and three evenly between."""
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.lseek(fd, 0, os.SEEK_END)
    finally:
        os.close(fd)
    last = (size - MiB) // MiB * MiB
    return [last * i // (SPOTS - 1) // MiB * MiB for i in range(SPOTS)]


def digests(path: str) -> list[str]:
    """SHA-256 of each spot, read with O_DIRECT: the device's bytes, not the page cache's."""
    buffer, fd = mmap.mmap(-1, MiB), os.open(path, os.O_RDONLY | os.O_DIRECT)
    try:
        found = []
        for offset in spot_offsets(path):
            assert os.preadv(fd, [buffer], offset) == MiB, f"{path}: short read at {offset}"
            found.append(hashlib.sha256(buffer).hexdigest())
        return found
    finally:
        os.close(fd)
        buffer.close()


def write_pattern(path: str) -> None:
    """Random bytes at every spot (O_DIRECT, then fsync), so an erase that ran cannot leave the digests as they were."""
    buffer, fd = mmap.mmap(-1, MiB), os.open(path, os.O_WRONLY | os.O_DIRECT)
    try:
        for offset in spot_offsets(path):
            buffer[:] = os.urandom(MiB)
            assert os.pwritev(fd, [buffer], offset) == MiB, f"{path}: short write at {offset}"
        os.fsync(fd)
    finally:
        os.close(fd)
        buffer.close()


# ---- the devices, and what a test builds on them --------------------------------------------------------------
def vm_devices(system: System) -> list[Device]:
    """The devices FLASHSCALE_VM_DEVICES names, as they are now; fails unless each is a QEMU NVMe namespace."""
    ids = json.loads(os.environ[ENV])
    assert isinstance(ids, list) and len(ids) >= 2 and all(isinstance(i, str) for i in ids), \
        f"{ENV} must be a JSON list of at least two identity strings, not {os.environ[ENV]!r}"
    devices = [system.find(ident) for ident in ids]
    for device in devices:
        name = system.name_of(device.path)
        assert re.fullmatch(r"nvme\d+n\d+", name), f"{device.path} ({device.id}) is not an NVMe namespace"
        assert (system.model(name) or "").startswith("QEMU"), \
            f"{device.path} ({device.id}) is a {system.model(name)!r}, not a QEMU NVMe device: not destroying it"
    return devices


def free_problems(system: System, device: Device) -> list[str]:
    """Why ``device`` is not free and unsigned, as the system reports it (empty: free)."""
    problems = system.usage(device.path) + [system.exclusive_problem(device.path) or ""]
    return [p for p in problems if p] + [f"carries {s}" for s in system.signatures(device.path)]


class Bed:
    """The VM's devices for one test, and everything the test built on them, undone last first by ``close``."""

    def __init__(self, devices: list[Device], folder: Path):
        self.devices, self.folder = devices, folder
        self.undo: list[tuple[str, Callable[[], object]]] = []

    def made(self, what: str, undo: Callable[[], object]) -> None:
        self.undo.append((what, undo))

    def close(self) -> list[str]:
        """Undo everything, each step even if an earlier one failed; the steps that failed, with why."""
        failed = []
        for what, undo in reversed(self.undo):
            try:
                undo()
            except Exception as exc:  # keep undoing the rest; reported by the fixture
                failed.append(f"{what}: {exc}")
        self.undo.clear()
        return failed

    def mkfs(self, fstype: str, device: Device) -> None:
        self.made(f"{fstype} on {device.path}", lambda: sh("wipefs", "--all", device.path))
        sh(f"mkfs.{fstype}", "-q", FORCE[fstype], device.path)

    def mount(self, device: Device, fstype: str) -> str:
        """Mount read-only (a read-write ext4 keeps writing in the background and would change the digests)."""
        target = self.folder / f"mnt-{Path(device.path).name}"
        target.mkdir()
        sh("mount", "-t", fstype, "-o", "ro", device.path, str(target))
        self.made(f"mount at {target}", lambda: sh("umount", str(target)))
        return str(target)

    def raid0(self, members: list[Device]) -> None:
        paths = [d.path for d in members]
        self.made(f"md superblocks on {paths}", lambda: sh("mdadm", "--zero-superblock", *paths))
        self.made(f"array {MD_ARRAY}", lambda: sh("mdadm", "--stop", MD_ARRAY))
        sh("mdadm", "--create", MD_ARRAY, "--run", "--metadata=1.2", "--level=0", f"--raid-devices={len(paths)}",
           *paths)

    def physical_volume(self, device: Device) -> None:
        self.made(f"physical volume {device.path}",
                  lambda: lvm("pvremove", "--force", "--force", "--yes", device.path, device=device))
        lvm("pvcreate", "--yes", device.path, device=device)

    def logical_volume(self, device: Device) -> str:
        """A volume group on the physical volume and an active logical volume in it: its dm-N kernel name."""
        self.made(f"volume group {VG}", lambda: lvm("vgremove", "--force", "--yes", VG, device=device))
        lvm("vgcreate", VG, device.path, device=device)
        lvm("lvcreate", "--yes", "--name", LV, "--size", "64m", VG, device=device)
        return sh("dmsetup", "info", "--columns", "--noheadings", "-o", "blkdevname", f"{VG}-{LV}")

    def hold_exclusively(self, device: Device) -> subprocess.Popen:
        """Another process that holds ``device`` open with O_EXCL until it is killed."""
        holder = subprocess.Popen([sys.executable, "-c", HOLDER, device.path], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        self.made(f"holder pid {holder.pid}", lambda: (holder.kill(), holder.communicate(timeout=30)))
        assert holder.stdout.readline().strip() == "held", f"the holder of {device.path} did not start"
        return holder


@pytest.fixture(scope="module")
def vm() -> list[Device]:
    return vm_devices(System())


@pytest.fixture
def bed(vm, tmp_path):
    """The VM's devices, free, unsigned and patterned; after the test, everything it built undone and checked."""
    system = System()
    busy = {d.path: free_problems(system, d) for d in vm}
    assert not any(busy.values()), f"a VM device is not free before the test, not touching any: {busy}"
    for device in vm:
        write_pattern(device.path)
    made = Bed(vm, tmp_path)
    try:
        yield made
    finally:
        failed = made.close()
        left = {d.path: free_problems(system, d) for d in vm}
        assert not failed and not any(left.values()), f"cleanup failed: {failed}; devices left in use: {left}"


def refused_untouched(devices: list[Device], attempt: Callable[[Runner], object], *needles: str) -> str:
    """``attempt(runner)`` must raise RefusedError naming every needle, run nothing, and leave the spots as they were."""
    before, runner = {d.path: digests(d.path) for d in devices}, Runner()
    with pytest.raises(RefusedError) as caught:
        attempt(runner)
    message = str(caught.value)
    assert [n for n in needles if n not in message] == [], message
    assert runner.history == [], f"commands ran despite the refusal: {runner.history}"
    assert {d.path: digests(d.path) for d in devices} == before
    return message


def zero(devices: list[Device], confirm: list[str] | None = None, wipe=True) -> Callable[[Runner], list[dict]]:
    """flashscale's own erase (blkdiscard --zeroout) of ``devices`` through a guard, to run with a given runner."""
    def attempt(runner: Runner) -> list[dict]:
        guard = Guard(devices, confirm if confirm is not None else [d.id for d in devices], wipe, System())
        return erase.erase(devices, guard, runner, method="zero")
    return attempt


def label(device: Device) -> str:
    """How the guard names a campaign device in a refusal."""
    return f"{device.path} ({device.id})"


# ---- the control: an erase the guard allows changes the spots ------------------------------------------------
def test_an_erase_the_guard_allows_zeroes_the_spots_the_other_tests_compare(bed):
    a, b = bed.devices[:2]
    before = digests(a.path), digests(b.path)
    assert ZERO_MiB not in before[0]
    records = zero([a])(Runner())
    assert records[0]["id"] == a.id and records[0]["commands"] == [f"blkdiscard --zeroout {a.path}"]
    assert digests(a.path) == [ZERO_MiB] * SPOTS
    assert digests(b.path) == before[1]


# ---- what the kernel says is in use ------------------------------------------------------------------------
def test_a_device_mounted_after_the_guard_passed_it_is_refused_at_the_destructive_step(bed):
    a = bed.devices[0]
    guard = Guard([a], [a.id], True, System())
    guard.check([a])  # free when the plan was checked
    bed.mkfs("ext4", a)
    target = bed.mount(a, "ext4")
    mounted = f"it is mounted at {target} (ext4)"
    refused_untouched([a], lambda runner: guard.run(runner, ["blkdiscard", "--zeroout", a.path], [a]), label(a),
                      mounted)
    refused_untouched([a], zero([a]), label(a), mounted)  # a fresh erase, wiping allowed: still refused


def test_both_members_of_an_active_md_raid0_are_refused(bed):
    a, b = bed.devices[:2]
    bed.raid0([a, b])
    array = Path(MD_ARRAY).name
    assert f"{array} : active raid0" in Path("/proc/mdstat").read_text()
    message = refused_untouched([a, b], zero([a, b]), f"{label(a)}: it is held by {array} (an md, dm or LVM device)",
                                f"{label(b)}: it is held by {array} (an md, dm or LVM device)")
    assert "signature" not in message  # wiping was allowed: the holder alone refused it


def test_an_lvm_physical_volume_is_refused_for_its_label_then_for_its_device_mapper_holder(bed):
    a = bed.devices[0]
    bed.physical_volume(a)
    refused_untouched([a], zero([a], wipe=["xfs"]), label(a), "it carries a LVM2_member signature the plan did not")
    holder = bed.logical_volume(a)
    assert re.fullmatch(r"dm-\d+", holder), holder
    refused_untouched([a], zero([a]), label(a), f"it is held by {holder} (an md, dm or LVM device)")


def test_a_device_another_process_holds_with_o_excl_is_refused(bed):
    a = bed.devices[0]
    bed.hold_exclusively(a)
    with pytest.raises(OSError) as busy:  # the hold is real: this process cannot open it exclusively either
        os.close(os.open(a.path, os.O_RDONLY | os.O_EXCL))
    assert busy.value.errno == errno.EBUSY
    refused_untouched([a], zero([a]), label(a), "it cannot be opened exclusively (O_EXCL): another program holds it")


# ---- what the plan and the user said -----------------------------------------------------------------------
def test_a_signature_the_wipe_policy_does_not_list_is_refused(bed):
    a = bed.devices[0]
    bed.mkfs("xfs", a)
    assert sh("blkid", "-p", "-o", "value", "-s", "TYPE", a.path) == "xfs"
    refused_untouched([a], zero([a], wipe=["ext4"]), label(a),
                      "it carries a xfs signature the plan did not say to wipe")


def test_a_confirmation_naming_another_device_refuses_every_device(bed):
    a, b = bed.devices[:2]
    refused_untouched([a, b], zero([a], confirm=[b.id]), label(a), f"not confirmed: {a.id}",
                      f"confirmed but not in the campaign's list: {b.id}")


def test_paths_that_now_carry_each_others_identity_are_refused(bed):
    a, b = bed.devices[:2]
    stale = [Device(a.path, b.id), Device(b.path, a.id)]  # what a test bed read before the names swapped
    refused_untouched([a, b], zero(stale), f"{a.path} ({b.id}): it is no longer the named device: "
                      f"{a.id!r} sits there now, not {b.id!r}", f"{b.path} ({a.id}): it is no longer the named device")


# ---- nvme-cli on QEMU's controller ---------------------------------------------------------------------------
def sanitize_capabilities(device: Device) -> int:
    """SANICAP of the controller behind ``device`` (bit 1: block erase), from nvme-cli's own report."""
    controller = erase.nvme_of(device, System(), Runner()).controller
    return int(json.loads(sh("nvme", "id-ctrl", controller, "--output-format=json"))["sanicap"])


def test_nvme_sanitize_on_a_controller_without_it_fails_and_touches_nothing(bed):
    a, b = bed.devices[:2]
    if sanitize_capabilities(a) & 0x2:
        pytest.skip(f"{a.path}'s controller supports block-erase sanitize: this case needs one that does not")
    before, runner = (digests(a.path), digests(b.path)), Runner()
    controller = erase.nvme_of(a, System(), runner).controller
    with pytest.raises(CommandError) as caught:
        erase.erase([a], Guard([a], [a.id], True, System()), runner, method="nvme-sanitize", poll_s=0.1)
    assert caught.value.argv == ["nvme", "sanitize", controller, "--sanact=2"] and caught.value.returncode != 0
    assert "Invalid Command Opcode" in str(caught.value)  # QEMU 7.2 does not implement Sanitize (opcode 0x84)
    assert runner.history == [tuple(caught.value.argv)]  # no sanitize-log polling, no "done"
    assert (digests(a.path), digests(b.path)) == before


def test_nvme_format_erases_one_namespace_and_leaves_no_signature(bed):
    a, b = bed.devices[:2]
    bed.mkfs("ext4", a)
    before, runner = (digests(a.path), digests(b.path)), Runner()
    records = erase.erase([a], Guard([a], [a.id], ["ext4"], System()), runner, method="nvme-format")
    assert records[0]["method"] == "nvme-format" and records[0]["id"] == a.id
    assert runner.history[0][:2] == ("nvme", "format")
    done = subprocess.run(["blkid", "-p", a.path], capture_output=True, text=True)
    assert done.returncode == 2, f"blkid -p still finds {done.stdout.strip()!r} on {a.path}"
    # mkfs.ext4 may discard the device first (the lab's drives pass discards on): of the pattern only ext4's own
    # blocks may be left by then, but never nothing, so reading zeros everywhere after is the format's doing
    assert before[0] != [ZERO_MiB] * SPOTS, "nothing on the device before the format: the check would prove nothing"
    assert digests(a.path) == [ZERO_MiB] * SPOTS  # every spot reads zeros: the user data is erased
    assert digests(b.path) == before[1]  # the other namespace is not touched
