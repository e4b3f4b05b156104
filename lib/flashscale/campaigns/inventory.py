"""Hosts from an Ansible inventory, INI or YAML, read without Ansible; and a test bed that names each host's devices.

    hosts = read("inventory.ini", group="storage")     # InventoryHost(name, address, port, user, groups, vars)

What is read, as Ansible reads it: host names with ``ansible_host`` (the address; the name when absent),
``ansible_port`` (the SSH port, 22) and ``ansible_user`` (root when absent: layouts need it), each name and
address a DNS name or an IP address and each user a login name (``system.ssh.host_names``: checked here, before any
connection, the value and the rule named); groups, with
``[group:children]`` / ``children:`` nesting and ``[group:vars]`` / ``vars:`` (a host's own variables win over its
groups', a child group's over its parent's); numeric ranges in names (``node[01:10]``). Variables of flashscale's
own, ``flashscale_mount_dir``, ``flashscale_local_dir``, ``flashscale_devices`` and ``flashscale_link_bps``, give a
host the fields of ``REMOTE_HOSTS``. Anything Ansible evaluates (Jinja templates, plugins, vaults) is refused,
named, rather than guessed at.

A hosts test bed (``TESTBED`` of an SSH campaign) names each host's devices by stable identity, as a test bed does
for one machine (``arrays.testbed``), the identities quoted as ``flashscale devices`` prints them on that host::

    name: four-servers
    hosts:
      node1: ["nguid:0025385b71b01234e4d25c4a00000001", "nguid:0025385b71b01234e4d25c4a00000002"]
      node2: ["nguid:0025385b71b05678e4d25c4a00000001", "nguid:0025385b71b05678e4d25c4a00000002"]
"""
from __future__ import annotations

import math
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ..arrays.guard import confirmation
from ..system.ssh.client import SshHost
from ..errors import ConfigError

OWN_VARS = {"flashscale_mount_dir": "mount_dir", "flashscale_local_dir": "local_dir",
            "flashscale_devices": "devices", "flashscale_link_bps": "link_bps"}
RANGE = re.compile(r"\[(\d+):(\d+)\]")
HOSTS_MAX = 4096  # an inventory is someone else's file: a range names at most this many hosts


@dataclass(frozen=True)
class InventoryHost(SshHost):
    """A host of an inventory: how SSH reaches it (``system.ssh.client.SshHost``, checked as it is), its groups, its vars."""

    groups: frozenset[str] = frozenset()
    vars: dict = field(default_factory=dict, compare=False)

    def remote(self) -> dict:
        """This host as a ``REMOTE_HOSTS`` entry (``campaigns.cluster.RemoteHost.from_mapping``)."""
        own = {field_name: self.vars[var] for var, field_name in OWN_VARS.items() if var in self.vars}
        return {"name": self.name, "address": self.address, "ssh_port": self.port, "user": self.user, **own}


@dataclass
class _Group:
    hosts: list[str] = field(default_factory=list)
    children: list[str] = field(default_factory=list)
    vars: dict = field(default_factory=dict)


def _expand(pattern: str, where: str) -> list[str]:
    """``node[01:03]`` -> node01, node02, node03 (the width of the first bound kept); other names as they are."""
    found = RANGE.search(pattern)
    if found is None:
        if "[" in pattern or "{{" in pattern:
            raise ConfigError(f"{where}: host pattern {pattern!r} is not a name or a numeric range [a:b]")
        return [pattern]
    lo, hi = found.groups()
    count = math.prod(max(0, int(b) - int(a) + 1) for a, b in RANGE.findall(pattern))
    if count > HOSTS_MAX:
        raise ConfigError(f"{where}: {pattern!r} names {count} hosts, more than {HOSTS_MAX}")
    width = len(lo) if lo.startswith("0") else 0
    return [name for i in range(int(lo), int(hi) + 1)
            for name in _expand(pattern[:found.start()] + str(i).zfill(width) + pattern[found.end():], where)]


def _value(text: str, where: str):
    text = text.strip()
    if "{{" in text or "{%" in text or text.startswith("!vault"):
        raise ConfigError(f"{where}: {text!r} needs Ansible to evaluate; give the plain value")
    try:
        return yaml.safe_load(text) if text else ""
    except yaml.YAMLError:
        return text.strip("'\"")


def _assignments(words: list[str], where: str) -> dict:
    out = {}
    for word in words:
        key, sep, value = word.partition("=")
        if not sep or not key:
            raise ConfigError(f"{where}: {word!r} is not a key=value variable")
        out[key] = _value(value, f"{where} ({key})")
    return out


def _parse_ini(text: str, path: str) -> tuple[dict[str, _Group], dict[str, dict]]:
    groups: dict[str, _Group] = {"all": _Group(), "ungrouped": _Group()}
    host_vars: dict[str, dict] = {}
    section, kind = "ungrouped", "hosts"
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        where = f"inventory {path} line {number}"
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            if not line.endswith("]"):
                raise ConfigError(f"{where}: {line!r} is not a [section]")
            section, _, kind = line[1:-1].partition(":")
            kind = kind or "hosts"
            if kind not in ("hosts", "vars", "children"):
                raise ConfigError(f"{where}: section kind {kind!r} is not vars or children")
            groups.setdefault(section, _Group())
            continue
        try:
            words = shlex.split(line, comments=True)
        except ValueError as exc:
            raise ConfigError(f"{where}: {line!r}: {exc}") from None
        if kind == "vars":
            groups[section].vars.update(_assignments(words, where))
        elif kind == "children":
            groups[section].children.append(words[0])
            groups.setdefault(words[0], _Group())
        else:
            for name in _expand(words[0], where):
                groups[section].hosts.append(name)
                host_vars.setdefault(name, {}).update(_assignments(words[1:], where))
    return groups, host_vars


