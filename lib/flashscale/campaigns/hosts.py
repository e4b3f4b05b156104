"""The places a cluster campaign runs: its hosts, behind the interface every place implements
(``campaigns.place.Place``), so ``cluster.run`` picks one here (``choose``) and asks only through it.

    EmulatedHosts   max(HOSTS) emulated hosts (``arrays.emulated_cluster.EmulatedCluster``), made for each storage in turn
                    (``local`` first: one host alone on it is every prediction's baseline), each measured with every
                    cap lifted by the harness first (its truth, ``measure.harness.hold_cluster``), undone after
    ServingHosts    real hosts each serving fio itself (``REMOTE_HOSTS`` without ``KNOWN_HOSTS``, started by hand):
                    inside the mount point each names, and its local directory when every host names one
    HostsOverSsh    real hosts reached over SSH (``KNOWN_HOSTS``): ``campaigns.over_ssh`` builds each layout on them
                    through the same guard, serves fio on their loopback and undoes everything

Each host of a layout is a ``Target`` for the cluster's sweep (``cluster.run``'s): where its fio server is, what
its jobs name, its devices, caps and link.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from ..arrays.emulated_cluster import STORAGE, EmulatedCluster
from ..arrays.emulated import cap_fit_policy
from ..errors import ConfigError
from ..measure import harness
from ..measure.fio_client import Endpoint
from ..measure.units import rate, size
from ..system import netns
from ..system.commands import Runner
from . import over_ssh
from .place import Place, caps_words

LOCAL, MOUNTED = "local", "mounted"  # a host's own local directory, and the mount point it names


@dataclass(frozen=True)
class Target:
    """One host as the sweep sees it: where its server is, what its jobs name, its devices, caps and link."""

    endpoint: Endpoint
    layout: str
    targets: tuple[str, ...]
    devices: int
    caps: dict
    link: str | None = None  # the emulated host's link, whose bytes are counted
    network_bw_bytes: float | None = None  # the data per second its link carries, when this layout's data crosses it
    backend: str = "loop"
    asked: dict = field(default_factory=dict)  # the caps per rw asked, where ``caps`` were lowered to fit the harness
    carried: dict = field(default_factory=dict)  # direction -> what the host carried with its caps lifted


class Hosts(Place):
    """A cluster's hosts: every host's devices capped alike (no ``CAP_SCALE``), its layouts its own (storages, or
    what is built and named on real hosts), each measured on 1..H hosts by the cluster's sweep."""

    def __init__(self, runner: Runner, spec):
        super().__init__(runner, spec.array, spec.options)
        self.spec = spec  # the cluster's spec (``cluster.ClusterSpec``): its hosts, storages, links, SSH settings

    def check(self, names: Sequence[str] = (), workloads: Sequence = ()) -> None:
        self.array.refuse_cap_scale("cluster")

    def build(self, name, teardown):
        raise ConfigError("a cluster's hosts are built by their own place (EmulatedCluster, over SSH)")


