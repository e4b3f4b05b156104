"""A notebook executed by ``flashscale run`` talks to its kernel over Unix sockets (ZeroMQ's IPC transport), not
TCP: the kernel's own connection file says so, and the run no longer prints ipykernel's "Kernel is running over TCP
without encryption"."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import yaml

pytestmark = pytest.mark.notebook

# What the notebook's kernel was started with: its connection file, as ipykernel read it
PROBE = ("from pathlib import Path\n"
         "from ipykernel.connect import get_connection_file\n"
         "Path(OUT).write_text(Path(get_connection_file()).read_text())")


def _checkout(folder: Path) -> Path:
    """A checkout (pyproject.toml, runners/) whose one notebook writes its kernel's connection file to ``OUT``."""
    (folder / "runners").mkdir(parents=True)
    (folder / "notebooks").mkdir()
    (folder / "pyproject.toml").write_text("")
    parameters = nbformat.v4.new_code_cell("OUT = ''  # where the kernel's connection file is copied")
    parameters.metadata["tags"] = ["parameters"]
    notebook = nbformat.v4.new_notebook(cells=[parameters, nbformat.v4.new_code_cell(PROBE)])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, folder / "notebooks" / "probe.ipynb")
    return folder


def test_flashscale_run_starts_the_kernel_on_ipc_and_prints_no_tcp_warning(tmp_path):
    checkout = _checkout(tmp_path / "checkout")
    runtime = tmp_path / "runtime"  # Jupyter's runtime folder, this run's own
    copied = tmp_path / "connection.json"
    (checkout / "probe.yaml").write_text(yaml.safe_dump({"campaign": "probe", "notebooks": ["probe"],
                                                          "parameters": {"OUT": str(copied)}}))
    ran = subprocess.run([sys.executable, "-m", "flashscale.cli", "run", "probe.yaml"], cwd=checkout,
                         env={**os.environ, "JUPYTER_RUNTIME_DIR": str(runtime)}, capture_output=True, text=True,
                         timeout=300)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert "without encryption" not in ran.stderr + ran.stdout and "[IPKernelApp] WARNING" not in ran.stderr
    connection = json.loads(copied.read_text())
    assert connection["transport"] == "ipc"
    assert Path(connection["ip"]).parent == runtime  # the sockets are <runtime>/kernel-<id>-ipc-<n>, its own
    assert (checkout / "reports" / "probe" / "probe.html").is_file()
    assert sorted(p.name for p in runtime.iterdir()) == [], "the connection file and sockets are removed"
    assert not list(checkout.glob("kernel-ipc*")), "no socket in the kernel's working folder"
