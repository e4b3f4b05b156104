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
from flashscale.system.vmlab.mounts import HOST_MOUNT, HOST_TAG, STAGING, guest_mounts, not_seen

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
    """The lab's script for a command whose checkout is under /var/tmp: the cached folders are bound first, then the
    staged results folder, then the boot mark and the command; a failed step ends the guest before its command (the
    boot then fails, quoting the console). The kernel's command line holds only where the guest finds the script."""
    monkeypatch.setattr(vm, "project_root", lambda: CLONE)
    (tmp_path / "vmlinuz-6.1.0-99-amd64").write_bytes(b"not a kernel")  # the name is all the argv needs
    lab = vm.Lab(vm.VmSpec(devices=1), RecordingRunner(), boot_dir=tmp_path)
    lab.workdir = lab.tool_tmp = tmp_path
    data = CLONE / "data" / "campaigns"
    mounts = lab.mounts([data], CLONE)
    argv = lab.argv(data / "flashscale-share" / vm.COMMAND_FILE, mounts, CLONE, False, None)
    assert f"--rodir={CLONE}" in argv and f"--rwdir={STAGING}0={data}" in argv and f"--rwdir={data}" not in argv
    assert f"--qemu-opts=-virtfs local,path=/,mount_tag={HOST_TAG},security_model=none,readonly=on" in argv
    assert argv[argv.index("--exec") + 1] == f"sh {STAGING}0/flashscale-share/{vm.COMMAND_FILE}"  # before its bind
    lines = lab.script(["true"], mounts, data / "out.log").splitlines()
    assert lines[0] == "#!/bin/sh" and lines[-2:] == [f"echo {vm.BOOT_MARK} >> {data}/out.log 2>&1",
                                                       f"exec true >> {data}/out.log 2>&1"]
    steps = lines[1:-2]
    assert all(step.endswith(" || exit 1") for step in steps) and "cache=loose" in steps[1]
    steps = [step.removesuffix(" || exit 1") for step in steps]
    assert steps[0] == f"mkdir -p {HOST_MOUNT}" and f"mount --bind {HOST_MOUNT}/usr /usr" in steps
    assert steps.index(f"mount --bind {HOST_MOUNT}{CLONE} {CLONE}") < steps.index(f"mount --bind {STAGING}0 {data}")
    assert steps[-1] == f"mount --bind {STAGING}0 {data}"
    assert mounts.at_boot(Path("/tmp/x")) == Path("/tmp/x")  # a path not in a staged folder is where it is


def test_the_folders_no_boot_writes_are_bound_from_the_cached_share_and_a_write_folder_after_them():
    """Python's installation, the venv and the checkout are read through the page cache (the outermost of nested
    ones); a results folder inside the cached checkout is staged and bound after it; a cached folder inside a
    write folder is left to the write folder's own mount, which the guest writes through."""
    checkout = Path("/work/flashscale")
    data = checkout / "data"
    mounts = guest_mounts([checkout, checkout / ".venv"], [data, Path("/tmp/out")],
                          [Path("/usr"), Path("/usr"), checkout / ".venv", checkout, Path("/tmp/out/cache")])
    assert mounts.options == (f"--rwdir={STAGING}0={data}", "--rwdir=/tmp/out")
    assert mounts.first == (
        f"mkdir -p {HOST_MOUNT}",
        f"mount -t 9p -o ro,trans=virtio,version=9p2000.L,access=any,msize=524288,cache=loose {HOST_TAG} {HOST_MOUNT}",
        f"mount --bind {HOST_MOUNT}/usr /usr", f"mount --bind {HOST_MOUNT}{checkout} {checkout}",
        f"mount --bind {STAGING}0 {data}")
    assert mounts.at_boot(data / "share" / "log") == Path(f"{STAGING}0/share/log")
    assert guest_mounts([checkout], [data]).first == ()  # nothing cached asked: vng's own mounts only


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
def options(path):  # the mount options of the file system that holds path (the last mount over it)
    point, found = "", []
    for line in open("/proc/self/mounts"):
        at, opts = line.split()[1], line.split()[3]
        if (path == at or path.startswith(at.rstrip("/") + "/")) and len(at) >= len(point):
            point, found = at, opts.split(",")
    return found
root = flashscale.paths.project_root()
try:
    (root / "written-by-the-guest").write_text("")
    writable = True
except OSError:
    writable = False
Path(sys.argv[1]).write_text(json.dumps({"prefix": sys.prefix, "package": flashscale.paths.__file__,
                                         "cwd": os.getcwd(), "checkout_writable": writable,
                                         "cached": [p for p in (flashscale.paths.__file__, os.__file__)
                                                    if "loose" in options(p) and "ro" in options(p)]}))  # 6.1: "loose"
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
        package = str(clone / "lib" / "flashscale" / "paths.py")
        assert seen == {"prefix": str(clone / ".venv"), "package": package, "cwd": str(clone),
                        "checkout_writable": False, "cached": [package, os.__file__]}
        assert not (clone / "written-by-the-guest").exists()
    finally:
        shutil.rmtree(parent)
