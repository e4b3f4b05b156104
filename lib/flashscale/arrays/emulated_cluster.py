"""The emulated cluster: H hosts, each a network namespace with its own capped emulated array and a fio server.

Host ``i`` gets an ``EmulatedArray`` of N loop devices capped at the array's read and write caps and ``fio --server``
on its address, inside its namespace. Where its data lives is the ``storage``:

- ``local``: a ``jbod`` (one xfs per device) mounted at mount points of its own in the root namespace (the
  namespaces share the machine's mounts, so each host's job file names its own); the server runs inside its
  array's throttled cgroup, so the jobs it forks are capped. The data never crosses the host's link: the truth is
  N x cap per host, whatever the link.
- ``nbd``: each device is exported by an NBD server (``qemu-nbd``, in the root namespace, inside the array's
  throttled cgroup) on the root end of the host's veth, and the host's jobs use fio's nbd engine: every byte
  crosses the host's link, as it crosses a storage network to NVMe-oF targets or a parallel file system's
  servers. The truth per host is the smaller of N x cap and what the link carries: with ``link_bps`` (tc tbf on
  each veth, counting frames), ``netns.payload_bps(link_bps)`` bytes of data per second.

  The server must bypass the page cache (``--cache=none`` is O_DIRECT), or the truth check fails: nbdkit's file
  plugin, whose ``cache=none`` only evicts pages after buffered I/O, served reads at 278 MB/s from two devices
  capped at 100 MB/s each, and writes at 103 MB/s on one; qemu-nbd with O_DIRECT, 101 MB/s both ways.

Everything is torn down in reverse order of its making, on success, error and Ctrl-C: the servers (their process
groups: fio's and qemu-nbd's), each host's layout and array, then the namespaces, veths and qdiscs.
"""
from __future__ import annotations

import secrets
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from . import layouts
from .emulated import ArraySpec, EmulatedArray
from ..errors import ConfigError, UnsupportedError
from ..system import netns, processes
from ..system.commands import Runner
from ..system.devices import System
from ..system.teardown import Built, Teardown, manifest_dir

PORT = 8765
NBD_PORT = 10809  # NBD's own port; device d of a host is exported on NBD_PORT + d at the root end of its link
NBD_CLIENTS = 256  # connections one export takes at once: fio's nbd engine opens one per job
STORAGE = {"local": "jbod", "nbd": "nbd"}  # where a host's data lives -> the layout its rows name
NBD_READY_S = 10.0
UNCAPPED_LINK_BPS = 4_000_000_000  # a link "uncapped" while the harness is measured: tbf's 32-bit rate, far above it


@dataclass
class EmulatedHost:
    """One host of the emulated cluster: its network identity, its array and layout, and its fio server."""

    host: netns.Host
    array: EmulatedArray
    layout: str  # STORAGE's value: "jbod" (local xfs) or "nbd" (the devices over the link)
    targets: tuple[str, ...]  # what its jobs name: mount points, or nbd:// URIs
    server: processes.Process
    exports: tuple[processes.Process, ...] = ()  # its devices' NBD servers (``nbd``)
    port: int = PORT

    @property
    def name(self) -> str:
        return self.host.name

    @property
    def devices(self) -> int:
        return len(self.array.devices)


