"""A cluster campaign's hosts over SSH: which hosts (``REMOTE_HOSTS`` or an ``INVENTORY``), checked as a spec is, and
the layouts run on them one after another (``campaigns.ssh_cluster.RemoteCluster`` does the work on the hosts).

    resolve_hosts(spec, make)  the inventory's hosts as the spec's ``remote``; every SSH rule checked, before anything
    order(spec)             the layouts measured, in order: ``LAYOUTS``, then ``local`` and ``mounted`` where named
    remote_cluster(spec, directory, runner, fio_version)   the hosts, to be entered: connected, shipped, checked
    contacts(parameters, folder, runner)   how ``flashscale reap`` reaches the hosts: as the campaign's parameters say
    contacts_of(spec, folder, runner)      how a resumed campaign reaches them, to undo what its dead run left
"""
from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Callable, Mapping

from ..arrays.guard import confirmation
from ..arrays.layouts import DEVICE_LAYOUTS
from ..errors import ConfigError
from ..measure import fio_client as fio_cluster
from ..paths import project_root
from ..system.commands import Runner
from ..system.ssh.shipped import Contacts, Zip
from ..system.ssh.client import Link, SshHost, SshOptions
from . import inventory
from .ssh_cluster import SPECIAL, Plan, RemoteCluster

SSH_ONLY = ("layouts", "testbed", "confirm", "inventory", "ssh_identity", "ssh_config")


def _path(value: str | None) -> str | None:
    """A file parameter: absolute as given, else relative to the checkout (as ``DATA_DIR`` is)."""
    if value is None:
        return None
    return str(Path(value).expanduser() if Path(value).expanduser().is_absolute() else project_root() / value)


def resolve_hosts(spec, remote_host: Callable[[dict], object]) -> None:
    """Set ``spec.remote`` from ``spec.inventory`` (each host made by ``remote_host`` from its ``REMOTE_HOSTS``
    mapping: the spec's own ``RemoteHost.from_mapping``) and check what an SSH campaign needs; ConfigError naming
    it."""
    given = [name for name in SSH_ONLY if getattr(spec, name) not in (None, (), "", [])]
    if not spec.known_hosts:
        if given:
            raise ConfigError(f"{', '.join(n.upper() for n in given)} need hosts reached over SSH: give KNOWN_HOSTS, "
                              "the file their host keys are checked against")
        if any(h.mount_dir is None for h in spec.remote):
            raise ConfigError("a remote host without SSH (no KNOWN_HOSTS) is measured in its mount_dir: give one")
        return
    if spec.inventory:
        if spec.remote:
            raise ConfigError("give REMOTE_HOSTS or INVENTORY, not both")
        hosts = inventory.read(_path(spec.inventory), spec.host_group)
        object.__setattr__(spec, "remote", tuple(remote_host(h.remote()) for h in hosts))
    if not spec.remote:
        raise ConfigError("KNOWN_HOSTS is for real hosts: name them in REMOTE_HOSTS or INVENTORY")
    ports = [h.name for h in spec.remote if h.port != fio_cluster.PORT]
    if ports:
        raise ConfigError(f"host(s) {', '.join(ports)}: over SSH each host's fio server listens on a unix socket "
                          "flashscale makes there, not on a port; give ssh_port for SSH's own")
    names = [SshHost(h.name, h.address, h.ssh_port, h.user).name for h in spec.remote]  # each checked
    if len(set(names)) != len(names):
        raise ConfigError(f"host names {names} are not unique")
    wrong = [name for name in spec.layouts if name not in DEVICE_LAYOUTS]
    if wrong:
        raise ConfigError(f"LAYOUTS={list(spec.layouts)}: {', '.join(wrong)} cannot be built on a host's devices "
                          f"(one of {', '.join(DEVICE_LAYOUTS)}; local and mounted come from each host's local_dir "
                          "and mount_dir)")
    for key in ("mount_dir", "local_dir"):
        named = {getattr(h, key) is not None for h in spec.remote}
        if len(named) > 1:
            raise ConfigError(f"give {key} for every remote host or for none: a layout runs on the same hosts")
    if not order(spec):
        raise ConfigError("nothing to measure on the hosts: give LAYOUTS (with TESTBED and CONFIRM), or each "
                          "host's mount_dir or local_dir")
    if spec.layouts:
        _check_testbed(spec)


