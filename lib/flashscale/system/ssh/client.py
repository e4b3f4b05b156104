"""Real hosts over SSH: OpenSSH's client through the ``Runner``, one connection per host reused for a campaign.

    host = SshHost("node1", "192.0.2.11", port=22, user="root")
    link = Link(host, SshOptions(known_hosts="~/.ssh/known_hosts"), runner, control_dir)
    link.connect(teardown, log)            # the master connection, a process of ours recorded in the teardown
    link.run(["uname", "-r"])              # every later command rides on that one connection
    link.forward(local_socket, remote_socket)   # a unix socket of ours reaching one on the host

Every command is an argv list, quoted once at this boundary (``shlex.join``) for the remote shell, and run through
``Runner.run``: logged, exit status checked, a timeout per step. A host's name, address and login are checked when
the host is made (``names``: a DNS name or an IP address), before any connection.

Every ssh is given ``-F`` and its options on the command line (``SshOptions.argv``): ``-F none`` (the user's
``~/.ssh/config`` and ``/etc/ssh/ssh_config`` are never read), or ``-F SSH_CONFIG`` when the campaign names one; an
option given with ``-o`` wins over any config file, so none can change these: ``BatchMode=yes`` (no prompt ever
waits); ``StrictHostKeyChecking=yes`` against the campaign's known_hosts file only (``UserKnownHostsFile``,
``GlobalKnownHostsFile=/dev/null``, ``KnownHostsCommand=none``, ``VerifyHostKeyDNS=no``, ``CheckHostIP=no``,
``UpdateHostKeys=no``); ``HostKeyAlias`` the name ssh looks the key up by without one (``address`` or
``[address]:port``: OpenSSH 9.2 takes ``none`` there as an alias named "none"); no agent, X11, tunnel or local
command; ``ConnectTimeout``, and a keep-alive that notices a host that went silent within ``ALIVE_S`` x
``ALIVE_COUNT`` seconds. The user's settings still read: the user and port the inventory gives (``-l``, ``-p``),
the identity ``SSH_IDENTITY`` names, and what ``SSH_CONFIG`` sets beyond these. ssh's own exit status 255 means the
connection failed: ``Unreachable`` names the host and what ssh said.

The connection is a master of ssh's connection sharing (``-M -N``), started as a background process of ours by
``processes.start`` (recorded with its pid and start time before it runs, stopped by both), with
``ControlPersist=no``: ssh's own persistence forks a daemon whose pid we would have to guess. Its socket
(``ControlPath``) is a short hash of the host in a folder of ours of mode 0700. Every command and forward goes
through it; a ``Link`` without one connects afresh per command, which is how ``flashscale reap`` reaches a host.
"""
from __future__ import annotations

import hashlib
import logging
import shlex
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from . import host_names
from .. import processes
from ..commands import Completed, Runner
from ...errors import CommandError, ConfigError, FlashscaleError, RefusedError, UnsupportedError

if TYPE_CHECKING:
    from ..teardown import Teardown

log = logging.getLogger("flashscale.ssh")

SSH_FAILED = 255  # ssh's own exit status when the connection (not the remote command) failed
ALIVE_S, ALIVE_COUNT = 5, 3  # a silent host is noticed after ALIVE_S x ALIVE_COUNT seconds
HOST_KEY_WORDS = ("Host key verification failed", "REMOTE HOST IDENTIFICATION HAS CHANGED",
                  "No ED25519 host key is known", "host key for", "No matching host key")
READY_S = 0.1
SOCKET_PATH_MAX = 107  # a unix socket's path, its NUL aside (sun_path)
# Options no config file can change (given with -o, they come first, and ssh keeps the first value it reads)
PINNED = {"BatchMode": "yes", "StrictHostKeyChecking": "yes", "GlobalKnownHostsFile": "/dev/null",
          "KnownHostsCommand": "none", "VerifyHostKeyDNS": "no", "CheckHostIP": "no", "UpdateHostKeys": "no",
          "CanonicalizeHostname": "no", "ForwardAgent": "no", "ForwardX11": "no", "Tunnel": "no",
          "PermitLocalCommand": "no", "RemoteCommand": "none", "RequestTTY": "no", "StreamLocalBindMask": "0177",
          "LogLevel": "ERROR"}


class Unreachable(UnsupportedError):
    """A host that ssh could not reach or lost: the connection failed, not the command it carried."""


