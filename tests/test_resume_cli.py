"""``flashscale run`` killed with SIGKILL while its notebook measures, then ``--resume``: the kernel that died
without its teardown is found by its stale lock, what it left is undone, and the report covers every run once."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
import yaml

from flashscale.measure import campaign_folder
from flashscale.system.lock import LOCK_FILE

from conftest import leftover_mounts, loop_devices_backed_under

pytestmark = pytest.mark.root

FLASHSCALE = Path(sys.executable).with_name("flashscale")
PARAMETERS = dict(DEVICES=1, DEVICE_SIZE=2**30, LAYOUTS=["single"], RW=["write", "read"], BS=[1048576],
                  NUMJOBS=[1, 2], IODEPTH=[1], REPETITIONS=1, RUNTIME_S=1, RAMP_S=0, FILE_SIZE=16 * 2**20)
DECLARED = {"CAMPAIGN": "cli", "DATA_DIR": "data", "BACKING_DIR": None, **PARAMETERS,
            "RESUME": False, "FORCE_RESUME": False, "ON_FAILURE": "continue"}  # as every measuring notebook
CELLS = ["".join(f"{name} = {value!r}\n" for name, value in DECLARED.items()),
         "from flashscale.campaigns import campaign\n"
         "spec = campaign.CampaignSpec.from_parameters(**{k: v for k, v in dict(globals()).items() if k.isupper()})\n"
         "result = campaign.run(spec, progress=False)\nprint(result.notes)"]


def checkout(tmp_path: Path) -> Path:
    """A checkout of its own (pyproject.toml, runners/, notebooks/) holding one tiny measuring notebook."""
    root = tmp_path / "checkout"
    (root / "runners").mkdir(parents=True)
    (root / "notebooks").mkdir()
    (root / "pyproject.toml").write_text("")
    book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(CELLS[0], metadata={"tags": ["parameters"]}),
                                           nbformat.v4.new_code_cell(CELLS[1])])
    book.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(book, root / "notebooks" / "tiny.ipynb")
    campaign_file = root / "runners" / "cli.yaml"
    campaign_file.write_text(yaml.safe_dump({"campaign": "cli", "notebooks": ["tiny"], "parameters": {
        **PARAMETERS, "DATA_DIR": str(tmp_path / "data"), "BACKING_DIR": str(tmp_path)}}))
    return campaign_file


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_flashscale_run_killed_then_resumed(tmp_path):
    campaign_file = checkout(tmp_path)
    data = tmp_path / "data" / "cli"
    proc = subprocess.Popen([str(FLASHSCALE), "run", str(campaign_file)], cwd=campaign_file.parent.parent,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and not (len(campaign_folder.read_rows(data)[0]) >= 2 if data.is_dir() else False):
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        time.sleep(0.1)
    kernel = json.loads((data / LOCK_FILE).read_text())["pid"]
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    deadline = time.time() + 30
    while time.time() < deadline and not gone(kernel):  # the kernel sees its parent gone and exits, no teardown
        time.sleep(0.2)
    assert gone(kernel) and loop_devices_backed_under(tmp_path), "nothing left behind: the test proves nothing"
    kept = [r for r in campaign_folder.read_rows(data)[0] if r["phase"] == "measure"]
    resumed = subprocess.run([str(FLASHSCALE), "run", str(campaign_file), "--resume"], cwd=campaign_file.parent.parent,
                             capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    rows = [r for r in campaign_folder.read_rows(data)[0] if r["phase"] == "measure"]
    keys = [(r["layout"], r["point"], r["rep"]) for r in rows]
    assert len(keys) == len(set(keys)) == 4 and all(r in rows for r in kept)
    reports = campaign_file.parent.parent / "reports" / "cli"
    assert json.loads((reports / "progress.json").read_text())["done"] == ["tiny.ipynb"]
    executed = (reports / "tiny.ipynb").read_text()
    assert f"undid what the interrupted run (pid {kernel})" in executed and "Resumed the interrupted" in executed
    assert loop_devices_backed_under(tmp_path) == [] and leftover_mounts(data) == []
    assert not (data / LOCK_FILE).exists() and not (reports / LOCK_FILE).exists()
