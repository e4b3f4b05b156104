"""Real hosts to test an SSH campaign on, made on this machine: each a network namespace with its own OpenSSH server.

    with SshLab(2, subnet="10.215.0.0/16") as lab:
        lab.known_hosts, lab.identity, lab.inventory      # files of the lab's own: what a user writes for real hosts
        lab.hosts[0].address, lab.hosts[0].sshd           # reached over its veth; its sshd a process of ours

Host ``i`` is an emulated host of ``netns`` (its namespace, its veth, its address on the lab's private range) with
an sshd of its own: its own config (``ListenAddress`` its address only, ``PidFile`` in the lab's folder), its own
host key, and the lab's user key authorised for root, all made here; it forwards local unix sockets
(``AllowStreamLocalForwarding local``, and ``AllowTcpForwarding local``, which OpenSSH 9.2's sshd also asks of a
forward to a unix socket), as flashscale needs. ``path`` puts a folder first
on a host's ``PATH`` (``SetEnv``): a host whose ``fio`` is another; ``sshd`` gives a host lines of its own that win
over the lab's (sshd keeps the first value it reads): a host that forwards no unix socket. Everything is recorded in the lab's manifest before it
exists (the folder, the namespaces and veths, each sshd by pid and start time, ``/run/sshd`` when sshd needs it
made) and undone on exit, error, Ctrl-C, or by ``flashscale reap``.

A namespace shares this machine's files, so shipping code to such a host costs nothing: what runs there still goes
through ssh and ``python3 -I -S`` (``system.ssh.client``), as on a real host.
"""
from __future__ import annotations

import secrets
import shutil
import socket
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .. import netns, processes
from ..commands import Runner
from ..machine import NETNS_DIR
from ..devices import System
from ...errors import ConfigError, UnsupportedError
from ..teardown import Built
from ..undo import make_scratch

SUBNET = "10.215.0.0/16"  # the SSH lab's own range: the emulated cluster's is netns.SUBNET
PRIVSEP = Path("/run/sshd")  # where sshd's unprivileged child is confined; Debian's service makes it at start
READY_S = 10.0
SSHD_CONFIG = """ListenAddress {address}
Port 22
HostKey {folder}/ssh_host_ed25519_key
PidFile {folder}/sshd.pid
AuthorizedKeysFile {authorized}
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
AllowTcpForwarding local
AllowStreamLocalForwarding local
X11Forwarding no
PrintMotd no
MaxSessions 64
MaxStartups 64:30:128
Subsystem sftp internal-sftp
"""


@dataclass
class LabHost:
    """One host of the lab: its name and namespace, its address, its sshd, and where its files are."""

    name: str
    netns: str
    address: str
    folder: Path
    config: Path
    sshd: processes.Process | None = None

    def exec_prefix(self) -> tuple[str, ...]:
        """The argv prefix that runs a command in this host's network, and in this machine's mounts: a real host's
        sshd restarted keeps seeing the host's mounts, where ``ip netns exec`` would give each start new ones."""
        return ("nsenter", f"--net={NETNS_DIR / self.netns}", "--")


class SshLab(Built):
    """Context manager: ``hosts`` namespaces, each with its sshd, and the files a campaign needs to reach them."""

    def __init__(self, hosts: int, *, subnet: str = SUBNET, path: dict[int, str] | None = None,
                 sshd: dict[int, str] | None = None, runner: Runner | None = None, system: System | None = None,
                 manifests: Path | None = None):
        if isinstance(hosts, bool) or not isinstance(hosts, int) or not 1 <= hosts <= 16:
            raise ConfigError(f"hosts={hosts!r} must be a whole number from 1 to 16")
        super().__init__(runner, system, manifests)
        self.count, self.subnet, self.path, self.sshd = hosts, subnet, dict(path or {}), dict(sshd or {})
        self.hosts: list[LabHost] = []

    def _build(self) -> None:
        sshd = shutil.which("sshd") or shutil.which("sshd", path="/usr/sbin:/sbin")
        if sshd is None or shutil.which("ssh-keygen") is None:
            raise UnsupportedError("the SSH lab needs OpenSSH's server and client: apt-get install openssh-server "
                                   "openssh-client")
        teardown = self.start_teardown(f"flashscale-sshlab-{secrets.token_hex(4)}")
        self.folder = make_scratch(Path(tempfile.gettempdir()), "sshlab", teardown, mode=0o700)
        self.identity = self.folder / "id_ed25519"
        self._keygen(self.identity)
        (self.folder / "authorized_keys").write_text(self.identity.with_suffix(".pub").read_text())
        if not PRIVSEP.is_dir():
            teardown.record("dir", path=str(PRIVSEP))
            PRIVSEP.mkdir(mode=0o755)
        for host in netns.make_hosts(self.count, teardown, self.runner, self.system, subnet=self.subnet):
            self.hosts.append(self._host(host, sshd, teardown))
        self.known_hosts = self.folder / "known_hosts"
        self.known_hosts.write_text("".join(f"{h.address} {self.host_key(h)}\n" for h in self.hosts))
        self.inventory = self.folder / "inventory.ini"
        self.inventory.write_text("[storage]\n" + "".join(f"{h.name} ansible_host={h.address} ansible_user=root\n"
                                                         for h in self.hosts))

    def _keygen(self, path: Path) -> None:
        self.runner.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "flashscale-lab", "-f", str(path)])

    def host_key(self, host: LabHost) -> str:
        """The host's public key, as a known_hosts line has it after the address."""
        return " ".join((host.folder / "ssh_host_ed25519_key.pub").read_text().split()[:2])

    def _host(self, network: netns.Host, sshd: str, teardown) -> LabHost:
        folder = self.folder / network.name
        folder.mkdir()
        self._keygen(folder / "ssh_host_ed25519_key")
        config = folder / "sshd_config"
        index = len(self.hosts)
        text = self.sshd.get(index, "") + SSHD_CONFIG.format(
            address=network.address, folder=folder, authorized=self.folder / "authorized_keys")
        if index in self.path:
            text += f"SetEnv PATH={self.path[index]}:/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin\n"
        config.write_text(text)
        host = LabHost(network.name, network.netns, network.address, folder, config)
        self.start(host, teardown)
        return host

    def close(self) -> None:
        """Undo everything (the sshds stopped by pid and start time), then collect each sshd's exit."""
        try:
            super().close()
        finally:
            for host in self.hosts:
                if host.sshd is not None:
                    host.sshd.popen.poll()

    def start(self, host: LabHost, teardown=None) -> None:
        """Start (or start again) ``host``'s sshd, recorded, and wait until it accepts connections."""
        sshd = shutil.which("sshd") or shutil.which("sshd", path="/usr/sbin:/sbin")
        host.sshd = processes.start([*host.exec_prefix(), sshd, "-D", "-e", "-f", str(host.config)],
                                    teardown or self.teardown, host.folder / "sshd.log", system=self.system)
        deadline = time.monotonic() + READY_S
        while not _accepts(host.address, 22):
            if not host.sshd.running() or time.monotonic() > deadline:
                raise UnsupportedError(f"sshd of {host.name} did not listen on {host.address}:22: "
                                       f"{host.sshd.output().strip()[-300:] or 'it said nothing'}")
            time.sleep(0.05)


def _accepts(address: str, port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(1)
        return probe.connect_ex((address, port)) == 0