@dataclass(frozen=True)
class SshHost:
    """One host as SSH reaches it: the name rows give it, its address, SSH port and login (``names``' rules)."""

    name: str
    address: str
    port: int = 22
    user: str = "root"

    def __post_init__(self) -> None:
        host_names.host_name(self.name)
        host_names.host_name(self.address, f"host {self.name}: address")
        if isinstance(self.port, bool) or not isinstance(self.port, int) or not 0 < self.port < 65536:
            raise ConfigError(f"host {self.name}: ssh port {self.port!r} must be a TCP port number")
        host_names.login(self.user, f"host {self.name}: user")

    @property
    def key_name(self) -> str:
        """The name its key is looked up by in known_hosts: the address, ``[address]:port`` off port 22."""
        return self.address if self.port == 22 else f"[{self.address}]:{self.port}"


def option_path(path: str | Path) -> str:
    """A path as an ssh option's value: quoted (a space would start a second file), ``%`` doubled (a token
    otherwise); ConfigError for a path ssh cannot be given."""
    text = str(path)
    if any(c in text for c in '"\n\r\0'):
        raise ConfigError(f"{text!r}: a path given to ssh may not hold a double quote or a line break")
    return '"' + text.replace("%", "%%") + '"'


@dataclass(frozen=True)
class SshOptions:
    """How every host is reached: the known_hosts file its key is checked against (required), the private key and
    ssh_config to use (None: none), and the timeouts: to connect, and for one step on the host."""

    known_hosts: str
    identity: str | None = None
    config: str | None = None  # an ssh_config file, or None / "none": none is read
    connect_timeout_s: int = 10
    step_timeout_s: float = 900.0

    def __post_init__(self) -> None:
        if not self.known_hosts:
            raise ConfigError("KNOWN_HOSTS must name the file the hosts' keys are checked against: host keys are "
                              "always verified")
        known = Path(self.known_hosts).expanduser()
        if not known.is_file():
            raise ConfigError(f"KNOWN_HOSTS={self.known_hosts!r}: no such file; add each host's key to it "
                              "(ssh-keyscan HOST >> FILE, then check the fingerprints)")
        if self.identity is not None and not Path(self.identity).expanduser().is_file():
            raise ConfigError(f"SSH_IDENTITY={self.identity!r}: no such private key file")
        if self.config not in (None, "none") and not Path(self.config).expanduser().is_file():
            raise ConfigError(f"SSH_CONFIG={self.config!r}: no such ssh_config file (none: give none or leave it)")

    def argv(self, host: SshHost, control: Path | None) -> list[str]:
        """``-F`` and the options of every ssh to ``host``; ``control``: the master's socket (None: none)."""
        opts = {**PINNED, "UserKnownHostsFile": option_path(Path(self.known_hosts).expanduser()),
                "HostKeyAlias": host.key_name, "ConnectTimeout": str(self.connect_timeout_s),
                "ServerAliveInterval": str(ALIVE_S), "ServerAliveCountMax": str(ALIVE_COUNT), "ControlMaster": "no",
                "ControlPath": option_path(control) if control else "none"}
        if self.identity:
            opts.update(IdentityFile=option_path(Path(self.identity).expanduser()), IdentitiesOnly="yes")
        config = str(Path(self.config).expanduser()) if self.config not in (None, "none") else "none"
        return ["-F", config, *[arg for key, value in opts.items() for arg in ("-o", f"{key}={value}")]]


def control_path(folder: Path, host: SshHost) -> Path:
    """The master's socket for ``host`` in ``folder`` (ours, 0700): a short hash of how it is reached, whatever the
    host's name (no ``%`` token, no overlong socket path)."""
    digest = hashlib.sha256(f"{host.user}@{host.address}:{host.port}".encode()).hexdigest()[:16]
    return Path(folder) / f"c-{digest}"


