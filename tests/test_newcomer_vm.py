"""The VM lab from a checkout under /var/tmp, where many CI systems clone and where virtme-ng's guest has a tmpfs
of its own: which host folders are mounted into the guest and how (fast), and a real boot from such a checkout that
runs its own venv's python and writes into its results folder (marker vm: one TCG boot)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from flashscale.system.vmlab import vm
from flashscale.system.commands import RecordingRunner
from flashscale.system.vmlab.mounts import STAGING, guest_mounts, not_seen

ROOT = Path(__file__).resolve().parents[1]
CLONE = Path("/var/tmp/ci/builds/flashscale")  # a CI system's clone, two folders below /var/tmp


def test_a_checkout_under_var_tmp_is_mounted_read_only_and_its_results_folder_bound_after_it():
    """vng mounts every --rwdir before every --rodir: the results folder inside the checkout is staged in /run and
    bound to its own path once the checkout is there, so the checkout stays read-only and the results writable."""
    data = CLONE / "data" / "campaigns"
    mounts = guest_mounts([CLONE, CLONE / ".venv", CLONE], [data])
    assert mounts.options == (f"--rwdir={STAGING}0={data}", f"--rodir={CLONE}")
    assert mounts.first == (f"mount --bind {STAGING}0 {data}",)


def test_what_the_guest_sees_already_is_passed_as_before():
    """A checkout on the host's root file system, or in /tmp (an overlay of the host's /tmp), needs no mount; a
    results folder under /var/tmp outside the checkout is a plain --rwdir (vng makes its mount point)."""
    for checkout in (Path("/work/main"), Path("/tmp/ci/flashscale")):
        mounts = guest_mounts([checkout, checkout / ".venv"], [Path("/tmp/results"), Path("/var/tmp/results")])
        assert mounts.options == ("--rwdir=/tmp/results", "--rwdir=/var/tmp/results") and mounts.first == ()
    assert not_seen(Path("/var/tmp/x")) and not_seen(Path("/run/x")) and not_seen(Path("/dev/shm/x"))
    assert not not_seen(Path("/tmp/x")) and not not_seen(Path("/var/lib/dpkg")) and not not_seen(Path("/var/tmpx"))


def test_a_checkout_inside_a_results_folder_and_a_venv_elsewhere_are_each_mounted_once():
    venv = Path("/var/tmp/venvs/fs")
    mounts = guest_mounts([CLONE, venv, CLONE / "tests"], [Path("/var/tmp/ci")])
    assert mounts.options == ("--rwdir=/var/tmp/ci", f"--rodir={venv}") and mounts.first == ()


def test_the_guest_binds_before_its_boot_mark_and_stops_when_it_cannot(tmp_path, monkeypatch):
    """The lab's argv for a command whose checkout is under /var/tmp: the bind comes first in the guest's script,
    and a failed bind ends the guest before its command (the boot then fails, quoting the console)."""
    monkeypatch.setattr(vm, "project_root", lambda: CLONE)
    monkeypatch.setattr(vm, "kernel_image", lambda: Path("/boot/vmlinuz-test"))
    lab = vm.Lab(vm.VmSpec(devices=1), RecordingRunner())
    lab.workdir = lab.tool_tmp = tmp_path
    data = CLONE / "data" / "campaigns"
    argv = lab.argv(["true"], [data], CLONE, False, None, data / "out.log")
    assert f"--rodir={CLONE}" in argv and f"--rwdir={STAGING}0={data}" in argv and f"--rwdir={data}" not in argv
    script = argv[argv.index("--exec") + 1]
    assert script.startswith(f"mount --bind {STAGING}0 {data} || exit 1; echo {vm.BOOT_MARK} >> {data}/out.log")


# ---- a real boot ------------------------------------------------------------------------------------------------

# Run by the clone's own python on the host: one boot of the lab as the VM campaign boots it (vmlab: this python,
# the checkout as its folder, the results folder inside the checkout as the one it writes), running GUEST_CHECK.
HOST_RUN = """
import sys
from flashscale.paths import project_root
from flashscale.system.vmlab import vm
data = project_root() / "data" / "campaigns"
share = data / "flashscale-var-tmp"
share.mkdir(parents=True)
with vm.Lab(vm.VmSpec(devices=1, device_size=2**20, accelerator="tcg", name="var-tmp")) as lab:
    boot = lab.boot([sys.executable, "-c", sys.argv[1], str(data / "seen.json")], share, rwdirs=[data],
                    cwd=project_root(), timeout_s=400)
    print(boot.output.read_text(), f"exit status {boot.returncode} after {boot.seconds:.0f} s")
sys.exit(boot.returncode)
"""
# In the guest: which python and which flashscale ran, from which folder, and whether the checkout was writable.
GUEST_CHECK = """
import json, os, sys
from pathlib import Path
import flashscale.paths
root = flashscale.paths.project_root()
try:
    (root / "written-by-the-guest").write_text("")
    writable = True
except OSError:
    writable = False
Path(sys.argv[1]).write_text(json.dumps({"prefix": sys.prefix, "package": flashscale.paths.__file__,
                                         "cwd": os.getcwd(), "checkout_writable": writable}))
"""


def _clone_under_var_tmp(parent: Path) -> Path:
    """This checkout's code and runners (as they are now) in ``parent/ci/builds/flashscale``, compiled as make
    deps-vm compiles them, with a venv of its own there that reads the installed packages from this one's."""
    clone = parent / "ci" / "builds" / "flashscale"
    for folder in ("lib", "runners"):
        shutil.copytree(ROOT / folder, clone / folder, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    shutil.copy2(ROOT / "pyproject.toml", clone / "pyproject.toml")
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(clone / "lib")], check=True)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(clone / ".venv")], check=True)
    packages = Path(sys.prefix, "lib", f"python{sys.version_info.major}.{sys.version_info.minor}", "site-packages")
    own = clone / ".venv" / packages.relative_to(sys.prefix)
    (own / "flashscale-clone.pth").write_text(f"{clone / 'lib'}\n{packages}\n")
    return clone


@pytest.mark.vm
@pytest.mark.root
def test_the_vm_runs_the_python_of_a_checkout_under_var_tmp_and_writes_its_results_folder():
    """make demo-vm from a clone under /var/tmp: the guest runs that clone's .venv/bin/python (before the fix:
    "env: '.../.venv/bin/python': No such file or directory") and its flashscale, in the clone, which it cannot
    write, and writes into the clone's data folder."""
    parent = Path(tempfile.mkdtemp(prefix="flashscale-clone-", dir="/var/tmp"))
    try:
        clone = _clone_under_var_tmp(parent)
        path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", os.defpath)])  # vng
        ran = subprocess.run([str(clone / ".venv" / "bin" / "python"), "-c", HOST_RUN, GUEST_CHECK], cwd=clone,
                             env={**os.environ, "PATH": path}, capture_output=True, text=True, timeout=600)
        assert ran.returncode == 0, ran.stdout + ran.stderr[-3000:]
        seen = json.loads((clone / "data" / "campaigns" / "seen.json").read_text())
        assert seen == {"prefix": str(clone / ".venv"), "package": str(clone / "lib" / "flashscale" / "paths.py"),
                        "cwd": str(clone), "checkout_writable": False}
        assert not (clone / "written-by-the-guest").exists()
    finally:
        shutil.rmtree(parent)
