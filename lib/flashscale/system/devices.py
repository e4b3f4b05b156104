"""Block devices: stable identity, discovery, and why a device is in use.

A ``Device`` is a path plus the stable identity it had when flashscale took it. Names such as ``/dev/nvme3n1`` can
change across boots; identities do not. Before every destructive step the identity is read again from the path
(``flashscale.arrays.guard``); if something else now sits there, the step is refused.

Identity, strongest first::

    loop:<backing file>                  a loop device
    nullb:<configfs name>                a null_blk device made through configfs (``flashscale.system.nullblk``):
                                         the name of its configfs directory, powered on, whose index is its minor
    wwn:<device/wwid>                    SCSI / SATA World Wide Name
    nguid:<32 hex digits>                NVMe namespace globally unique identifier
    eui:<16 hex digits>                  NVMe EUI-64
    wwid:<wwid>                          NVMe namespace wwid (vendor, serial, model, namespace)
    serial:<model>:<serial>[:ns<nsid>]   model and serial number, with the NVMe namespace id
    <disk identity>:part<N>              partition N of an identified disk

``System`` is the one boundary to the machine and the only code that reads it: sysfs, ``/proc``, ``/dev`` and the
mount table, under roots that tests point at a fake tree, and ``blkid`` through the command runner. Besides devices
it answers what the rest of flashscale asks of the machine: loop devices' backing files, whether loop devices can be
made here, free space, the cgroup controllers, the NUMA nodes. It only reads; nothing here writes to a device.
"""
from __future__ import annotations

import os
import stat
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .commands import Runner
from .machine import ATTRIBUTE_BYTES, Machine, read as _read
from .usage import Usage
from ..errors import RefusedError

@dataclass(frozen=True)
class Device:
    path: str
    id: str


@dataclass(frozen=True)
class DeviceInfo:
    """What ``flashscale devices`` shows for one block device."""

    path: str
    id: str | None
    model: str | None
    serial: str | None
    firmware: str | None
    size_bytes: int
    rotational: bool | None
    numa_node: int | None
    safe: bool
    reasons: list[str]

    def as_dict(self) -> dict:
        return asdict(self)


def _hex_id(text: str | None) -> str | None:
    """An NVMe NGUID / EUI-64 as plain lower-case hex; None when absent or all zeros (the device has none)."""
    if not text:
        return None
    digits = "".join(c for c in text.lower() if c in "0123456789abcdef")
    return digits if digits.strip("0") else None


