"""The recipe of docs/howto/real-devices.md in the VM lab (issue 42, Done when): `flashscale run runners/testbed.yaml
-p TESTBED=... -p 'LAYOUTS=[single, md-raid0]'`, run inside a guest with a real kernel (md) on the lab's QEMU NVMe
devices, named by identity as a user names theirs: dry first (the guard's checks and mdadm's commands, nothing
touched), then for real. md-raid0 is built and measured, its tax stated against N x single (no jbod), and nothing
is left: no md array, no mount, no manifest in the guest; no lab on the host. One boot, about 20 s under TCG, plus
the notebook's own start and a campaign of 8 runs of 1 s."""
from __future__ import annotations

import json
import sys

import pandas as pd
import pytest

from flashscale.system.vmlab import vm
from test_vm import MiB, ROOT

pytestmark = [pytest.mark.vm, pytest.mark.root]

TINY = ["-p", "RW=[write, read]", "-p", "NUMJOBS=[1]", "-p", "IODEPTH=[1]", "-p", "REPETITIONS=2", "-p",
        "RUNTIME_S=1", "-p", "RAMP_S=0", "-p", "FILE_SIZE=16777216"]

# Inside the guest: a HOME of its own, md and device-mapper loaded as the lab's campaigns load them, loopback up for
# the notebook's kernel, the recipe dry then real (each one's output kept), then what the guest still holds.
GUEST = """
import contextlib, io, json, os, subprocess, sys, tempfile
from pathlib import Path
home = tempfile.mkdtemp(prefix="flashscale-home-")  # the guest's own /tmp: the host's files are read-only here, and
for name, sub in (("HOME", ""), ("JUPYTER_RUNTIME_DIR", "jupyter"), ("MPLCONFIGDIR", "mpl"), ("IPYTHONDIR", "ipy")):
    os.environ[name] = os.path.join(home, sub)  # the notebook kernel's unix sockets bind on no shared folder
from flashscale import cli
from flashscale.system.commands import Runner
from flashscale.system.devices import System
from flashscale.system.teardown import manifest_dir
from flashscale.system.vmlab.vm import prepare_guest
share, recipe = Path(sys.argv[1]), json.loads(sys.argv[2])
prepare_guest(Runner(), System())
subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
for name, more in (("dry", []), ("real", recipe["real"])):  # in one process: Python's imports once under TCG
    said = io.StringIO()
    with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
        status = cli.main(["run", *recipe["argv"], *more])
    (share / f"{name}.json").write_text(json.dumps([status, said.getvalue()]))
left = {"mdstat": Path("/proc/mdstat").read_text(), "mounts": Path("/proc/mounts").read_text(),
        "manifests": sorted(str(p) for p in manifest_dir().glob("*.json"))}
(share / "left.json").write_text(json.dumps(left))
"""


def test_the_recipe_builds_and_measures_md_raid0_against_n_times_single(tmp_path, no_lab_before):
    share = tmp_path / "flashscale-share"
    share.mkdir()
    with vm.Lab(vm.VmSpec(devices=2, device_size=512 * MiB, name="vm-recipe")) as lab:
        bed = tmp_path / "testbed.yaml"
        bed.write_text("name: vm-recipe\ndevices:\n" + "".join(f'  - "{i}"\n' for i in lab.identities))
        argv = ["runners/testbed.yaml", "--reports", str(tmp_path / "reports"), "-p", f"TESTBED={bed}",
                "-p", f"DATA_DIR={tmp_path / 'data'}", "-p", "LAYOUTS=[single, md-raid0]", *TINY]
        recipe = {"argv": argv, "real": ["-p", "DRY_RUN=false", "-p", f"CONFIRM={','.join(lab.identities)}"]}
        boot = lab.boot(["env", "PYTHONDONTWRITEBYTECODE=1", sys.executable, "-c", GUEST, str(share),
                         json.dumps(recipe)], share, rwdirs=[tmp_path], cwd=ROOT, timeout_s=2400)
        assert boot.returncode == 0, boot.output.read_text()[-4000:]
    (dry_status, dry), (real_status, real) = (json.loads((share / f"{n}.json").read_text()) for n in ("dry", "real"))
    assert dry_status == 0 and "nothing was touched" in dry and "REFERENCE" not in dry, dry[-4000:]
    for identity in lab.identities:
        assert f" is {identity}" in dry, dry[-4000:]  # the guard's check of each device, by its identity
    assert "mdadm --create" in dry and "--level=0" in dry and "--raid-devices=2" in dry, dry[-4000:]
    assert real_status == 0, real[-4000:]
    rows = pd.read_json(tmp_path / "data" / "testbed" / "rows.jsonl", lines=True)
    measured = rows[rows["phase"] == "measure"]
    assert set(measured["layout"]) == {"single", "md-raid0"} and (measured["status"] == "ok").all()
    assert (measured["bw_bytes"] > 0).all() and set(measured.loc[measured["layout"] == "md-raid0", "devices"]) == {2}
    assert measured.groupby(["layout", "rw"]).size().tolist() == [2] * 4  # 2 runs of 1 point a layout and rw
    page = (tmp_path / "reports" / "testbed" / "quickstart.html").read_text()
    assert "against 2 x single" in page
    left = json.loads((share / "left.json").read_text())
    assert not [line for line in left["mdstat"].splitlines() if line.startswith("md")], left["mdstat"]
    assert " /tmp/flashscale-" not in left["mounts"] and left["manifests"] == [], left