class EmulatedCluster(Built):
    """Context manager: ``with EmulatedCluster(2, ArraySpec(devices=2), log_dir=...) as cluster: cluster.hosts``."""

    def __init__(self, hosts: int, array: ArraySpec, *, log_dir: Path, link_bps: int | None = None,
                 subnet: str = netns.SUBNET, storage: str = "local", runner: Runner | None = None,
                 system: System | None = None, options: layouts.Options = layouts.Options()):
        if isinstance(hosts, bool) or not isinstance(hosts, int) or hosts < 1:
            raise ConfigError(f"hosts={hosts!r} must be a whole number >= 1")
        if storage not in STORAGE:
            raise ConfigError(f"storage={storage!r} must be one of {', '.join(STORAGE)}")
        array.refuse_cap_scale("cluster")  # every host's devices are capped alike: no CAP_SCALE
        super().__init__(runner, system)
        self.count, self.spec, self.link_bps, self.subnet, self.storage = hosts, array, link_bps, subnet, storage
        self.log_dir, self.options = Path(log_dir), options
        self.hosts: list[EmulatedHost] = []
        self._processes: list[processes.Process] = []
        self._stack = ExitStack()

    def _teardown(self, label: str) -> Teardown:
        teardown = Teardown(manifest_dir() / f"flashscale-cluster-{secrets.token_hex(4)}-{label}.json",
                            self.runner, self.system)
        self._stack.callback(teardown.close)
        return teardown

    def _build(self) -> None:
        network = netns.make_hosts(self.count, self._teardown("network"), self.runner, self.system,
                                   subnet=self.subnet, link_bps=self.link_bps)
        built = []
        for host in network:
            array = self._stack.enter_context(EmulatedArray(self.spec, self.runner, self.system))
            targets = ()
            if self.storage == "local":
                targets = layouts.build("jbod", array.devices, self.runner, self._teardown(f"{host.name}-layout"),
                                        confirm=[d.id for d in array.devices],
                                        claimed=[d.path for d in array.devices], options=self.options,
                                        system=self.system).targets
            built.append((host, array, targets))
        self._stack.callback(self._collect_exits)  # once the servers' teardown below has stopped them
        servers = self._teardown("servers")  # last made, first undone: nothing holds the mounts when they go
        self.log_dir.mkdir(parents=True, exist_ok=True)
        for host, array, targets in built:
            exports = self._export(host, array, servers) if self.storage == "nbd" else []
            if exports:
                targets = [f"nbd://{host.gateway}:{NBD_PORT + index}/" for index in range(len(exports))]
            local = array.cgroup_procs if self.storage == "local" else ()  # over nbd, qemu-nbd does the device I/O
            server = self._start([*host.exec_prefix(), "fio", f"--server={host.address},{PORT}"], servers,
                                 f"server-{host.name}", local)
            self.hosts.append(EmulatedHost(host, array, STORAGE[self.storage], tuple(targets), server,
                                           tuple(exports)))

    def _export(self, host: netns.Host, array: EmulatedArray, servers: Teardown) -> list[processes.Process]:
        """Each of ``host``'s devices exported by qemu-nbd at the root end of its link, in the array's capped cgroup
        (the server's direct reads and writes are the device I/O), device d on port NBD_PORT + d. The server writes
        its pid file once it listens, so the exports answer when this returns."""
        exports = []
        for index, device in enumerate(array.devices):
            name = f"nbd-{host.name}-d{index}"
            pidfile = self.log_dir / f"{name}.pid"
            pidfile.unlink(missing_ok=True)
            exports.append(self._start(["qemu-nbd", "--format=raw", "--cache=none", "--aio=native", "--persistent",
                                        f"--shared={NBD_CLIENTS}", f"--bind={host.gateway}",
                                        f"--port={NBD_PORT + index}", f"--pid-file={pidfile}", device.path],
                                       servers, name, array.cgroup_procs))
            deadline = time.monotonic() + NBD_READY_S
            while not pidfile.exists():
                if not exports[-1].running() or time.monotonic() > deadline:
                    said = exports[-1].output().strip()[-300:] or "it said nothing"
                    raise UnsupportedError(f"qemu-nbd did not start serving {device.path} on {host.gateway}:"
                                           f"{NBD_PORT + index} for {host.name}: {said}")
                time.sleep(0.05)
        return exports

    def _start(self, argv: list[str], servers: Teardown, name: str, cgroup_procs) -> processes.Process:
        """A server of ours, recorded in ``servers`` (whose undo stops it) and kept, so ``close`` collects its exit."""
        process = processes.start(argv, servers, self.log_dir / f"{name}.log", cgroup_procs=cgroup_procs,
                                  system=self.system)
        self._processes.append(process)
        return process

    @property
    def network_bw_bytes(self) -> float | None:
        """The data one host's link carries per second in each direction, when its data crosses it (``nbd``)
        under a cap; None when nothing binds there (local storage, or an uncapped link)."""
        if self.storage != "nbd" or self.link_bps is None:
            return None
        return netns.payload_bps(self.link_bps)

    @property
    def truth_bw_bytes(self) -> dict[str, float]:
        """What the cluster can deliver, per direction: hosts x the smaller of devices x cap and the link."""
        per_host = {"read": self.spec.devices * self.spec.read_bps, "write": self.spec.devices * self.spec.write_bps}
        link = self.network_bw_bytes
        return {d: self.count * (min(v, link) if link else v) for d, v in per_host.items()}

    def lift(self) -> None:
        """Lift every cap (each host's devices, and its link when capped), to measure what the harness carries
        (``measure.harness``); ``hold`` caps them again."""
        for host in self.hosts:
            host.array.lift()
            if self.link_bps:
                netns.set_link_rate(host.host, UNCAPPED_LINK_BPS, self.runner)

    def hold(self, spec: ArraySpec, link_bps: int | None) -> None:
        """Hold every host's devices at ``spec``'s caps and its link at ``link_bps`` (when it was capped) from now
        on: the caps asked, or lowered to what the harness carried."""
        for host in self.hosts:
            host.array.recap(spec)
            if self.link_bps:
                netns.set_link_rate(host.host, int(link_bps), self.runner)
        self.spec, self.link_bps = spec, link_bps if self.link_bps else None

    def _collect_exits(self) -> None:
        """Collect the exit of every server (our children) that has ended, stopped or not: a zombie still counts in
        its array's cgroup, which could then not be removed."""
        for process in self._processes:
            process.popen.poll()

    def close(self) -> None:
        """Undo everything, last made first: the servers' teardown stops each server's process group, their exits
        are collected, then go the layouts, the arrays and the network."""
        self._stack.close()
