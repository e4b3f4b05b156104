"""A throwaway PostgreSQL cluster of flashscale's own, on the layout under test, for pgbench.

    with Teardown(...) as down:                      # (a Teardown; closed however the block ends)
        cluster = postgres.create(folder_parent, down, runner, cgroup_procs=...)
        cluster.client_args()                        # -h <its socket directory> -p <its port> -U postgres

``create`` makes a scratch directory of ours on the layout (``flashscale-pg-*``, kind ``scratch``: removed with
everything in it), runs ``initdb`` there as the unprivileged ``postgres`` user (initdb refuses root), and starts
``postgres`` in the foreground (kind ``process``, inside the layout's throttled cgroup) listening only on a Unix
socket in that directory (``listen_addresses`` empty) under a port number free on the loopback: never the system's
cluster, its directory, socket or port. Both are recorded before they exist, so success, error, Ctrl-C and
``flashscale reap`` stop the server and remove the directory. The server runs with the capability to search
directories (``CAP_DAC_READ_SEARCH``, ambient, through ``setpriv``) so that it can reach a layout under flashscale's
root-only temporary directories without any of them being opened up.
"""
from __future__ import annotations

import os
import pwd
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from . import processes, undo
from .commands import Runner
from ..errors import UnsupportedError

USER = "postgres"
BIN_ROOT = Path("/usr/lib/postgresql")
SOCKET_PATH_MAX = 107  # sun_path, less its terminating NUL
READY_TIMEOUT_S = 60
SETTINGS = {"listen_addresses": "", "shared_buffers": "128MB", "max_connections": "200", "fsync": "on"}


def bin_dir() -> Path:
    """The newest PostgreSQL server's programs (Debian's /usr/lib/postgresql/<major>/bin)."""
    found = sorted((p for p in BIN_ROOT.glob("*/bin") if (p / "initdb").is_file()),
                   key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0)
    if not found:
        raise UnsupportedError(f"no PostgreSQL server under {BIN_ROOT}: apt-get install postgresql")
    return found[-1]


def free_port() -> int:
    """A TCP port free on the loopback now (the socket file is named after it; nothing listens on TCP)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def as_user(argv: Sequence[str]) -> list[str]:
    """``argv`` run as the postgres user, able to search (not read) directories it does not own."""
    return ["setpriv", f"--reuid={USER}", f"--regid={USER}", "--init-groups", "--inh-caps=+dac_read_search",
            "--ambient-caps=+dac_read_search", *map(str, argv)]


@dataclass
class Cluster:
    folder: Path
    port: int
    server: processes.Process
    bin: Path

    @property
    def data(self) -> Path:
        return self.folder / "data"

    def client_args(self) -> list[str]:
        return ["-h", str(self.folder), "-p", str(self.port), "-U", USER]

    def version(self, runner: Runner) -> str:
        return runner.run([str(self.bin / "postgres"), "--version"]).stdout.strip()

    def stop(self, runner: Runner) -> None:
        """A fast shutdown through pg_ctl; the server's process record stops whatever is left."""
        try:
            if self.server.running():
                runner.run(as_user([self.bin / "pg_ctl", "stop", "-D", self.data, "-m", "fast", "-w", "-t", "60"]))
            self.server.popen.wait(timeout=60)
        finally:
            if self.server.popen.poll() is None:
                self.server.stop()


def create(parent: Path, down, runner: Runner, *, cgroup_procs: Sequence[Path] = (),
           settings: dict | None = None) -> Cluster:
    """initdb in a scratch directory of ours under ``parent`` and start its server; return when it accepts."""
    try:
        pwd.getpwnam(USER)
    except KeyError:
        raise UnsupportedError(f"no {USER!r} user on this machine: apt-get install postgresql") from None
    programs, port = bin_dir(), free_port()
    folder = undo.make_scratch(parent, "pg", down)
    owner = pwd.getpwnam(USER)
    os.chown(folder, owner.pw_uid, owner.pw_gid)
    if len(str(folder / f".s.PGSQL.{port}")) > SOCKET_PATH_MAX:
        raise UnsupportedError(f"the socket path under {folder} is longer than {SOCKET_PATH_MAX} characters")
    data = folder / "data"
    runner.run(as_user([programs / "initdb", "-D", data, "-A", "trust", "-U", USER, "-E", "UTF8", "--locale=C",
                        "--no-sync"]))
    options = [a for k, v in {**SETTINGS, **(settings or {})}.items() for a in ("-c", f"{k}={v}")]
    server = processes.start(as_user([programs / "postgres", "-D", data, "-p", port, "-k", folder, *options]),
                             down, folder / "server.log", cgroup_procs=cgroup_procs)
    cluster = Cluster(folder, port, server, programs)
    _wait_ready(cluster, runner)
    return cluster


def _wait_ready(cluster: Cluster, runner: Runner) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if not cluster.server.running():
            raise UnsupportedError(f"postgres exited at start: {cluster.server.output()[-1000:]}")
        done = runner.run([cluster.bin / "pg_isready", "-q", *cluster.client_args()], ok_codes=(0, 1, 2))
        if done.returncode == 0:
            return
        time.sleep(0.2)
    raise UnsupportedError(f"postgres did not accept connections within {READY_TIMEOUT_S} s")
