"""Real hosts over SSH: OpenSSH's client through the ``Runner``, one connection per host reused for a campaign.

    host = SshHost("node1", "192.0.2.11", port=22, user="root")
    link = Link(host, SshOptions(known_hosts="~/.ssh/known_hosts"), runner, control_dir)
    link.connect(teardown, log)            # the master connection, a process of ours recorded in the teardown
    link.run(["uname", "-r"])              # every later command rides on that one connection
    link.forward(remote_port)              # a port on the driver's loopback reaching the host's loopback

Every command is an argv list, quoted once at this boundary (``shlex.join``) for the remote shell, and run through
``Runner.run``: logged, exit status checked, a timeout per step. Options that never change: ``BatchMode=yes`` (no
prompt ever waits), ``StrictHostKeyChecking=yes`` against the campaign's known_hosts file only (a host whose key is
missing or different is refused; checking is never turned off), ``ConnectTimeout``, and a keep-alive that notices a
host that went silent within ``ALIVE_S`` seconds. ssh's own exit status 255 means the connection failed:
``Unreachable`` names the host and what ssh said.

The connection is a master of ssh's connection sharing (``-M -N`` with ``ControlPath``), started as a background
process of ours by ``processes.start`` (recorded with its pid and start time before it runs, stopped by both),
with ``ControlPersist=no``: ssh's own persistence forks a daemon whose pid we would have to guess. Its socket lives
in a directory of ours (mode 0700). Every command and port forward goes through that socket; a command given when
the master is gone connects afresh (``ControlMaster=no``), which is how ``flashscale reap`` reaches a host after the
driver died.

``package`` is flashscale itself as one zip (its Python files of this checkout, nothing else) that ``ship`` copies
to the host for the campaign; ``Link.agent`` runs it there with ``python3 -I -S``: no site-packages, no
environment, only Python's standard library and this zip (``flashscale.arrays.remote`` is the host's side).
"""
from __future__ import annotations

import io
import json
import logging
import shlex
import socket
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from . import processes
from .commands import Completed, Runner
from .. import errors
from ..errors import CommandError, ConfigError, FlashscaleError, RefusedError, UnsupportedError

if TYPE_CHECKING:
    from .teardown import Teardown

log = logging.getLogger("flashscale.ssh")

SSH_FAILED = 255  # ssh's own exit status when the connection (not the remote command) failed
ALIVE_S, ALIVE_COUNT = 5, 3  # a silent host is noticed after ALIVE_S x ALIVE_COUNT seconds
PACKAGE = "flashscale.pyz"
AGENT_MAIN = "flashscale.arrays.remote"  # the host's side, run from the shipped zip (never imported here)
HOST_KEY_WORDS = ("Host key verification failed", "REMOTE HOST IDENTIFICATION HAS CHANGED",
                  "No ED25519 host key is known", "host key for", "No matching host key")
READY_S = 0.1


class Unreachable(UnsupportedError):
    """A host that ssh could not reach or lost: the connection failed, not the command it carried."""


@dataclass(frozen=True)
class SshHost:
    """One host as SSH reaches it: the name rows give it, its address, SSH port and login."""

    name: str
    address: str
    port: int = 22
    user: str = "root"

    def __post_init__(self) -> None:
        if not self.name or any(c in self.name for c in "/ \0") or self.name.startswith("."):
            raise ConfigError(f"host name {self.name!r} must be a plain name (no /, space or leading dot)")
        if not self.address or self.address.startswith("-") or any(c.isspace() for c in self.address):
            raise ConfigError(f"host {self.name}: address {self.address!r} is not a host name or address")
        if isinstance(self.port, bool) or not isinstance(self.port, int) or not 0 < self.port < 65536:
            raise ConfigError(f"host {self.name}: ssh port {self.port!r} must be a TCP port number")
        if not self.user or self.user.startswith("-") or any(c.isspace() for c in self.user):
            raise ConfigError(f"host {self.name}: user {self.user!r} is not a login name")


