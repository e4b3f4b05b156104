"""The kernel a notebook runs in when flashscale executes it: ZeroMQ over Unix sockets (IPC), not TCP.

papermill (through nbclient) starts a Jupyter kernel for each notebook. jupyter_client's default transport is TCP
on 127.0.0.1: five ports any local user may connect to, where ipykernel warns "Kernel is running over TCP without
encryption". ``LocalKernelManager`` starts the same kernel on IPC: its sockets are files named after its
connection file, in Jupyter's runtime folder (mode 0700, where Jupyter keeps connection files); nothing listens on
the network. JupyterLab (``scripts/lab.py``) stays on TCP on localhost: a browser cannot reach a Unix socket.
"""
from __future__ import annotations

import os
import uuid

from jupyter_client import AsyncKernelManager
from jupyter_core.paths import jupyter_runtime_dir
from traitlets import CaselessStrEnum, default


class LocalKernelManager(AsyncKernelManager):
    """jupyter_client's kernel manager on the IPC transport, with a connection file of its own, so that its
    sockets, named after it, are its own too (without one, jupyter_client names them ``kernel-ipc-1`` to ``-5`` in
    the kernel's working folder, and two notebooks run at once from one checkout would take each other's)."""

    transport = CaselessStrEnum(["tcp", "ipc"], default_value="ipc", config=True)

    @default("connection_file")
    def _own_connection_file(self) -> str:
        folder = jupyter_runtime_dir()
        os.makedirs(folder, mode=0o700, exist_ok=True)
        return os.path.join(folder, f"kernel-{uuid.uuid4().hex[:12]}.json")  # short: a socket's path holds 107 bytes