class Link:
    """One host's SSH connection: its master, the commands that ride on it, its forwards of unix sockets."""

    def __init__(self, host: SshHost, options: SshOptions, runner: Runner, control_dir: Path | None):
        self.host, self.options, self.runner = host, options, runner
        self.control = control_path(control_dir, host) if control_dir else None
        self.master: processes.Process | None = None

    def _base(self, *flags: str) -> list[str]:
        return ["ssh", *flags, *self.options.argv(self.host, self.control), "-p", str(self.host.port), "-l",
                self.host.user, self.host.address]

    def argv(self, remote: Sequence[str]) -> list[str]:
        """The ssh command that runs ``remote`` (an argv list) on the host, quoted once for its shell."""
        return [*self._base(), "--", shlex.join(str(a) for a in remote)]

    def run(self, remote: Sequence[str], *, timeout: float | None = None, ok_codes=(0,),
            stdin: Path | None = None) -> Completed:
        """Run ``remote`` on the host (``stdin``: a file it reads); ``Unreachable`` when the connection failed,
        CommandError when the command did."""
        try:
            return self.runner.run(self.argv(remote), ok_codes=ok_codes, timeout=timeout or self.options.step_timeout_s,
                                   **({"stdin": stdin} if stdin is not None else {}))
        except CommandError as exc:
            if exc.returncode == SSH_FAILED:
                raise self.unreachable(exc.stderr) from None
            if exc.returncode == -1:  # our timeout
                raise Unreachable(f"host {self.host.name}: {' '.join(map(str, remote))[:200]} did not finish in "
                                  f"{timeout or self.options.step_timeout_s:g} s") from None
            raise

    def unreachable(self, said: str) -> FlashscaleError:
        """What ssh ``said`` when it failed, as the error it is: a host key refused, or the host not reached."""
        text = " ".join(said.split()) or "ssh said nothing"
        if any(word.lower() in text.lower() for word in HOST_KEY_WORDS):
            return RefusedError(f"host {self.host.name} ({self.host.address}): its host key is not the one "
                                f"{self.options.known_hosts} holds ({text}); nothing was run there. If the host was "
                                "reinstalled, check its new key's fingerprint and replace the line")
        return Unreachable(f"host {self.host.name} ({self.host.user}@{self.host.address}:{self.host.port}) cannot be "
                           f"reached over ssh: {text}")

    def connect(self, teardown: "Teardown", log_file: Path, wait_s: float | None = None) -> None:
        """Start the master connection (recorded in ``teardown``) and wait until it answers, or say why it cannot:
        a wrong host key is a RefusedError, anything else ``Unreachable``."""
        if self.control is None:
            raise ConfigError("a master connection needs a control directory")
        argv = [*self._base("-M", "-N"), "-o", "ControlPersist=no"]
        argv[argv.index("ControlMaster=no")] = "ControlMaster=yes"
        self.master = processes.start(argv, teardown, log_file)
        deadline = time.monotonic() + (wait_s or self.options.connect_timeout_s + 5)
        while not self.alive():
            if not self.master.running() or time.monotonic() > deadline:
                said = self.master.output()
                if self.master.running():
                    self.master.stop()
                raise self.unreachable(said or "no answer before the connect timeout")
            time.sleep(READY_S)

    def alive(self) -> bool:
        """Whether the master answers on its socket."""
        if self.control is None or not self.control.exists():
            return False
        done = self.runner.run(self._base("-O", "check"), ok_codes=range(256), timeout=10)
        return done.returncode == 0

    def session(self, remote: Sequence[str], teardown: "Teardown", log_file: Path) -> processes.Process:
        """``remote`` run on the host for as long as this ssh session lasts: a process of ours (recorded in
        ``teardown``), its output in ``log_file``, its stdin kept open (``Process.popen.stdin``): closing it, or
        this process ending, closes the remote program's stdin."""
        return processes.start(self.argv(remote), teardown, log_file, keep_stdin=True)

    def forward(self, local: Path, remote: str) -> None:
        """Forward unix socket ``local`` (made by the master, in a folder of ours) to unix socket ``remote`` on the
        host; it lives as long as the master (``cancel`` ends it). Unreachable with what ssh said when it cannot."""
        spec = self._socket_spec(local, remote)
        done = self.runner.run([*self._base("-O", "forward"), "-L", spec], ok_codes=range(256), timeout=30)
        if done.returncode != 0:
            raise Unreachable(f"host {self.host.name}: ssh could not forward {local} to its socket {remote}: "
                              f"{done.stderr.strip() or 'ssh said nothing'}")

    def cancel(self, local: Path, remote: str) -> None:
        """End a forward ``forward`` made (nothing when the master is gone: its forwards went with it)."""
        if self.alive():
            self.runner.run([*self._base("-O", "cancel"), "-L", self._socket_spec(local, remote)],
                            ok_codes=range(256), timeout=30)

    def _socket_spec(self, local: Path, remote: str) -> str:
        for path in (str(local), remote):
            if not path.startswith("/") or ":" in path or len(path) > SOCKET_PATH_MAX or any(c.isspace() for c in path):
                raise UnsupportedError(f"host {self.host.name}: {path!r} cannot be a forwarded unix socket (an "
                                       f"absolute path of at most {SOCKET_PATH_MAX} characters, no colon or space)")
        return f"{local}:{remote}"