@dataclass(frozen=True)
class SshOptions:
    """How every host is reached: the known_hosts file its key is checked against (required), the private key and
    ssh_config to use (None: ssh's own), and the timeouts: to connect, and for one step on the host."""

    known_hosts: str
    identity: str | None = None
    config: str | None = None  # an ssh_config file, or "none" for none (the user's ~/.ssh/config otherwise)
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

    def argv(self, control: Path | None) -> list[str]:
        """The options every ssh and scp of ours is given (both spell them with ``-o``)."""
        opts = {"BatchMode": "yes", "StrictHostKeyChecking": "yes",
                "UserKnownHostsFile": str(Path(self.known_hosts).expanduser()), "GlobalKnownHostsFile": "/dev/null",
                "ConnectTimeout": str(self.connect_timeout_s), "ServerAliveInterval": str(ALIVE_S),
                "ServerAliveCountMax": str(ALIVE_COUNT), "ControlMaster": "no",
                "ControlPath": str(control) if control else "none", "LogLevel": "ERROR"}
        if self.identity:
            opts.update(IdentityFile=str(Path(self.identity).expanduser()), IdentitiesOnly="yes")
        config = ["-F", self.config] if self.config else []
        return config + [arg for key, value in opts.items() for arg in ("-o", f"{key}={value}")]

    def record(self) -> dict:
        """What reap needs to reach a host again: these options, as the manifest records them."""
        return {"known_hosts": self.known_hosts, "identity": self.identity, "config": self.config,
                "connect_timeout_s": self.connect_timeout_s}


def package() -> bytes:
    """flashscale's own Python files, as this checkout has them, zipped with a ``__main__`` that runs the host's side:
    what ``python3 -I -S flashscale.pyz`` runs on a host, with nothing else installed there."""
    root = Path(__file__).resolve().parents[1]  # lib/flashscale
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(root.rglob("*.py")):
            if "__pycache__" not in path.parts:
                zf.write(path, str(Path("flashscale") / path.relative_to(root)))
        zf.writestr("__main__.py", f"import sys\nfrom {AGENT_MAIN} import main\nsys.exit(main(sys.argv[1:]))\n")
    return buffer.getvalue()