@dataclass
class System(Usage, Machine):
    """The machine as flashscale reads it. Roots can be pointed at a fake tree; ``runner`` runs ``blkid``."""

    sys: Path = Path("/sys")
    proc: Path = Path("/proc")
    dev: Path = Path("/dev")
    runner: Runner = field(default_factory=Runner)

    # ---- names and identity -------------------------------------------------------------------------------
    def node(self, name: str) -> Path:
        return self.sys / "class" / "block" / name

    def name_of(self, path: str) -> str:
        """The kernel name (``loop3``, ``nvme0n1``) behind a path, following /dev/disk/by-id links."""
        return Path(os.path.realpath(path)).name

    def majmin(self, path: str) -> str:
        """``MAJ:MIN`` of a block device path; RefusedError if it is not a block device."""
        try:
            st = os.stat(path)
        except FileNotFoundError:
            raise RefusedError(f"{path}: no such device") from None
        if not stat.S_ISBLK(st.st_mode):
            raise RefusedError(f"{path}: not a block device")
        return f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"

    def is_partition(self, name: str) -> bool:
        return (self.node(name) / "partition").exists()

    def parent_of(self, name: str) -> str | None:
        """The disk a partition belongs to, or None for a whole device."""
        return self.node(name).resolve().parent.name if self.is_partition(name) else None

    def partitions(self, name: str) -> list[str]:
        node = self.node(name)
        return sorted(p.name for p in node.iterdir() if (p / "partition").exists()) if node.is_dir() else []

    def identity_of(self, name: str) -> str | None:
        """The strongest stable identity sysfs offers for ``name``, or None when it has none."""
        node = self.node(name)
        parent = self.parent_of(name)
        if parent is not None:
            disk = self.identity_of(parent)
            return f"{disk}:part{_read(node / 'partition')}" if disk else None
        backing = self._backing_of(name)
        if backing:
            return f"loop:{backing}"
        nullb = self.nullb_name(name)
        if nullb:
            return f"nullb:{nullb}"
        for attr, prefix, clean in (("device/wwid", "wwn", str), ("nguid", "nguid", _hex_id), ("eui", "eui", _hex_id),
                                    ("wwid", "wwid", str)):
            value = _read(node / attr)
            value = clean(value) if value else None
            if value:
                return f"{prefix}:{value}"
        serial = self.serial(name)
        if serial:
            nsid = _read(node / "nsid")
            return ":".join(["serial", self.model(name) or "unknown-model", serial] + ([f"ns{nsid}"] if nsid else []))
        return None

    def block_major(self, driver: str) -> int | None:
        """The major number the kernel gave the block driver ``driver`` (``/proc/devices``), None if it has none."""
        text = (self.proc / "devices").read_text() if (self.proc / "devices").exists() else ""
        _, _, block = text.partition("Block devices:")
        numbers = [line.split()[0] for line in block.splitlines() if line.split()[1:] == [driver]]
        return int(numbers[0]) if numbers else None

    def nullb_name(self, name: str) -> str | None:
        """The configfs name of the null_blk device ``name``: the directory under ``<configfs>/nullb`` that is powered
        on and whose ``index`` is the device's minor number (null_blk numbers its disks by index, on its own major).
        None for any other device, and for a null_blk device made by the module's parameters (not in configfs)."""
        majmin = _read(self.node(name) / "dev")
        major = self.block_major("nullb")
        if not majmin or major is None or majmin.split(":")[0] != str(major):
            return None
        root = self.sys / "kernel" / "config" / "nullb"
        for folder in sorted(root.iterdir()) if root.is_dir() else []:
            if _read(folder / "power") == "1" and _read(folder / "index") == majmin.split(":")[1]:
                return folder.name
        return None

    def identify(self, path: str) -> Device:
        """The device at ``path`` with its identity; RefusedError if it is not a block device or has none."""
        self.majmin(path)
        ident = self.identity_of(self.name_of(path))
        if ident is None:
            raise RefusedError(f"{path}: no stable identity found (no backing file, null_blk configfs name, WWN, "
                               "NGUID, EUI-64 or serial)")
        return Device(path, ident)

    def find(self, ident: str) -> Device:
        """The block device that carries identity ``ident`` now; RefusedError if none or more than one does."""
        names = [n for n in self.block_names() if self.identity_of(n) == ident]
        if not names:
            raise RefusedError(f"no block device has identity {ident!r}")
        if len(names) > 1:
            raise RefusedError(f"identity {ident!r} is ambiguous: carried by {', '.join(names)}")
        return Device(str(self.dev / names[0]), ident)

    def resolve(self, name_or_id: str) -> Device:
        """A path (``/dev/...``) or an identity, as the device it names now."""
        return self.identify(name_or_id) if name_or_id.startswith("/") else self.find(name_or_id)

    # ---- descriptive attributes ---------------------------------------------------------------------------
    def model(self, name: str) -> str | None:
        node = self.node(name)
        model = _read(node / "device" / "model")
        vendor = _read(node / "device" / "vendor")
        return " ".join(filter(None, (vendor, model))) if model else None  # virtio: vendor is a PCI id

    def serial(self, name: str) -> str | None:
        node = self.node(name)
        text = _read(node / "serial") or _read(node / "device" / "serial")
        if text is None:
            try:
                vpd = (node / "device" / "vpd_pg80").read_bytes()  # SCSI unit serial number page: 4-byte header
                text = vpd[4:4 + vpd[3]].decode(errors="replace").strip() or None
            except (FileNotFoundError, IndexError, OSError):
                text = None
        return text

    def describe(self, name: str) -> DeviceInfo:
        node = self.node(name)
        disk = self.parent_of(name) or name
        numa = _read(node / "device" / "numa_node") or _read(node / "device" / "device" / "numa_node")
        rotational = _read(self.node(disk) / "queue" / "rotational")
        ident = self.identity_of(name)
        path = str(self.dev / name)
        reasons = ([] if ident else ["no stable identity"]) + self.usage(path)
        if not reasons:
            reasons = [f"carries a {s} signature" for s in self.signatures(path)]
        return DeviceInfo(path=path, id=ident, model=self.model(disk), serial=self.serial(disk),
                          firmware=self._firmware_rev(disk),
                          size_bytes=int(_read(node / "size") or 0) * 512,
                          rotational=None if rotational is None else rotational == "1",
                          numa_node=int(numa) if numa and int(numa) >= 0 else None,
                          safe=not reasons, reasons=reasons)

    def _firmware_rev(self, disk: str) -> str | None:
        """What the device behind ``disk`` says its firmware is: NVMe's and SATA's ``firmware_rev``, SCSI's
        ``rev`` (each read bounded); None where it says nothing."""
        device = self.node(disk) / "device"
        return _read(device / "firmware_rev", ATTRIBUTE_BYTES) or _read(device / "rev", ATTRIBUTE_BYTES)

    def firmware(self, name: str) -> str:
        """The firmware of the device under ``name`` as campaign.json records it: its revision; ``none: ...`` for
        a device the kernel makes (loop, null_blk: no ``device`` behind it); ``unknown: ...`` for a device that
        states none (a virtio disk)."""
        disk = self.parent_of(name) or name
        if not (self.node(disk) / "device").exists():
            return f"none: {disk} is made by the kernel (a loop or null_blk device), no hardware behind it"
        found = self._firmware_rev(disk)
        return found[:64] if found else f"unknown: {disk}'s device states none (no firmware_rev, no rev)"

    def block_names(self) -> list[str]:
        """Every whole device with a size (unattached loop devices have none), then its partitions."""
        names = []
        for entry in sorted((self.sys / "block").iterdir()):
            if int(_read(entry / "size") or 0) > 0:
                names += [entry.name, *self.partitions(entry.name)]
        return names

    def discover(self) -> list[DeviceInfo]:
        return [self.describe(name) for name in self.block_names()]

    def signatures(self, path: str) -> list[str]:
        """File-system, RAID and partition-table signatures ``blkid -p`` finds on ``path`` (empty: none)."""
        done = self.runner.run(["blkid", "-p", "-o", "export", path], ok_codes=(0, 2, 8))
        if done.returncode == 2:
            return []
        if done.returncode == 8:
            return ["ambivalent (several)"]
        tags = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
        found = [tags[key] for key in ("TYPE", "PTTYPE") if key in tags]
        return found or [f"unnamed ({tags.get('USAGE', 'unknown usage')})"]

    def exists(self, path: str) -> bool:
        return os.path.lexists(path)

    # ---- loop devices -----------------------------------------------------------------------------------------
    def _backing_of(self, name: str) -> str | None:
        try:
            return (self.node(name) / "loop" / "backing_file").read_text().strip() or None
        except (FileNotFoundError, NotADirectoryError):
            return None

    def loop_backing(self, path: str) -> str | None:
        """The file behind a loop device, or None if ``path`` is not an attached loop device."""
        return self._backing_of(self.name_of(path))

    def block_facts(self, name: str) -> dict:
        """What seeds 000 and 001 noted by hand for a device: its NUMA node, I/O scheduler (the one in use), and
        the CPUs each interrupt of an NVMe controller may run on (``{irq: "0-3"}``, empty elsewhere)."""
        disk = self.parent_of(name) or name
        node = self.node(disk)
        numa = _read(node / "device" / "numa_node") or _read(node / "device" / "device" / "numa_node")
        scheduler = _read(node / "queue" / "scheduler") or ""
        chosen = next((w[1:-1] for w in scheduler.split() if w.startswith("[")), scheduler or None)
        irqs = node / "device" / "device" / "msi_irqs"
        affinity = {p.name: _read(self.proc / "irq" / p.name / "smp_affinity_list")
                    for p in sorted(irqs.iterdir())} if disk.startswith("nvme") and irqs.is_dir() else {}
        return {"device": name, "numa_node": int(numa) if numa and int(numa) >= 0 else None,
                "scheduler": chosen, "irq_affinity": affinity}
