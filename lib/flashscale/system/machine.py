"""What the rest of flashscale asks of the machine besides its block devices: who we are, whether loop devices can
be made, free space, cgroup controllers, NUMA nodes, processes, network links and namespaces, and the counters of
every device and CPU. ``Machine`` is a part of ``devices.System`` (the one reader of the machine), kept apart so that
each file stays about one thing; its methods read under ``System``'s roots (``sys``, ``proc``, ``dev``).
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

NETNS_DIR = Path("/run/netns")  # where ``ip netns add`` names a network namespace
ATTRIBUTE_BYTES = 4096  # the most of one sysfs attribute read where a fact is recorded (sysfs gives a page at most)
CPUFREQ = "cpufreq/scaling_governor"


def read(path: Path, most: int | None = None) -> str | None:
    """The text of ``path``, its whitespace made single spaces; None where it is absent, empty or unreadable.
    ``most``: read no more than this many bytes (a fact recorded from a file that could be anything)."""
    try:
        if most is None:
            data = path.read_bytes()
        else:
            with open(path, "rb") as fh:
                data = fh.read(most)
        text = data.decode(errors="replace").strip()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError, PermissionError, OSError):
        return None
    return " ".join(text.split()) or None


def _ranges(numbers: list[int]) -> str:
    """``[0, 1, 2, 3, 6]`` as ``0-3,6``."""
    spans: list[list[int]] = []
    for n in sorted(numbers):
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return ",".join(f"{lo}-{hi}" if hi > lo else f"{lo}" for lo, hi in spans)


class Machine:
    """Readers of the machine that concern no one block device (mixed into ``devices.System``)."""

    # ---- what this machine offers -------------------------------------------------------------------------
    def euid(self) -> int:
        """The effective user id of this process, from /proc/self/status (``os.geteuid`` where it is absent)."""
        try:
            lines = (self.proc / "self" / "status").read_text().splitlines()
        except FileNotFoundError:
            return os.geteuid()
        uid = next((line.split()[2] for line in lines if line.startswith("Uid:")), None)
        return os.geteuid() if uid is None else int(uid)

    def loop_support_problem(self) -> str | None:
        """Why loop devices cannot be made here (not root, no losetup, no loop-control), or None when they can."""
        if self.euid() != 0:
            return "flashscale is not running as root"
        if self.runner.which("losetup") is None:
            return "losetup is not installed"
        if not (self.dev / "loop-control").exists():
            return f"the kernel offers no {self.dev / 'loop-control'}"
        return None

    def free_bytes(self, folder: Path) -> int | None:
        """Free space in bytes of the file system holding ``folder``; None when it is not a directory."""
        return shutil.disk_usage(folder).free if Path(folder).is_dir() else None

    def numa_nodes(self) -> list[int]:
        """The NUMA nodes online (``0-1,3`` in sysfs), ``[0]`` on a machine without NUMA."""
        online = read(self.sys / "devices" / "system" / "node" / "online")
        nodes = []
        for part in online.split(",") if online else ["0"]:
            lo, _, hi = part.partition("-")
            nodes += list(range(int(lo), int(hi or lo) + 1))
        return nodes

    def cgroup_controllers(self, mountpoint: str | Path) -> set[str]:
        """The controllers a cgroup v2 hierarchy offers (its ``cgroup.controllers``); empty when it has none."""
        return set((read(Path(mountpoint) / "cgroup.controllers") or "").split())

    # ---- processes and the network (``flashscale.system.processes``, ``flashscale.system.netns``) ----------------
    def process_start(self, pid: int) -> int | None:
        """When process ``pid`` started, in clock ticks since boot (field 22 of /proc/<pid>/stat): with the pid, what
        names one process for good. None when there is no such process, or it has exited (a zombie)."""
        text = read(self.proc / str(int(pid)) / "stat")
        fields = text.rsplit(")", 1)[-1].split() if text else []  # after the command name, which may hold spaces
        return None if len(fields) < 20 or fields[0] in ("Z", "X") else int(fields[19])

    def net_links(self) -> dict[str, int]:
        """The network links of this namespace, name -> ifindex (/sys/class/net)."""
        folder = self.sys / "class" / "net"
        links = {p.name: read(p / "ifindex") for p in folder.iterdir()} if folder.is_dir() else {}
        return {name: int(index) for name, index in links.items() if index}

    def link_bytes(self, name: str) -> int | None:
        """Bytes received plus sent on link ``name`` so far; None when there is no such link."""
        stats = self.sys / "class" / "net" / name / "statistics"
        rx, tx = read(stats / "rx_bytes"), read(stats / "tx_bytes")
        return None if rx is None or tx is None else int(rx) + int(tx)

    def netns_names(self) -> list[str]:
        """The named network namespaces (``ip netns``: /run/netns)."""
        return sorted(p.name for p in NETNS_DIR.iterdir()) if NETNS_DIR.is_dir() else []

    def ipv4_networks(self) -> list[tuple[str, str]]:
        """Every IPv4 network this namespace has an address in or a route to (CIDR), default route excluded, each
        with the link it is on ("" for a route without one)."""
        addrs = json.loads(self.runner.run(["ip", "-j", "-4", "addr", "show"]).stdout or "[]")
        routes = json.loads(self.runner.run(["ip", "-j", "-4", "route", "show", "table", "all"]).stdout or "[]")
        found = [(f"{a['local']}/{a['prefixlen']}", link.get("ifname", "")) for link in addrs
                 for a in link.get("addr_info", [])]
        return found + [(r["dst"], r.get("dev", "")) for r in routes if r.get("dst") not in (None, "default")]

    def pcie_link(self, name: str) -> tuple[float, int] | None:
        """The PCIe link of block device ``name``: (GT/s, lanes) of the first device above it that has one
        (``current_link_speed`` "8.0 GT/s PCIe", ``current_link_width``: an NVMe's own function, a SATA disk's HBA);
        None for a device with none (a loop device, a virtual disk without PCIe)."""
        folder = self.sys / "block" / name / "device"
        if not folder.exists():
            return None
        folder = folder.resolve()
        while folder != folder.parent and folder.name != "devices":
            speed, width = read(folder / "current_link_speed"), read(folder / "current_link_width")
            if speed and width:
                try:
                    return float(speed.split()[0]), int(width)
                except ValueError:
                    return None
            folder = folder.parent
        return None

    # ---- what every CPU is doing (``flashscale.system.monitor``) ----------------------------------------------
    def diskstats(self) -> dict[str, tuple[int, ...]]:
        """/proc/diskstats: each device's counters after its name (reads, reads merged, sectors read, ms reading,
        writes, writes merged, sectors written, ms writing, in flight, io_ticks ms, weighted ms, ...)."""
        found = {}
        for line in (self.proc / "diskstats").read_text().splitlines():
            fields = line.split()
            if len(fields) >= 14:
                found[fields[2]] = tuple(int(v) for v in fields[3:])
        return found

    def cpu_times(self) -> dict[str, tuple[int, ...]]:
        """/proc/stat's ``cpu`` (all CPUs) and ``cpuN`` lines: user, nice, system, idle, iowait, irq, softirq,
        steal, in clock ticks."""
        return {f[0]: tuple(int(v) for v in f[1:9]) for f in map(str.split, (self.proc / "stat").read_text()
                                                                   .splitlines()) if f and f[0].startswith("cpu")}

    def governor(self) -> str:
        """The CPUs' frequency governor as campaign.json records it: ``performance``; where CPUs differ, each
        governor with its CPUs (``performance (cpu 0-3); powersave (cpu 4-7)``); where no CPU has
        ``cpufreq/scaling_governor`` (a VM, cpufreq off), ``unknown: ...`` saying why. Each read bounded."""
        cpus = self.sys / "devices" / "system" / "cpu"
        found = {int(p.name[3:]): read(p / CPUFREQ, ATTRIBUTE_BYTES)
                 for p in (cpus.glob("cpu*") if cpus.is_dir() else ()) if p.name[3:].isdigit()}
        if not found:
            return f"unknown: {cpus} lists no CPU"
        if not any(found.values()):
            return (f"unknown: no CPU has {CPUFREQ} under {cpus} (no frequency-scaling driver: usual in a VM, or "
                    "cpufreq off)")
        groups: dict[str, list[int]] = {}
        for cpu, governor in found.items():
            groups.setdefault((governor or "unknown")[:64], []).append(cpu)
        if len(groups) == 1:
            return next(iter(groups))
        return "; ".join(f"{name} (cpu {_ranges(numbers)})" for name, numbers in
                         sorted(groups.items(), key=lambda g: min(g[1])))

    def cpu_facts(self) -> dict:
        """Each CPU's frequency governor, and the idle states (C-states) the kernel offers and whether each is
        disabled (``cpu0``'s; None where the machine exposes none)."""
        cpus = self.sys / "devices" / "system" / "cpu"
        governors = {p.name: read(p / "cpufreq" / "scaling_governor") for p in sorted(cpus.glob("cpu[0-9]*"))}
        states = sorted((cpus / "cpu0" / "cpuidle").glob("state*"))
        return {"governors": governors, "cpuidle_driver": read(cpus / "cpuidle" / "current_driver"),
                "c_states": [{"name": read(s / "name"), "disabled": read(s / "disable") == "1",
                              "latency_us": read(s / "latency")} for s in states] or None}