def free_local_port() -> int:
    """A TCP port free now on this machine's loopback (the kernel's choice)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Link:
    """One host's SSH connection: its master, the commands that ride on it, its port forwards."""

    def __init__(self, host: SshHost, options: SshOptions, runner: Runner, control_dir: Path | None):
        self.host, self.options, self.runner = host, options, runner
        self.control = Path(control_dir) / f"{host.name}.sock" if control_dir else None
        self.master: processes.Process | None = None

    def _base(self, *flags: str) -> list[str]:
        return ["ssh", *flags, *self.options.argv(self.control), "-p", str(self.host.port), "-l", self.host.user,
                self.host.address]

    def argv(self, remote: Sequence[str]) -> list[str]:
        """The ssh command that runs ``remote`` (an argv list) on the host, quoted once for its shell."""
        return [*self._base(), "--", shlex.join(str(a) for a in remote)]

    def _said(self, exc: CommandError) -> str:
        return exc.stderr.strip().splitlines()[-1] if exc.stderr.strip() else "ssh said nothing"

    def run(self, remote: Sequence[str], *, timeout: float | None = None, ok_codes=(0,)) -> Completed:
        """Run ``remote`` on the host; ``Unreachable`` when the connection failed, CommandError when the command did."""
        try:
            return self.runner.run(self.argv(remote), ok_codes=ok_codes,
                                   timeout=timeout or self.options.step_timeout_s)
        except CommandError as exc:
            if exc.returncode == SSH_FAILED:
                raise self._unreachable(exc.stderr) from None
            if exc.returncode == -1:  # our timeout
                raise Unreachable(f"host {self.host.name}: {' '.join(map(str, remote))} did not finish in "
                                  f"{timeout or self.options.step_timeout_s:g} s") from None
            raise

    def _unreachable(self, said: str) -> FlashscaleError:
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
                raise self._unreachable(said or "no answer before the connect timeout")
            time.sleep(READY_S)

    def alive(self) -> bool:
        """Whether the master answers on its socket."""
        if self.control is None or not self.control.exists():
            return False
        done = self.runner.run(self._base("-O", "check"), ok_codes=range(256), timeout=10)
        return done.returncode == 0

    def forward(self, remote_port: int, attempts: int = 5) -> int:
        """A port on this machine's loopback that the master forwards to ``remote_port`` on the host's loopback;
        the forward lives as long as the master (``cancel`` ends it)."""
        for _ in range(attempts):
            local = free_local_port()
            done = self.runner.run([*self._base("-O", "forward"), "-L", f"127.0.0.1:{local}:127.0.0.1:{remote_port}"],
                                   ok_codes=range(256), timeout=30)
            if done.returncode == 0:
                return local
            log.info("forward to %s:%s from %s failed: %s", self.host.name, remote_port, local, done.stderr.strip())
        raise Unreachable(f"host {self.host.name}: no port of this machine could be forwarded to its port "
                          f"{remote_port}: {done.stderr.strip() or 'ssh said nothing'}")

    def cancel(self, local: int, remote_port: int) -> None:
        """End a forward ``forward`` made (nothing when the master is gone: its forwards went with it)."""
        if self.alive():
            self.runner.run([*self._base("-O", "cancel"), "-L", f"127.0.0.1:{local}:127.0.0.1:{remote_port}"],
                            ok_codes=range(256), timeout=30)

    def ship(self, zipped: Path, folder: str, make: bool = True) -> None:
        """Make ``folder`` on the host (mode 0700; refused if it exists) unless ``make`` is False, and copy the zip
        ``zipped`` into it."""
        if make:
            self.run(["mkdir", "-m", "700", folder], timeout=60)
        target = f"[{self.host.address}]" if ":" in self.host.address else self.host.address
        argv = ["scp", "-q", *self.options.argv(self.control), "-P", str(self.host.port), str(zipped),
                f"{self.host.user}@{target}:{folder}/{PACKAGE}"]
        try:
            self.runner.run(argv, timeout=self.options.step_timeout_s)
        except CommandError as exc:
            raise Unreachable(f"host {self.host.name}: flashscale could not be copied to {folder}: "
                              f"{self._said(exc)}") from None

    def agent(self, folder: str, op: str, request: dict | None = None, timeout: float | None = None) -> dict:
        """Run the host's side (``flashscale.arrays.remote``) from the zip in ``folder``: ``op`` with ``request``;
        its answer, or its error raised here as the class it was, the host named."""
        done = self.run(["python3", "-I", "-S", f"{folder}/{PACKAGE}", op, json.dumps(request or {})],
                        timeout=timeout, ok_codes=range(255))
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        if not lines:
            said = (done.stderr.strip().splitlines() or ["it said nothing"])[-1]
            raise UnsupportedError(f"host {self.host.name}: flashscale did not answer {op} (exit status "
                                   f"{done.returncode}): {said}")
        answer = json.loads(lines[-1])
        if not answer.get("ok"):
            kind = getattr(errors, answer.get("kind", ""), FlashscaleError)
            kind = kind if isinstance(kind, type) and issubclass(kind, FlashscaleError) else FlashscaleError
            raise kind(f"on host {self.host.name}: {answer.get('error')}")
        return answer


def reach(details: dict, runner: Runner) -> Link:
    """A link to the host a manifest's ``remote`` entry records: through its master while that still runs, else a
    fresh connection per command."""
    host = SshHost(details["name"], details["address"], details["port"], details["user"])
    link = Link(host, SshOptions(**details["ssh"]), runner, None)
    link.control = Path(details["control"]) if details.get("control") else None
    return link


def undo_remote(details: dict, runner: Runner, folder_for_zip: Path) -> list[str]:
    """What a manifest's ``remote`` entry asks: on its host, undo each manifest it names and remove the folder the
    zip was shipped to; the problems the host reported (empty: everything there is gone). The zip is shipped again
    to ``folder`` when it is gone (a run killed before it was copied, or a host whose folder went)."""
    link = reach(details, runner)
    ship = details["ship"]
    have = link.run(["test", "-f", f"{ship}/{PACKAGE}"], ok_codes=(0, 1), timeout=60).returncode == 0
    if not have:
        made = link.run(["test", "-d", ship], ok_codes=(0, 1), timeout=60).returncode == 0
        zipped = Path(folder_for_zip) / PACKAGE
        zipped.write_bytes(package())
        link.ship(zipped, ship, make=not made)
    answer = link.agent(ship, "reap", {"manifests": details.get("manifests", []), "ship": ship})
    return answer.get("problems", [])
