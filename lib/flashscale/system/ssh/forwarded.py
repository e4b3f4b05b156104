"""A host's fio server that only the driver reaches: on a unix socket in a folder of the host's root-only place,
forwarded by the host's ssh connection to a unix socket in a folder of ours (mode 0700), and stopped with the ssh
session that started it.

    server = Server(agent, teardown, control, label)   # agent: shipped.Agent; teardown: the driver's of the host
    local = server.start(manifest, log)                # the local socket fio's client connects to (sock:PATH)
    heartbeat.add(server) ... heartbeat.discard(server)
    server.stop()

fio's server has no authentication: whoever connects can run any job as root. So no TCP port is opened, on the
host or here. On the host, the agent's ``serve`` step (``arrays.host_side.serve``) starts ``fio --server=sock:PATH``
in a folder of its own (0700) and serves until the ssh session that runs it ends: it reads its stdin, to which the
driver writes a line every ``HEARTBEAT_S`` seconds, and stops the server at end of file (the driver stopped it, or
died: its end of the pipe closes with it) or after ``SILENT_S`` seconds without a line (the driver's machine or
network went silent). Here, the session is a process of ours recorded in the host's teardown, and ssh forwards the
local socket to the host's (``Link.forward``) through the master connection.
"""
from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from pathlib import Path

from .shipped import Agent, answer
from .client import SSH_FAILED
from ..teardown import Teardown
from ...errors import UnsupportedError

log = logging.getLogger("flashscale.forwarded")

HEARTBEAT_S = 5.0  # the driver writes a line to each server's session this often
SILENT_S = 20.0  # ... and a host stops its server after this long without one
READY_S = 30.0  # a server not listening by then is refused
END_S = 10.0  # a session given end of file ends within this, or is stopped


class Server:
    """One fio server on one host, for one layout (``label``), through ``agent``'s link."""

    def __init__(self, agent: Agent, teardown: Teardown, control: Path, label: str):
        self.agent, self.teardown, self.control, self.label = agent, teardown, Path(control), label
        digest = hashlib.sha256(f"{agent.link.host.name}/{label}".encode()).hexdigest()[:12]
        self.local = self.control / f"f-{digest}.sock"
        self.remote: str | None = None
        self.session = None
        self._lock = threading.Lock()

    def start(self, manifest: str, log_file: str) -> Path:
        """Start the host's server (recorded there in ``manifest``, its output in ``log_file`` on the host) and
        forward to it; the local socket. The error the host or ssh gave, when either cannot."""
        argv = self.agent.argv("serve", {"manifest": manifest, "log": log_file})
        said = self.control / f"{self.local.stem}-session.log"
        self.session = self.agent.link.session(argv, self.teardown, said)
        deadline = time.monotonic() + READY_S
        while not any(line.startswith("{") for line in self.session.output().splitlines()):
            if not self.session.running() or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        output, name = self.session.output(), self.agent.link.host.name
        if not any(line.startswith("{") for line in output.splitlines()):
            code = self.session.popen.poll()
            self.stop()
            if code == SSH_FAILED:
                raise self.agent.link.unreachable(output)
            tail = output.strip().splitlines()[-1:] or ["it said nothing"]
            raise UnsupportedError(f"host {name}: its fio server did not start within {READY_S:g} s (exit status "
                                   f"{code}): {tail[0]}")
        try:
            ready = answer(output, 0, "serve", name)
        except Exception:
            self.stop()
            raise
        self.remote = ready["socket"]
        try:
            self.agent.link.forward(self.local, self.remote)
        except Exception:
            self.stop()
            raise
        return self.local

    def running(self) -> bool:
        return self.session is not None and self.session.running()

    def beat(self) -> None:
        """A line to the host's side: the driver is here."""
        with self._lock:
            if self.running() and not self.session.popen.stdin.closed:
                try:
                    self.session.popen.stdin.write(b"\n")
                    self.session.popen.stdin.flush()
                except (BrokenPipeError, ValueError):
                    pass

    def stop(self) -> None:
        """End the forward and the session (end of file first: the host stops its server and undoes what it made
        for it; the session stopped if it does not end by ``END_S``); the local socket removed."""
        if self.remote is not None:
            self.agent.link.cancel(self.local, self.remote)
        if self.session is not None:
            with self._lock:
                try:
                    self.session.popen.stdin.close()
                except BrokenPipeError:
                    pass
            try:
                self.session.popen.wait(timeout=END_S)
            except Exception:  # subprocess.TimeoutExpired: stopped by pid and start time
                self.session.stop()
            ended = [line for line in self.session.output().splitlines() if line.startswith("{")][1:]
            log.info("fio server of %s for %s: %s", self.agent.link.host.name, self.label,
                     json.loads(ended[-1]).get("ended") if ended else "no last word")
        self.local.unlink(missing_ok=True)


class Heartbeat:
    """One thread that ``beat``s every server added, every ``HEARTBEAT_S`` seconds, until ``close``."""

    def __init__(self, every_s: float = HEARTBEAT_S):
        self.every_s, self.servers = every_s, set()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="heartbeat", daemon=True)
        self._thread.start()

    def add(self, server: Server) -> None:
        self.servers.add(server)

    def discard(self, server: Server) -> None:
        self.servers.discard(server)

    def _beat(self) -> None:
        while not self._done.wait(self.every_s):
            for server in list(self.servers):
                server.beat()

    def close(self) -> None:
        self._done.set()
        self._thread.join()
