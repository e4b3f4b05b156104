"""``make lab``: scripts/lab.py starts JupyterLab from the venv on localhost, prints the URL with its token, shows
the notebooks and offers the flashscale kernel. Started on a free port and stopped (its own process group)."""
from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.lab


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _printed_url(log: Path, port: int, process: subprocess.Popen, deadline: float) -> str:
    """The ``http://127.0.0.1:<port>/lab?token=...`` JupyterLab prints once it listens."""
    pattern = re.compile(rf"http://127\.0\.0\.1:{port}/lab\?token=\w+")
    while time.monotonic() < deadline and process.poll() is None:
        found = pattern.search(log.read_text(errors="replace"))
        if found:
            return found.group(0)
        time.sleep(0.5)
    raise AssertionError(f"JupyterLab printed no URL with a token (exit status {process.poll()}):\n"
                         f"{log.read_text()[-3000:]}")


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as answer:
        assert answer.status == 200
        return json.load(answer)


@pytest.fixture
def lab(tmp_path):
    pytest.importorskip("jupyterlab", reason="JupyterLab is the lab extra: pip install -e '.[lab]'")
    port, log = _free_port(), tmp_path / "lab.log"
    with log.open("w") as out:
        process = subprocess.Popen([sys.executable, str(ROOT / "scripts" / "lab.py"), "--port", str(port)],
                                   stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        yield port, log, process
    finally:
        os.killpg(process.pid, signal.SIGTERM)  # its own process group only
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def test_lab_lists_the_notebooks_and_the_flashscale_kernel_on_localhost(lab):
    port, log, process = lab
    url = _printed_url(log, port, process, time.monotonic() + 60)
    token = url.split("token=")[1]
    base = f"http://127.0.0.1:{port}/api"

    specs = _get(f"{base}/kernelspecs?token={token}")
    assert "flashscale" in specs["kernelspecs"], sorted(specs["kernelspecs"])
    argv = specs["kernelspecs"]["flashscale"]["spec"]["argv"]
    assert Path(argv[0]).resolve() == Path(sys.executable).resolve(), argv  # the venv's own Python
    assert specs["default"] == "flashscale"

    listed = {item["name"] for item in _get(f"{base}/contents?token={token}")["content"]}
    assert {"quickstart.ipynb", "03_layout_tax.ipynb"} <= listed, sorted(listed)
    with pytest.raises(urllib.error.HTTPError, match="403"):  # the token is needed
        _get(f"{base}/contents")
    assert process.poll() is None, log.read_text()[-2000:]
