"""The test bed recipe of docs/howto/real-devices.md (issue 42, item 1): `flashscale run runners/testbed.yaml` with
the layouts named on the command line, a dry run first (the guard's checks and every command, nothing touched),
then for real, on loop devices the test made standing in for drives (as root). md-raid0 needs the VM lab."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from conftest import sha256

ROOT = Path(__file__).resolve().parents[1]
TINY = ["-p", "RW=[write, read]", "-p", "NUMJOBS=[1]", "-p", "IODEPTH=[1]", "-p", "REPETITIONS=2", "-p",
        "RUNTIME_S=1", "-p", "RAMP_S=0", "-p", "FILE_SIZE=16777216"]


def _run(tmp_path, bed, *more):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "lib")}
    return subprocess.run([sys.executable, "-m", "flashscale.cli", "run", "runners/testbed.yaml",
                           "--reports", str(tmp_path / "reports"), "-p", f"TESTBED={bed['file']}",
                           "-p", f"DATA_DIR={tmp_path / 'data'}", "-p", "LAYOUTS=[single, jbod, btrfs-raid0]",
                           *TINY, *more], capture_output=True, text=True, env=env, cwd=ROOT, timeout=900)


@pytest.mark.root
@pytest.mark.long
def test_the_recipe_runs_dry_then_measures_the_layouts_named_on_the_command_line(tmp_path, bed):
    before = [sha256(d.path) for d in bed["devices"]]
    dry = _run(tmp_path, bed)
    said = dry.stdout + dry.stderr
    assert dry.returncode == 0 and "nothing was touched" in said, said[-3000:]
    assert said.splitlines()[0].startswith("  quickstart: device ")  # the estimate first
    for device in bed["devices"]:
        assert f"# {device.path} is {device.id}" in said and f"blkdiscard {device.path}" in said
    assert "mkfs.xfs" in said and "mkfs.btrfs" in said and "-d raid0" in said
    assert [sha256(d.path) for d in bed["devices"]] == before

    real = _run(tmp_path, bed, "-p", "DRY_RUN=false", "-p", f"CONFIRM={','.join(bed['ids'])}")
    assert real.returncode == 0, (real.stdout + real.stderr)[-3000:]
    assert (tmp_path / "reports" / "testbed" / "quickstart.html").exists()
    rows = pd.read_json(tmp_path / "data" / "testbed" / "rows.jsonl", lines=True)
    measured = rows[rows["phase"] == "measure"]
    assert set(measured["layout"]) == {"single", "jbod", "btrfs-raid0"} and (measured["bw_bytes"] > 0).all()
    assert measured.groupby(["layout", "rw"]).size().tolist() == [2] * 6  # 2 runs of 1 point a layout and rw
    assert sorted(measured.loc[measured["layout"] != "single", "devices"].unique()) == [2]



@pytest.mark.root
@pytest.mark.long
def test_the_recipe_without_jbod_measures_the_tax_against_n_times_single(tmp_path, bed):
    """`LAYOUTS=[single, <an array>]`, the issue's own shape: no jbod, so the tax is against N x single
    (``analysis.stand_in``), dry and then for real (btrfs-raid0: this kernel has no md; the VM lab builds md-raid0,
    test_vm_recipe). With neither jbod nor single the run is refused before any device is read."""
    before = [sha256(d.path) for d in bed["devices"]]
    refused = _run(tmp_path, bed, "-p", "LAYOUTS=[btrfs-raid0]")
    assert refused.returncode != 0 and "REFERENCE='jbod' is not among LAYOUTS=['btrfs-raid0']" in refused.stderr
    assert "or add 'single'" in refused.stderr and f"# {bed['devices'][0].path}" not in refused.stdout
    layouts = ["-p", "LAYOUTS=[single, btrfs-raid0]"]
    dry = _run(tmp_path, bed, *layouts)
    said = dry.stdout + dry.stderr
    assert dry.returncode == 0 and "nothing was touched" in said and "REFERENCE" not in said, said[-3000:]
    for device in bed["devices"]:
        assert f"# {device.path} is {device.id}" in said and f"blkdiscard {device.path}" in said
    assert "mkfs.btrfs" in said and "-d raid0" in said
    assert [sha256(d.path) for d in bed["devices"]] == before

    real = _run(tmp_path, bed, *layouts, "-p", "DRY_RUN=false", "-p", f"CONFIRM={','.join(bed['ids'])}")
    assert real.returncode == 0, (real.stdout + real.stderr)[-3000:]
    rows = pd.read_json(tmp_path / "data" / "testbed" / "rows.jsonl", lines=True)
    measured = rows[rows["phase"] == "measure"]
    assert set(measured["layout"]) == {"single", "btrfs-raid0"} and (measured["bw_bytes"] > 0).all()
    page = (tmp_path / "reports" / "testbed" / "quickstart.html").read_text()
    assert "against 2 x single" in page
