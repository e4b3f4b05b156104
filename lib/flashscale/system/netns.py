"""Emulated hosts: network namespaces joined to this one by veth pairs, on a private range flashscale owns.

Host ``i`` is the namespace ``flashscale-<token>-h<i>`` holding one end of a veth pair; the other end, ``fs<token><i>``,
stays in the root namespace. The pair has its own /24 in ``subnet`` (default ``SUBNET``): the root end is ``.1``, the
host ``.2``. ``make_hosts`` refuses a range that overlaps any address or route this machine has, so flashscale
only ever talks to addresses it made. With ``link_bps`` each link is capped by a token bucket (tc tbf) both ways.

A link carries jumbo frames (``MTU``), as storage networks do. tbf counts whole frames, so the data a TCP stream
moves over a link capped at ``link_bps`` is ``payload_bps(link_bps)``: each frame of MTU + 14 bytes (Ethernet
header) carries MTU - 52 bytes of data (IPv4 and TCP headers with timestamps). Measured over NBD on a link capped
at 150 MB/s: 149.1 MB/s at MTU 9000 (predicted 148.9), 143.6 MB/s at MTU 1500 (predicted 143.5).

Every namespace, veth and qdisc is recorded in the teardown before it is made (kinds ``netns``, ``veth``,
``qdisc``), so a teardown or ``flashscale reap`` removes them; a namespace shares the machine's mounts and block
devices (no mount namespace), so each host's fio jobs must name targets of their own.
"""
from __future__ import annotations

import ipaddress
import json
import secrets
from dataclasses import dataclass
from pathlib import Path

from .commands import Runner
from .devices import System
from ..errors import ConfigError, RefusedError
from .undo import OWN_FILE_PREFIX
from .reap import reap
from .teardown import Teardown, manifest_dir

SUBNET = "10.213.0.0/16"
NETNS_PREFIX = OWN_FILE_PREFIX  # names of ours all start the same way
TBF_LATENCY = "50ms"
MTU = 9000
FRAME_HEADER, PACKET_HEADERS = 14, 52  # Ethernet; IPv4 (20) + TCP with the timestamp option (32)


def payload_bps(link_bps: float, mtu: int = MTU) -> float:
    """The bytes of data per second a TCP stream moves over a link carrying ``link_bps`` bytes of frames."""
    return link_bps * (mtu - PACKET_HEADERS) / (mtu + FRAME_HEADER)


@dataclass(frozen=True)
class Host:
    """One emulated host: its name, its namespace, its address, the root end's address and the root end's link."""

    name: str
    netns: str
    address: str
    gateway: str
    link: str

    def exec_prefix(self) -> tuple[str, ...]:
        """The argv prefix that runs a command inside this host."""
        return ("ip", "netns", "exec", self.netns)


def check_free(subnet: str, system: System, manifests: Path | None = None) -> ipaddress.IPv4Network:
    """``subnet`` as a network; RefusedError when any address or route of this machine falls in it, naming its link
    and, where a flashscale manifest in ``manifests`` (default ``manifest_dir()``) records that link, whose run it is
    and what undoes it."""
    try:
        network = ipaddress.IPv4Network(subnet)
    except ValueError as exc:
        raise ConfigError(f"subnet={subnet!r} is not an IPv4 network: {exc}") from None
    if not network.is_private or network.prefixlen > 22:
        raise ConfigError(f"subnet={subnet} must be a private range of at least /22 (one /24 per host)")
    clashes: dict[str, list[str]] = {}
    for cidr, link in system.ipv4_networks():
        if ipaddress.IPv4Network(cidr, strict=False).overlaps(network):
            clashes.setdefault(link, []).append(cidr)
    if clashes:
        where = "; ".join(", ".join(cidrs) + (f" on {link}" if link else "") for link, cidrs in clashes.items())
        whose = "".join(f". {line}" for line in _recorded(set(clashes) - {""}, system, manifests or manifest_dir()))
        raise RefusedError(f"subnet {subnet} is in use on this machine ({where}): choose another private range "
                           f"for the emulated hosts{whose}")
    return network


def first_free(candidates: list[str], system: System, manifests: Path | None = None) -> str:
    """The first of ``candidates`` that ``check_free`` accepts, so that a lab left behind by an interrupted run (which
    ``flashscale reap`` undoes) does not stop the next one; RefusedError naming why each one is refused when none is
    free."""
    refused = []
    for subnet in candidates:
        try:
            check_free(subnet, system, manifests)
        except RefusedError as exc:
            refused.append(str(exc))
        else:
            return subnet
    raise RefusedError("no range for the emulated hosts is free: " + "; ".join(refused))


# What a manifest's run is, as ``reap`` finds it (a dry run), and what to do about the links it records
_WHOSE = {"planned": "whose run is over: `flashscale reap` undoes it", "running": "whose run is still going",
          "unknown-owner": "which names no process: `flashscale reap {manifest}` undoes it once its run is over"}