def _parse_yaml(data: dict, path: str) -> tuple[dict[str, _Group], dict[str, dict]]:
    groups: dict[str, _Group] = {"all": _Group(), "ungrouped": _Group()}
    host_vars: dict[str, dict] = {}

    def walk(name: str, body, where: str) -> None:
        body = body or {}
        if not isinstance(body, dict) or set(body) - {"hosts", "children", "vars"}:
            raise ConfigError(f"{where}: group {name!r} may hold only hosts, children and vars")
        group = groups.setdefault(name, _Group())
        group.vars.update({k: _value(str(v), where) if isinstance(v, str) else v
                           for k, v in (body.get("vars") or {}).items()})
        for pattern, own in (body.get("hosts") or {}).items():
            for host in _expand(str(pattern), where):
                group.hosts.append(host)
                host_vars.setdefault(host, {}).update(own or {})
        for child, child_body in (body.get("children") or {}).items():
            group.children.append(child)
            walk(child, child_body, where)

    for name, body in data.items():
        walk(name, body, f"inventory {path}")
    return groups, host_vars


def _ancestry(groups: dict[str, _Group]) -> dict[str, list[str]]:
    """Each host's groups, parents before children (so a child group's variables win)."""
    parents = {child: [g for g, body in groups.items() if child in body.children] for child in groups}

    def depth(group: str, seen=()) -> int:
        if group in seen:
            raise ConfigError(f"inventory: group {group!r} is its own ancestor")
        return 1 + max((depth(p, (*seen, group)) for p in parents[group]), default=0)

    found: dict[str, set[str]] = {}

    def add(host: str, group: str, seen=()) -> None:
        found.setdefault(host, set()).add(group)
        for parent in parents.get(group, []):
            if parent not in seen:
                add(host, parent, (*seen, group))

    for name, body in groups.items():
        for host in body.hosts:
            add(host, name)
    return {host: sorted(names | {"all"}, key=lambda g: (depth(g), g)) for host, names in found.items()}


def read(path: str | Path, group: str = "all") -> list[InventoryHost]:
    """The hosts of ``group`` in an INI or YAML inventory, in the file's order; ConfigError naming what is wrong."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(f"INVENTORY={str(path)!r} cannot be read: {exc.strerror or exc}") from None
    data = None
    if path.suffix in (".yml", ".yaml") or text.lstrip().startswith(("all:", "---")):
        data = yaml.safe_load(text)
    groups, host_vars = _parse_yaml(data, str(path)) if isinstance(data, dict) else _parse_ini(text, str(path))
    ancestry = _ancestry(groups)
    if group not in groups:
        raise ConfigError(f"HOST_GROUP={group!r} is not a group of {path}: {', '.join(sorted(groups))}")
    hosts = []
    for name in dict.fromkeys(h for body in groups.values() for h in body.hosts):
        if group not in ancestry[name]:
            continue
        merged = {k: v for g in ancestry[name] for k, v in groups[g].vars.items()}
        merged.update(host_vars.get(name, {}))
        port = merged.get("ansible_port", 22)
        if isinstance(port, str) and port.isdigit():
            port = int(port)
        hosts.append(InventoryHost(name, str(merged.get("ansible_host", name)), port,
                                   str(merged.get("ansible_user", "root")), frozenset(ancestry[name]), merged))
    if not hosts:
        raise ConfigError(f"inventory {path}: group {group!r} has no hosts")
    return hosts


def read_testbed(path: str | Path) -> tuple[str, dict[str, tuple[str, ...]]]:
    """A hosts test bed: its name and each host's identities, checked as a test bed's are."""
    try:
        data = yaml.safe_load(Path(path).read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"TESTBED={str(path)!r} cannot be read: {exc}") from None
    hosts = data.get("hosts") if isinstance(data, dict) else None
    if not isinstance(hosts, dict) or not hosts:
        raise ConfigError(f"test bed {path}: an SSH campaign's test bed needs 'hosts', each host's name mapped to "
                          "its devices' identities")
    out = {}
    for name, ids in hosts.items():
        if not isinstance(ids, list) or not ids:
            raise ConfigError(f"test bed {path}, host {name}: give a list of its devices' identities, not {ids!r}")
        try:
            out[str(name)] = confirmation(ids)
        except ConfigError as exc:
            raise ConfigError(f"test bed {path}, host {name}: {exc}") from None
        if len(out[str(name)]) != len(ids):
            raise ConfigError(f"test bed {path}, host {name}: an identity is listed twice or is empty")
    seen = [i for ids in out.values() for i in ids]
    twice = sorted({i for i in seen if seen.count(i) > 1})
    if twice:
        raise ConfigError(f"test bed {path}: {', '.join(twice)} named on more than one host")
    return str(data.get("name") or Path(path).stem), out
