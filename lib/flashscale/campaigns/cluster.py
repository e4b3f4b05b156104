"""A cluster campaign: the same sweep on 1..H hosts at once, one row per host and point and one for the cluster.

    spec = ClusterSpec.from_parameters(CAMPAIGN="cluster", HOSTS=[1, 2], DEVICES=2, ...)
    result = run(spec)          # result.table, result.notes, result.directory

Emulated (the default, ``hosts.EmulatedHosts``): max(HOSTS) hosts, each a network namespace with its own capped array
and fio server, made for each storage in ``STORAGE``: ``local`` (layout ``jbod``; truth hosts x devices x cap) and
``nbd`` (layout ``nbd``: every byte crosses the host's link, ``LINK_BPS`` of frames, which the truth counts). The
network storage's tax is against the local one (``analysis.cluster_numbers.tax``), measured first.

Predicted before measuring (``hosts.state``): before each host count of each storage is measured, what the cluster
and each host should deliver, from one host measured alone on local storage, appended to ``predictions.csv``
(``result.predictions``). Real hosts (``hosts.HostsOverSsh``, ``hosts.ServingHosts``): over SSH (``KNOWN_HOSTS``;
``REMOTE_HOSTS`` or an Ansible ``INVENTORY``'s ``HOST_GROUP``) each of ``LAYOUTS`` is built on the devices ``TESTBED``
names and ``CONFIRM`` confirms, through the same guard; without SSH each host serves fio itself and is measured in
the directories it names, where anyone who reaches its port can run any job as root: prefer SSH.

Where it runs is a place (``campaigns.hosts``), picked once by ``hosts.choose`` and run by every campaign's loop
(``campaign.run_at``, ``measure.recorder``, fio run on the hosts by ``measure.fio_client.OnHosts``, ``HOSTS`` one more
axis): ``RESUME`` after a crash or ``kill -9`` (what the dead run left here and on the hosts undone first), the
folder's lock, ``PRECISION`` and ``BUILDS`` as every campaign has them; ``BATCH_REPS``, ``BRACKET`` and
``STEADY_ROUNDS`` are refused, naming why.

Rows: ``host`` is the host's name, or ``all`` for the cluster's own aggregate (``measure.fio_client.aggregate``);
``hosts`` how many hosts ran the point; ``status`` ``ok`` or ``failed``, with ``error`` saying why. A host that fails is
probed again; one that no longer answers is recorded as failed, with the reason, at every later point.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from ..arrays.emulated_cluster import STORAGE
from ..arrays.emulated import ArraySpec
from ..arrays.layouts import Options
from ..analysis.significance import DEFAULT_MARGIN
from . import campaign, over_ssh as remote, parameters
from .hosts import Target, choose as choose_place, state  # noqa: F401 (a cluster's hosts and predictions)
from ..errors import ConfigError, RefusedError
from ..measure import fio_client as fio_cluster
from ..measure.fio_client import ALL  # noqa: F401 (the cluster's own rows)
from ..measure.results import CampaignResult
from ..measure.sweep import Sweep
from ..system.commands import Runner
from ..system.ssh import host_names
from ..system.netns import SUBNET
REMOTE_KEYS = ("name", "address", "port", "mount_dir", "devices", "local_dir", "link_bps", "ssh_port", "user")
REFUSED_ON_REMOTE = ("device", "devices_path", "layout", "erase", "testbed", "confirm")


@dataclass(frozen=True)
class RemoteHost:
    """A real host: reached over SSH (``ssh_port``, ``user``) when the campaign gives ``KNOWN_HOSTS``, else its own
    ``fio --server`` at ``port``, measured inside ``mount_dir`` only."""

    name: str
    address: str
    mount_dir: str | None = None
    port: int = fio_cluster.PORT
    devices: int = 1  # devices under the mount point, for efficiency against N x baseline
    local_dir: str | None = None  # a local file system on the host: the reference of the mount point's tax
    link_bps: int | None = None  # the data per second the host's network link carries: the network's ceiling
    ssh_port: int = 22
    user: str = "root"

    def __post_init__(self) -> None:
        host_names.host_name(self.name)
        host_names.host_name(self.address, f"host {self.name}: address")

    @classmethod
    def from_mapping(cls, entry: dict) -> "RemoteHost":
        asked = sorted(set(entry) & set(REFUSED_ON_REMOTE))
        if asked:
            raise RefusedError(f"remote host {entry.get('name')!r}: {', '.join(asked)} refused. On a remote host "
                               "flashscale measures inside an existing mount point only (mount_dir): it cannot run "
                               "the guard there, so it never touches a raw device, erases or builds a layout")
        unknown = sorted(set(entry) - set(REMOTE_KEYS))
        if unknown or not entry.get("name") or not entry.get("address"):
            raise ConfigError(f"remote host {entry!r}: give name, address, and mount_dir, local_dir, devices, "
                              f"link_bps, ssh_port, user (or port: a fio server you started); unknown: {unknown}")
        link = entry.get("link_bps")
        if link is not None and (isinstance(link, bool) or not isinstance(link, (int, float)) or link <= 0):
            raise ConfigError(f"remote host {entry.get('name')!r}: link_bps={link!r} must be a positive number of "
                              "bytes/s, or left out")
        return cls(**entry)


# An emulated host's array is smaller than the quickstart's: H hosts' arrays share this machine's memory.
CLUSTER_ARRAY = {"devices": 2, "device_size": 2**30}


@dataclass(frozen=True)
class ClusterSpec:
    name: str
    hosts: tuple[int, ...] = (1, 2)
    array: ArraySpec = field(default_factory=lambda: ArraySpec(**CLUSTER_ARRAY))
    sweep: Sweep = field(default_factory=Sweep)
    link_bps: int | None = None
    subnet: str = SUBNET
    storage: tuple[str, ...] = ("local",)  # the emulated hosts' storage, each in turn (STORAGE)
    remote: tuple[RemoteHost, ...] = ()
    data_dir: str = "data/campaigns"
    # over SSH (campaigns.ssh_cluster): the hosts, how they are reached, what is built on them
    inventory: str | None = None
    host_group: str = "all"
    known_hosts: str | None = None
    ssh_identity: str | None = None
    ssh_config: str | None = None
    layouts: tuple[str, ...] = ()
    testbed: str | None = None
    confirm: object = None
    wipe: object = False
    options: Options = field(default_factory=Options)
    clock_tolerance_s: float = 1.0
    resume: bool = False                # continue the interrupted campaign in its own folder (campaign.run_at)
    force_resume: bool = False          # resume even when the campaign or the machine changed (said in notes)
    on_failure: str = "continue"        # after a failed run (the cluster's row failed): continue, or stop
    # what every campaign's loop reads of a spec: the driver's name, no tax decided as runs arrive (read after)
    host: ClassVar[str] = "localhost"
    reference: ClassVar[str | None] = None
    tax_margin: ClassVar[float] = DEFAULT_MARGIN

    def __post_init__(self) -> None:
        """Each parameter's type is checked where it enters (``parameters.check``: the schema); here what the
        values mean together."""
        parameters.check_campaign_name(self.name)
        counts = tuple(self.hosts)
        remote.resolve_hosts(self, RemoteHost.from_mapping)
        if self.remote and max(counts) > len(self.remote):
            raise ConfigError(f"hosts={list(counts)} but only {len(self.remote)} remote hosts are named")
        storage = (self.storage,) if isinstance(self.storage, str) else tuple(self.storage)
        wrong = [s for s in storage if s not in STORAGE]
        if not storage or wrong or len(set(storage)) != len(storage):
            raise ConfigError(f"storage={list(storage)!r} must list each of {', '.join(STORAGE)} at most once "
                              f"(wrong: {wrong})")
        if "nbd" in storage and self.sweep.nrfiles:
            raise ConfigError(f"storage nbd serves whole devices, and rw={list(self.sweep.rw)} makes files in a "
                              "file system: measure metadata on local storage")
        refused = {"batch_reps": "a run is one fio client's, one job file a host (BATCH_REPS)",
                   "bracket": "a cluster's tax is each storage's against local on the same hosts, no reference is "
                              "swept again (BRACKET)",
                   "steady_rounds": "the precondition runs once on every host at once (STEADY_ROUNDS)"}
        asked = [f"{name}={getattr(self.sweep, name)!r}: {why}" for name, why in refused.items()
                 if getattr(self.sweep, name)]
        if asked:
            raise ConfigError("a cluster campaign refuses " + "; ".join(asked))
        if self.remote and storage != ("local",):
            raise ConfigError(f"storage={list(storage)} is for the emulated hosts; a real host measures its "
                              "mount_dir (and its local_dir, when it names one)")
        if self.remote and not self.known_hosts and self.sweep.builds != 1:
            raise ConfigError(f"BUILDS={self.sweep.builds}: hosts serving fio themselves build nothing (their "
                              "directories are measured as they are); over SSH (KNOWN_HOSTS) each build is new")
        if len({h.local_dir is not None for h in self.remote}) > 1:
            raise ConfigError("give local_dir for every remote host or for none: the tax compares the same hosts")
        object.__setattr__(self, "hosts", counts)
        object.__setattr__(self, "storage", storage)

    @classmethod
    def from_parameters(cls, **p) -> "ClusterSpec":
        """From a notebook's UPPER_CASE parameters, checked first as a campaign's are (``parameters.PARAMETERS``
        says which field each sets: the array's, the sweep's, and the cluster's own, ``HOSTS``, ``STORAGE``,
        ``LINK_BPS``, ``SUBNET``, ``REMOTE_HOSTS``, ``DATA_DIR``); parameters of the notebook itself are ignored."""
        parameters.check(p, PARTS)
        parts = parameters.split(p, PARTS)
        own = parts["spec"]
        remote = tuple(RemoteHost.from_mapping(dict(h)) for h in own.pop("remote", ()))
        return cls(name=p.get("CAMPAIGN", "cluster"), array=ArraySpec(**{**CLUSTER_ARRAY, **parts["array"]}),
                   sweep=Sweep(**parts["sweep"]), remote=remote, options=Options(**parts["options"]), **own)


# The dataclass of each part of the parameters (``parameters.PARTS``): the layouts' options are for SSH hosts.
PARTS = {"array": ArraySpec, "sweep": Sweep, "options": Options, "spec": ClusterSpec}


def run(spec: ClusterSpec, runner: Runner | None = None, progress: bool = True) -> CampaignResult:
    """Run the cluster campaign through every campaign's loop (``campaign.run_at``: resumed with ``RESUME``, its
    folder held, its place made and undone) at the place ``hosts.choose`` picks; every host's rows and the
    cluster's, failed points included with their reason."""
    runner = runner or Runner()
    return campaign.run_at(spec, lambda: choose_place(spec, runner), runner, progress)