def _check_testbed(spec) -> None:
    if not spec.testbed:
        raise ConfigError(f"LAYOUTS={list(spec.layouts)} on the hosts' devices: give TESTBED, naming each host's "
                          "devices by identity (`flashscale devices` on the host prints them)")
    if spec.confirm is None:
        raise ConfigError("LAYOUTS on the hosts' devices: give CONFIRM, the identities you confirm may be erased")
    confirmation(spec.confirm)
    _, beds = inventory.read_testbed(_path(spec.testbed))
    missing = [h.name for h in spec.remote if h.name not in beds]
    if missing:
        raise ConfigError(f"test bed {spec.testbed} names no devices for host(s) {', '.join(missing)}")


def order(spec) -> list[str]:
    """The layouts measured on the hosts, in order."""
    if not spec.known_hosts:
        return ["local", "mounted"] if spec.remote and spec.remote[0].local_dir else ["mounted"]
    first = spec.remote[0] if spec.remote else None
    return [*spec.layouts, *[name for name in SPECIAL
                             if first is not None and getattr(first, f"{name.replace('mounted', 'mount')}_dir")]]


def plan(spec, fio_version: str) -> Plan:
    beds = inventory.read_testbed(_path(spec.testbed))[1] if spec.testbed else {}
    return Plan(tuple(spec.layouts), beds, confirmation(spec.confirm) if spec.confirm is not None else (),
                spec.wipe, asdict(spec.options), spec.clock_tolerance_s, fio_version)


def remote_cluster(spec, directory: Path, runner: Runner, fio_version: str) -> RemoteCluster:
    """The hosts of ``spec`` as a ``RemoteCluster`` (entered: every host connected, shipped and checked; each layout
    of ``order(spec)`` then built and undone by its ``layout``)."""
    options = ssh_options(_path(spec.known_hosts), _path(spec.ssh_identity), spec.ssh_config)
    return RemoteCluster(spec.remote, options, plan(spec, fio_version), directory, runner)


def contacts_of(spec, folder: Path, runner: Runner) -> Contacts:
    """How the hosts of ``spec`` are reached to undo what a dead run of it left there (``Place.recover``), as
    ``contacts`` reaches them for ``flashscale reap``; the zip shipped to them written to ``folder``."""
    return contacts({"KNOWN_HOSTS": spec.known_hosts, "SSH_IDENTITY": spec.ssh_identity,
                     "SSH_CONFIG": spec.ssh_config, "REMOTE_HOSTS": [asdict(h) for h in spec.remote]}, folder, runner)


def contacts(parameters: Mapping, folder: Path, runner: Runner) -> Contacts | None:
    """How ``flashscale reap`` reaches the hosts of a campaign: its ``INVENTORY`` (``HOST_GROUP``) or
    ``REMOTE_HOSTS``, and its ``KNOWN_HOSTS``, ``SSH_IDENTITY`` and ``SSH_CONFIG``, read and checked as ``run``
    reads them; the zip it ships written to ``folder`` (ours, 0700). None when the parameters name no SSH hosts."""
    if not parameters.get("KNOWN_HOSTS"):
        return None
    if parameters.get("INVENTORY"):
        hosts = [SshHost(h.name, h.address, h.port, h.user)
                 for h in inventory.read(_path(parameters["INVENTORY"]), parameters.get("HOST_GROUP") or "all")]
    else:
        given = [dict(h) for h in parameters.get("REMOTE_HOSTS") or () if isinstance(h, Mapping)]
        hosts = [SshHost(h.get("name"), h.get("address"), h.get("ssh_port", 22), h.get("user", "root"))
                 for h in given]
    options = ssh_options(_path(parameters["KNOWN_HOSTS"]), _path(parameters.get("SSH_IDENTITY")),
                          parameters.get("SSH_CONFIG"))
    return Contacts({h.name: Link(h, options, runner, None) for h in hosts}, Zip.write(folder))

def ssh_options(known_hosts: str | None, identity: str | None, config: str | None) -> SshOptions:
    if not known_hosts:
        raise ConfigError("over SSH, KNOWN_HOSTS must name the file the hosts' keys are checked against")
    return SshOptions(known_hosts, identity, config)