def _recorded(links: set[str], system: System, directory: Path) -> list[str]:
    """For each manifest in ``directory`` that records any of ``links`` as a veth: those links, it, and its run."""
    said = []
    for outcome in reap(directory=directory, system=system, dry_run=True):
        mine = sorted(links & {e.get("link") for e in outcome.entries if e.get("kind") == "veth"})
        if mine:
            state = _WHOSE.get(outcome.state, f"({outcome.state})").format(manifest=outcome.manifest)
            said.append(f"{', '.join(mine)} {'is' if len(mine) == 1 else 'are'} recorded in {outcome.manifest}, "
                        f"{state}")
    return said


def _tbf(link: str, rate_bps: int, verb: str = "add") -> list[str]:
    burst = max(rate_bps // 100, 64 * 1024)  # 10 ms at the rate, and never less than 64 KiB
    return ["qdisc", verb, "dev", link, "root", "tbf", "rate", f"{rate_bps * 8}bit", "burst", str(burst),
            "latency", TBF_LATENCY]


def set_link_rate(host: Host, link_bps: int, runner: Runner) -> None:
    """Change the tbf cap of ``host``'s link, both ends, to ``link_bps`` bytes/s of frames (a link flashscale capped
    when it made it: its qdisc is recorded already), checked."""
    for where, link in (((), host.link), (("-n", host.netns), f"{host.link}p")):
        runner.run(["tc", *where, *_tbf(link, link_bps, "replace")])
        _check_tbf(runner, link, host.netns if where else None)


def _check_tbf(runner: Runner, link: str, netns: str | None = None) -> None:
    where = ["-n", netns] if netns else []
    shown = json.loads(runner.run(["tc", *where, "-j", "qdisc", "show", "dev", link]).stdout or "[]")
    if not any(q.get("kind") == "tbf" for q in shown):
        raise RefusedError(f"tc accepted a tbf cap on {link} but does not show it: {shown}")


def _make_host(index: int, token: str, block: ipaddress.IPv4Network, teardown: Teardown, runner: Runner,
               system: System, link_bps: int | None) -> Host:
    netns, link, peer = f"{NETNS_PREFIX}{token}-h{index}", f"fs{token}{index}", f"fs{token}{index}p"
    gateway, address = str(block[1]), str(block[2])
    teardown.record("netns", name=netns)
    runner.run(["ip", "netns", "add", netns])
    teardown.record("veth", link=link, netns=netns)
    runner.run(["ip", "link", "add", link, "mtu", str(MTU), "type", "veth", "peer", "name", peer, "mtu", str(MTU),
                "netns", netns])
    ifindex = system.net_links().get(link)
    if ifindex is None:
        raise RefusedError(f"ip made the veth {link} but this namespace does not show it")
    teardown.identify(ifindex=ifindex)  # a link of that name made later by someone else is never removed
    runner.run(["ip", "addr", "add", f"{gateway}/{block.prefixlen}", "dev", link])
    runner.run(["ip", "link", "set", link, "up"])
    runner.run(["ip", "-n", netns, "addr", "add", f"{address}/{block.prefixlen}", "dev", peer])
    runner.run(["ip", "-n", netns, "link", "set", peer, "up"])
    runner.run(["ip", "-n", netns, "link", "set", "lo", "up"])
    if link_bps:
        teardown.record("qdisc", link=link, ifindex=ifindex)
        runner.run(["tc", *_tbf(link, link_bps)])
        runner.run(["tc", "-n", netns, *_tbf(peer, link_bps)])  # goes with the namespace
        _check_tbf(runner, link)
        _check_tbf(runner, peer, netns)
    return Host(f"host{index}", netns, address, gateway, link)


def make_hosts(count: int, teardown: Teardown, runner: Runner, system: System, *, subnet: str = SUBNET,
               link_bps: int | None = None) -> list[Host]:
    """``count`` emulated hosts on ``subnet`` (checked free first), each link capped at ``link_bps`` bytes/s."""
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= 64:
        raise ConfigError(f"hosts={count!r} must be a whole number from 1 to 64")
    if link_bps is not None and (isinstance(link_bps, bool) or not isinstance(link_bps, int) or link_bps <= 0):
        raise ConfigError(f"link_bps={link_bps!r} must be a positive whole number of bytes/s, or None")
    network = check_free(subnet, system)
    blocks = list(network.subnets(new_prefix=24))[1:count + 1]
    if len(blocks) < count:
        raise ConfigError(f"subnet {subnet} holds {len(blocks)} host networks of /24, not {count}")
    token = secrets.token_hex(3)
    return [_make_host(i, token, block, teardown, runner, system, link_bps) for i, block in enumerate(blocks)]