class EmulatedHosts(Hosts):
    """Emulated hosts, each a network namespace with its own capped array and fio server."""

    backend = "loop"

    def check(self, names: Sequence[str] = (), workloads: Sequence = ()) -> None:
        """Also ``SUBNET``: a private range no address or route of this machine is in (reading only)."""
        super().check(names, workloads)
        netns.check_free(self.spec.subnet, self.system)

    def words(self) -> str:
        return (f"{max(self.spec.hosts)} emulated host(s), each {self.array.devices} emulated device(s) (capped loop "
                f"devices), {caps_words(self.array)}")

    def creates(self) -> list[str]:
        link = f", its link capped at {rate(self.spec.link_bps)} of frames (tc tbf)" if self.spec.link_bps else ""
        return [f"{max(self.spec.hosts)} emulated host(s) in {self.spec.subnet}, made anew for each storage: each a "
                f"network namespace with a veth link{link}, {self.array.devices} loop device(s) of "
                f"{size(self.array.device_size)} held at {caps_words(self.array)} (a cgroup), and a fio server"]

    def commands(self, todo: Sequence[str]) -> list[str]:
        return [f"# storage {storage} ({STORAGE[storage]}): the hosts measured uncapped, then fio --client to each "
                f"host's server, on {', '.join(map(str, self.spec.hosts))} host(s) at once" for storage in todo]

    def layouts(self, names: Sequence[str]) -> tuple[list[str], list[str]]:
        """Each storage asked for, the hosts' own (local) first: the baseline of every prediction."""
        return sorted(self.spec.storage, key=lambda s: s != LOCAL), []

    def run(self, todo: Sequence[str], sweep) -> list[str]:
        """Each storage on freshly made hosts, measured uncapped first and held to what they carry; what the
        notes say of the links."""
        for storage in todo:
            with EmulatedCluster(max(self.spec.hosts), self.array, log_dir=sweep.directory / "servers" / storage,
                                 runner=self.runner, link_bps=self.spec.link_bps, subnet=self.spec.subnet,
                                 storage=storage) as emulated:
                caps, carried, said = harness.hold_cluster(emulated, self.spec.sweep,
                                                           cap_fit_policy(self.array.cap_fit), sweep.directory,
                                                           self.runner)
                sweep.notes += said
                sweep.run([Target(Endpoint(h.name, h.host.address, h.port), h.layout, h.targets, h.devices, caps,
                                  h.host.link, emulated.network_bw_bytes, asked=self.array.rw_caps(),
                                  carried={d: by_host[h.name] for d, by_host in carried.items()})
                           for h in emulated.hosts])
        return self.link_notes()

    def link_notes(self) -> list[str]:
        """What the report says of the links capped (``LINK_BPS``), per storage measured."""
        if self.spec.link_bps is None:
            return []
        notes = [f"Each host's link was capped at {rate(self.spec.link_bps)} of frames (tc tbf), which carry "
                 f"{rate(netns.payload_bps(self.spec.link_bps))} of data at MTU {netns.MTU}."]
        if "nbd" in self.spec.storage:
            notes.append("Over nbd every byte crosses the host's link, so the truth per host is the smaller of its "
                         "devices x cap and that.")
        if LOCAL in self.spec.storage:
            notes.append(f"On local storage ({STORAGE[LOCAL]}) the data stays on each host's devices: fio's "
                         "client/server protocol carries only commands and results over the link (link_bytes says "
                         "how much crossed), so the link cap does not bind there.")
        return notes


class ServingHosts(Hosts):
    """Real hosts each running its own ``fio --server`` (started by hand): measured inside the mount point each
    names (``mounted``), and its local directory (``local``) when every host names one; nothing built."""

    backend = "remote"

    def words(self) -> str:
        return f"{len(self.spec.remote)} real host(s) serving fio themselves, inside the directories they name"

    def commands(self, todo: Sequence[str]) -> list[str]:
        return [f"# layout {layout}: fio --client={h.address},{h.port} inside "
                f"{h.local_dir if layout == LOCAL else h.mount_dir} (a directory of ours, removed after)"
                for layout in todo for h in self.spec.remote]

    def layouts(self, names: Sequence[str]) -> tuple[list[str], list[str]]:
        return over_ssh.order(self.spec), []

    def run(self, todo: Sequence[str], sweep) -> list[str]:
        for layout in todo:
            sweep.run([Target(Endpoint(h.name, h.address, h.port), layout,
                              (h.local_dir if layout == LOCAL else h.mount_dir,), h.devices, {},
                              network_bw_bytes=h.link_bps if layout == MOUNTED else None, backend=self.backend)
                       for h in self.spec.remote])
        return []


class HostsOverSsh(Hosts):
    """Real hosts reached over SSH: each layout built on them through the same guard, undone (``over_ssh``)."""

    backend = "remote"

    def words(self) -> str:
        return f"{len(self.spec.remote)} real host(s) over SSH"

    def creates(self) -> list[str]:
        return [f"on {h.name} ({h.user}@{h.address}, ssh port {h.ssh_port}): flashscale shipped to a root-only "
                "folder, a fio server on a unix socket forwarded by the connection" for h in self.spec.remote]

    def commands(self, todo: Sequence[str]) -> list[str]:
        built = [f"# layout {layout}: built on each host's devices of {self.spec.testbed} through the guard, swept, "
                 "torn down" for layout in todo if layout in self.spec.layouts]
        return built + [f"# layout {layout}: a directory of ours in each host's {layout} directory"
                        for layout in todo if layout not in self.spec.layouts]

    def layouts(self, names: Sequence[str]) -> tuple[list[str], list[str]]:
        return over_ssh.order(self.spec), []

    def run(self, todo: Sequence[str], sweep) -> list[str]:
        return over_ssh.run(self.spec, sweep.directory, self.runner, sweep.version, sweep.run_served)


def choose(spec, runner: Runner) -> Hosts:
    """The place a cluster campaign runs, decided here once: hosts over SSH (``KNOWN_HOSTS``), real hosts serving
    fio themselves (``REMOTE_HOSTS``), else emulated hosts."""
    if spec.known_hosts:
        return HostsOverSsh(runner, spec)
    return ServingHosts(runner, spec) if spec.remote else EmulatedHosts(runner, spec)
