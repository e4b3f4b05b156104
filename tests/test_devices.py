"""Identity, discovery and "in use" verdicts, read from a fake sysfs and /proc (no root needed).

``FakeMachine`` is the machine as files under tmp_path, and a kernel that obeys the commands a RecordingRunner
records (mdadm --create makes an array, mount mounts, blkdiscard clears signatures), so plans for md, LVM and nvme-cli
can be executed end to end here, where none of them exists. Other test modules import it.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from flashscale import cli
from flashscale.system.commands import Completed, RecordingRunner
from flashscale.system.devices import System
from flashscale.errors import ConfigError, RefusedError
from flashscale.arrays.testbed import TestBed

ERASING = {"blkdiscard", "wipefs", "nvme"}


@dataclass
class Kernel(RecordingRunner):
    """A RecordingRunner whose successful commands change the fake machine as the kernel would: ``losetup``
    attaches and detaches loop devices in sysfs, ``mount`` / ``umount`` edit mountinfo, ``mdadm`` edits mdstat."""

    machine: "FakeMachine | None" = None

    def run(self, argv, *, ok_codes=(0,), cgroup_procs=(), timeout=None) -> Completed:
        done = super().run(argv, ok_codes=ok_codes, cgroup_procs=cgroup_procs, timeout=timeout)
        return self.machine.obey(tuple(str(a) for a in argv)) or done


class FakeMachine(System):
    """sysfs, /proc and /dev under ``root``, read by System's own code; every device is free and unsigned unless a
    test says otherwise. Only what roots cannot stand in for is answered here: block device nodes (``majmin``),
    exclusive opens, ``blkid`` signatures and the paths of arrays the kernel made (``exists``)."""

    def __init__(self, root: Path, md: bool = False, dm: bool = False, loop: bool = False):
        runner = Kernel(installed=frozenset({"mdadm", "lvm", "nvme", "losetup"}))  # no udevadm: no settle
        runner.machine = self
        super().__init__(sys=root / "sys", proc=root / "proc", dev=root / "dev", runner=runner)
        for folder in (self.sys / "class" / "block", self.sys / "block", self.proc / "self", self.dev / "mapper"):
            folder.mkdir(parents=True, exist_ok=True)
        (self.proc / "self" / "mountinfo").write_text("")
        (self.proc / "self" / "status").write_text("Name:\tpython\nUid:\t0\t0\t0\t0\n")
        (self.proc / "swaps").write_text("Filename\tType\tSize\tUsed\tPriority\n")
        if md:
            (self.proc / "mdstat").write_text("Personalities : [raid0]\n")
        if dm:
            (self.dev / "mapper" / "control").write_text("")
        if loop:
            (self.dev / "loop-control").write_text("")
        self.sigs: dict[str, list[str]] = {}
        self.discard_zeroes = True
        self._minor = 0

    def _make(self, place: Path, name: str, attrs: dict) -> Path:
        self._minor += 1
        place.mkdir(parents=True)
        attrs = {"dev": f"259:{self._minor}", "size": "2097152", **attrs}
        for key, value in attrs.items():
            (place / key).parent.mkdir(parents=True, exist_ok=True)
            (place / key).write_text(f"{value}\n")
        (place / "holders").mkdir(exist_ok=True)
        (self.sys / "class" / "block" / name).symlink_to(place)
        return place

    def disk(self, name: str, **attrs) -> str:
        place = self._make(self.sys / "devices" / "virtual" / "block" / name, name, attrs)
        (self.sys / "block" / name).symlink_to(place)
        return f"/dev/{name}"

    def partition(self, disk: str, number: int) -> str:
        name = f"{disk}p{number}" if disk[-1].isdigit() else f"{disk}{number}"
        self._make(self.sys / "devices" / "virtual" / "block" / disk / name, name, {"partition": number})
        return f"/dev/{name}"

    def add_mount(self, source: str, mountpoint: str, fstype: str = "xfs", majmin: str = "0:50",
                  options: str = "rw") -> None:
        with open(self.proc / "self" / "mountinfo", "a") as fh:
            fh.write(f"99 1 {majmin} / {mountpoint} rw,noatime - {fstype} {source} {options}\n")

    def cgroup(self, version: str, root: Path) -> Path:
        """A cgroup hierarchy at ``root`` (a tmp folder) in the mount table: v1 with blkio, or v2 with io."""
        root.mkdir(parents=True)
        if version == "v1":
            self.add_mount("cgroup", str(root), "cgroup", options="rw,blkio")
        else:
            (root / "cgroup.controllers").write_text("cpu io memory pids\n")
            (root / "cgroup.subtree_control").write_text("io memory\n")
            self.add_mount("cgroup2", str(root), "cgroup2")
        return root

    def process(self, pid: int, start: int, state: str = "S") -> None:
        """Process ``pid`` in /proc, started at ``start`` clock ticks after boot (field 22 of its stat)."""
        (self.proc / str(pid)).mkdir(exist_ok=True)
        (self.proc / str(pid) / "stat").write_text(f"{pid} (fio server) {state} {'0 ' * 18}{start} 0 0\n")

    def hold(self, name: str, holder: str) -> None:
        (self.node(name) / "holders" / holder).mkdir()

    # ---- the kernel that obeys the commands ----------------------------------------------------------------
    def obey(self, argv: tuple[str, ...]) -> Completed | None:
        if argv[:3] == ("losetup", "--find", "--show"):
            index = sum(1 for p in (self.sys / "block").iterdir() if p.name.startswith("loop"))
            self.disk(f"loop{index}", dev=f"7:{index}", **{"loop/backing_file": argv[3]})
            return Completed(argv, 0, f"/dev/loop{index}\n")
        if argv[:2] == ("losetup", "--detach"):
            loop = self.node(self.name_of(argv[2])) / "loop"
            (loop / "backing_file").unlink()
            loop.rmdir()
        if argv[0] == "mount":
            self.add_mount(argv[-2], argv[-1], argv[2], "0:77")
        if argv[0] == "umount":
            mountinfo = self.proc / "self" / "mountinfo"
            lines = mountinfo.read_text().splitlines(keepends=True)
            mountinfo.write_text("".join(line for line in lines if line.split()[4] != argv[1]))
        if argv[0] == "mdadm" and (self.proc / "mdstat").exists():
            (self.proc / "mdstat").write_text("Personalities : [raid0]\n" + "".join(
                f"{Path(p).name} : active raid0\n" for p in self._made() if p.startswith("/dev/md/")))
        return None

    def majmin(self, path: str) -> str:
        if not path.startswith("/dev/"):
            return super().majmin(path)  # a real file: the real check
        dev = self.node(self.name_of(path)) / "dev"
        if not dev.exists() and path not in self._made():
            raise RefusedError(f"{path}: no such device")
        return dev.read_text().strip() if dev.exists() else "9:127"

    def exclusive_problem(self, path: str) -> str | None:
        return None

    def signatures(self, path: str) -> list[str]:
        for argv in self.runner.history:
            if argv[0] in ERASING and path in argv and (self.discard_zeroes or argv[1:] != (path,)):
                return []
        return list(self.sigs.get(self.name_of(path), []))

    def _made(self) -> set[str]:
        made = set()
        for argv in self.runner.history:
            if argv[:2] == ("mdadm", "--create"):
                made.add(argv[2])
            if argv[:2] == ("mdadm", "--stop"):
                made.discard(argv[2])
            if argv[0] == "lvcreate":
                made.add(f"/dev/{argv[-1]}/{argv[-2].split('=')[1]}")
            if argv[0] == "lvremove":
                made.discard(f"/dev/{argv[-1]}")
        return made

    def exists(self, path: str) -> bool:
        return path in self._made() or (not path.startswith("/dev/") and os.path.lexists(path))


@pytest.fixture
def machine(tmp_path) -> FakeMachine:
    return FakeMachine(tmp_path / "machine")


def test_identity_prefers_wwn_then_nguid_then_eui_then_serial(machine):
    machine.disk("sda", **{"device/wwid": "naa.5002538e40a1b2c3", "device/model": "SSD 860", "device/vendor": "ATA"})
    machine.disk("nvme0n1", nguid="0025385b-71b0-1234-e4d2-5c4a00000001", eui="00 25 38 5b 71 b0 12 34",
                 nsid="1", **{"device/model": "INTEL SSDPE2MD016T4", "device/serial": "CVFT1234"})
    machine.disk("nvme1n1", nguid="00000000-0000-0000-0000-000000000000", eui="00 25 38 5b 71 b0 99 99", nsid="1")
    machine.disk("nvme2n1", nguid="00000000-0000-0000-0000-000000000000", eui="00 00 00 00 00 00 00 00", nsid="3",
                 **{"device/model": "Vendor X", "device/serial": "S123"})
    machine.disk("vdb", serial="disk-serial-7")
    machine.disk("ram0")
    assert machine.identity_of("sda") == "wwn:naa.5002538e40a1b2c3"
    assert machine.identity_of("nvme0n1") == "nguid:0025385b71b01234e4d25c4a00000001"
    assert machine.identity_of("nvme1n1") == "eui:0025385b71b09999"  # an all-zero NGUID is no identity
    assert machine.identity_of("nvme2n1") == "serial:Vendor X:S123:ns3"
    assert machine.identity_of("vdb") == "serial:unknown-model:disk-serial-7"
    assert machine.identity_of("ram0") is None
    assert machine.model("sda") == "ATA SSD 860"


def test_a_null_blk_device_made_through_configfs_is_known_by_its_configfs_name(machine):
    """null_blk's disks have its major and their index as minor; the configfs directory powered on with that index
    names the device (Linux 6.1 names the disk after it too; older kernels called it nullb<index>)."""
    (machine.proc / "devices").write_text("Character devices:\n  1 mem\n\nBlock devices:\n  7 loop\n252 nullb\n")
    config = machine.sys / "kernel" / "config" / "nullb"
    for name, index, power in (("fs0123abcd0", 0, 1), ("mine", 3, 1), ("off", 4, 0)):
        (config / name).mkdir(parents=True)
        (config / name / "index").write_text(f"{index}\n")
        (config / name / "power").write_text(f"{power}\n")
    machine.disk("fs0123abcd0", dev="252:0")
    machine.disk("nullb3", dev="252:3")   # an older kernel's name for configfs's "mine"
    machine.disk("nullb4", dev="252:4")   # its directory is powered off: whatever this is, it is not "off"
    machine.disk("nullb1", dev="252:1")   # made by the module's nr_devices: in no configfs directory
    machine.disk("vdc", dev="254:3")      # another driver's minor 3
    assert machine.identity_of("fs0123abcd0") == "nullb:fs0123abcd0"
    assert machine.identity_of("nullb3") == "nullb:mine"
    assert [machine.identity_of(n) for n in ("nullb4", "nullb1", "vdc")] == [None, None, None]
    assert machine.find("nullb:mine").path == str(machine.dev / "nullb3")
    with pytest.raises(RefusedError, match="no stable identity found .*null_blk configfs name"):
        machine.identify("/dev/nullb1")
    (machine.proc / "devices").write_text("Block devices:\n  7 loop\n")  # null_blk gone: no disk is one of its
    assert machine.identity_of("fs0123abcd0") is None


def test_a_partition_is_known_by_its_disk_and_number(machine):
    machine.disk("nvme0n1", nguid="0025385b71b01234e4d25c4a00000001")
    machine.partition("nvme0n1", 2)
    assert machine.identity_of("nvme0n1p2") == "nguid:0025385b71b01234e4d25c4a00000001:part2"
    assert machine.partitions("nvme0n1") == ["nvme0n1p2"]
    assert machine.parent_of("nvme0n1p2") == "nvme0n1"


def test_find_resolves_an_identity_to_the_one_device_carrying_it(machine):
    machine.disk("nvme0n1", eui="0025385b71b01234")
    machine.disk("nvme1n1", eui="0025385b71b05678")
    assert machine.find("eui:0025385b71b05678").path == str(machine.dev / "nvme1n1")
    with pytest.raises(RefusedError, match="no block device has identity 'eui:00'"):
        machine.find("eui:00")
    machine.disk("nvme2n1", eui="0025385b71b05678")  # multipath or a clone: two paths, one identity
    with pytest.raises(RefusedError, match="ambiguous"):
        machine.find("eui:0025385b71b05678")


def test_usage_names_every_way_a_device_is_busy(machine):
    machine.disk("sda", **{"device/wwid": "naa.1"})
    machine.partition("sda", 1)
    machine.disk("sdb", **{"device/wwid": "naa.2"})
    machine.disk("sdc", **{"device/wwid": "naa.3"})
    machine.disk("sdd", **{"device/wwid": "naa.4"})
    machine.disk("sde", **{"device/wwid": "naa.5"})
    machine.add_mount("/dev/sda1", "/data")
    (machine.sys / "fs" / "btrfs" / "f00d" / "devices").mkdir(parents=True)
    (machine.sys / "fs" / "btrfs" / "f00d" / "devices" / "sdb").symlink_to(machine.node("sdb"))
    machine.hold("sdc", "md127")
    (machine.proc / "swaps").write_text("Filename Type Size Used Priority\n/dev/sdd partition 8 0 -2\n")
    assert machine.usage("/dev/sda") == ["its partition sda1 is mounted at /data (xfs)"]
    assert machine.usage("/dev/sdb") == ["it is a member of the mounted btrfs f00d"]
    assert machine.usage("/dev/sdc") == ["it is held by md127 (an md, dm or LVM device)"]
    assert machine.usage("/dev/sdd") == ["it is active swap"]
    assert machine.usage("/dev/sde") == []


def test_the_root_file_systems_disk_and_the_disks_under_its_array_are_in_use(machine):
    machine.disk("sda", **{"device/wwid": "naa.1"})
    machine.partition("sda", 2)
    machine.disk("sdb", **{"device/wwid": "naa.2"})
    machine.disk("dm-0", dev="253:0", slaves="")
    (machine.node("dm-0") / "slaves").unlink()
    (machine.node("dm-0") / "slaves").mkdir()
    (machine.node("dm-0") / "slaves" / "sdb").symlink_to(machine.node("sdb"))
    machine.add_mount("/dev/sda2", "/boot", "ext4", majmin=(machine.node("sda2") / "dev").read_text().strip())
    machine.add_mount("/dev/mapper/vg-root", "/", "xfs", majmin="253:0")
    assert "it holds the boot (/boot) file system, or is the disk or array member under it" in machine.usage("/dev/sda")
    assert machine.usage("/dev/sdb") == ["it holds the root file system, or is the disk or array member under it"]


def test_mountinfo_escapes_are_undone(machine):
    machine.disk("sda", **{"device/wwid": "naa.1"})
    machine.add_mount("/dev/sda", "/mnt/with\\040space")
    assert machine.usage("/dev/sda") == ["it is mounted at /mnt/with space (xfs)"]


def test_discovery_reports_identity_size_and_verdict(machine):
    machine.disk("nvme0n1", eui="0025385b71b01234", size="4096",
                 **{"device/model": "P3700", "device/serial": "S1", "device/firmware_rev": "8DV1",
                    "queue/rotational": "0", "device/numa_node": "1"})
    machine.disk("nvme1n1", eui="0025385b71b05678")
    machine.sigs["nvme1n1"] = ["xfs"]
    machine.disk("zram0", size="0")  # no size: not listed
    infos = {i.path: i for i in machine.discover()}
    assert sorted(infos) == [str(machine.dev / "nvme0n1"), str(machine.dev / "nvme1n1")]
    first = infos[str(machine.dev / "nvme0n1")]
    assert (first.id, first.model, first.serial, first.firmware, first.size_bytes) == \
        ("eui:0025385b71b01234", "P3700", "S1", "8DV1", 4096 * 512)
    assert (first.rotational, first.numa_node, first.safe, first.reasons) == (False, 1, True, [])
    assert infos[str(machine.dev / "nvme1n1")].reasons == ["carries a xfs signature"]
    assert {"path", "id", "model", "serial", "size_bytes", "safe", "reasons"} <= set(first.as_dict())


def test_flashscale_devices_json_lists_this_machine_read_only(capsys):
    assert cli.main(["devices", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert all({"path", "id", "model", "serial", "size_bytes", "safe", "reasons"} <= set(d) for d in listed)
    root = next(m for m in System().mounts() if m.mountpoint == "/")
    if not root.source.startswith("/dev/") or not os.path.exists(root.source):
        pytest.skip(f"/ is mounted from {root.source!r}, not a block device (a container?)")
    real = os.path.realpath(root.source)
    [entry] = [d for d in listed if os.path.realpath(d["path"]) == real]
    assert entry["safe"] is False
    assert "it holds the root file system, or is the disk or array member under it" in entry["reasons"]


def test_a_test_bed_names_devices_by_identity_and_resolves_them_now(tmp_path, machine):
    machine.disk("nvme0n1", eui="0025385b71b01234")
    machine.disk("nvme1n1", eui="0025385b71b05678")
    bed = tmp_path / "bed.yaml"
    bed.write_text('name: lab\ndevices:\n  - "eui:0025385b71b05678"\n  - "eui:0025385b71b01234"\n')
    loaded = TestBed.load(bed)
    assert loaded.ids == ("eui:0025385b71b05678", "eui:0025385b71b01234")
    assert [d.path for d in loaded.resolve(machine)] == [str(machine.dev / "nvme1n1"), str(machine.dev / "nvme0n1")]
    bed.write_text("devices:\n  - 0123\n")  # YAML reads this as the number 83
    with pytest.raises(ConfigError, match="not a string.*-r NAME VALUE"):
        TestBed.load(bed)
    bed.write_text('devices:\n  - "eui:0025385b71b0ffff"\n')
    with pytest.raises(RefusedError, match="no block device has identity"):
        TestBed.load(bed).resolve(machine)


def test_the_machine_probes_read_the_roots(machine, tmp_path):
    assert machine.numa_nodes() == [0]  # no node/online: a machine without NUMA
    (machine.sys / "devices" / "system" / "node").mkdir(parents=True)
    (machine.sys / "devices" / "system" / "node" / "online").write_text("0-1,3\n")
    assert machine.numa_nodes() == [0, 1, 3]
    assert machine.euid() == 0 and machine.loop_support_problem().startswith("the kernel offers no ")
    machine.add_mount("cgroup", "/sys/fs/cgroup/blkio", "cgroup", options="rw,blkio")
    assert machine.mounted("/sys/fs/cgroup/blkio").options == "rw,blkio"
    assert machine.free_bytes(tmp_path / "missing") is None and machine.free_bytes(tmp_path) > 0
    assert machine.loop_backing("/dev/loop0") is None
    assert machine.runner.run(["losetup", "--find", "--show", "/srv/a b.img"]).stdout == "/dev/loop0\n"
    assert machine.loop_backing("/dev/loop0") == "/srv/a b.img" and machine.identity_of("loop0") == "loop:/srv/a b.img"
