"""The VM lab without a VM: the identities it predicts, the QEMU options it passes, its refusals, and how it meets a
guest that hangs or does not boot (a stand-in ``vng`` that sleeps, or prints a console and fails)."""
from __future__ import annotations

import json
import os
import stat
from dataclasses import asdict
from pathlib import Path

import pytest

from flashscale.campaigns import vmlab
from flashscale.campaigns.campaign import CampaignSpec
from flashscale.arrays.emulated import ArraySpec
from flashscale.errors import ConfigError, FlashscaleError, RefusedError, UnsupportedError
from flashscale.measure.sweep import Sweep
from flashscale.system import processes
from flashscale.system.vmlab import vm
from flashscale.system.commands import RecordingRunner
from flashscale.system.devices import System

# The wwid Linux 6.1 showed for a QEMU 7.2 NVMe namespace with serial "fs0001" (seen in the VM; README of the issue)
SEEN_WWID = "nvme.1b36-667330303031-51454d55204e564d65204374726c-00000001"


def test_identity_is_the_wwid_the_guest_kernel_shows():
    assert vm.identity("fs0001") == f"wwid:{SEEN_WWID}"


def test_serials_are_stable_per_name_distinct_per_device_and_fit_qemu():
    spec = vm.VmSpec(devices=12, name="seed000")
    serials = [vm.serial(spec, i) for i in range(12)]
    assert len(set(serials)) == 12 and all(len(s) <= 20 for s in serials)
    assert serials == [vm.serial(vm.VmSpec(devices=12, name="seed000"), i) for i in range(12)]
    assert vm.serial(vm.VmSpec(name="other"), 0) != serials[0]


@pytest.mark.parametrize("change, word", [({"devices": 0}, "devices=0"), ({"devices": 33}, "devices=33"),
                                          ({"accelerator": "hvf"}, "'hvf'"), ({"memory": "lots"}, "'lots'"),
                                          ({"cpus": True}, "cpus=True")])
def test_bad_vm_specs_are_refused_naming_the_value(change, word):
    with pytest.raises(ConfigError, match=word):
        vm.VmSpec(**change)


def _lab(tmp_path: Path, **spec) -> vm.Lab:
    """A lab that records its commands, with a kernel image of the test's own: the command line needs a kernel's
    name, not the kernel, and this machine's /boot may be empty (a fresh Debian root's is)."""
    boot = tmp_path / "boot"
    boot.mkdir(exist_ok=True)
    (boot / "vmlinuz-6.1.0-99-amd64").write_bytes(b"not a kernel")
    lab = vm.Lab(vm.VmSpec(**spec), RecordingRunner(), boot_dir=boot)
    lab.workdir = lab.tool_tmp = tmp_path
    return lab


def test_each_device_is_an_nvme_controller_with_its_serial_and_the_guest_has_no_network(tmp_path):
    lab = _lab(tmp_path, devices=2, name="t")
    argv = lab.argv(tmp_path / vm.COMMAND_FILE, lab.mounts([tmp_path], tmp_path), tmp_path, False, None)
    options = [a.removeprefix("--qemu-opts=") for a in argv if a.startswith("--qemu-opts=")]
    assert options == [f"-drive file={tmp_path}/flashscale-nvme{i}.img,if=none,id=fsnvme{i},format=raw,"
                       f"cache=writeback,discard=unmap -device nvme,serial={vm.serial(lab.spec, i)},drive=fsnvme{i}"
                       for i in range(2)] + [vm.HOST_SHARE]  # and the host's / read-only, for the cached folders
    assert "--disable-kvm" in argv and not any("net" in a for a in argv if a.startswith("--"))
    assert argv[argv.index("--run") + 1] == str(tmp_path / "boot" / "vmlinuz-6.1.0-99-amd64")
    assert f"--rwdir={tmp_path}" in argv and f"TMPDIR={tmp_path}" in argv


def test_an_order_attaches_the_controllers_in_that_order_and_a_wrong_one_is_refused(tmp_path):
    lab = _lab(tmp_path, devices=3)
    assert [o.split("serial=")[1].split(",")[0] for o in lab.qemu_options([2, 0, 1])] == \
        [lab.serials[2], lab.serials[0], lab.serials[1]]
    with pytest.raises(ConfigError, match=r"\[0, 0, 1\]"):
        lab.qemu_options([0, 0, 1])


def test_spec_survives_the_trip_to_the_guest_as_json():
    spec = CampaignSpec(name="vm-trip", layouts=("single", "md-imsm-raid0"), emulation="vm", vm_accel="tcg",
                        array=ArraySpec(devices=3, read_bps=50_000_000), sweep=Sweep(numjobs=(1, 3)))
    assert CampaignSpec.from_dict(json.loads(json.dumps(asdict(spec)))) == spec


class _Machine(System):
    """A machine whose root-ness is chosen by the test."""

    def __init__(self, euid: int, **kw):
        super().__init__(**kw)
        self._euid = euid

    def euid(self) -> int:
        return self._euid


def test_not_root_is_refused_before_anything_is_made():
    with pytest.raises(UnsupportedError, match="needs root"):
        with vm.Lab(vm.VmSpec(), RecordingRunner(), _Machine(1000)):
            pass


@pytest.mark.parametrize("absent, install", [("qemu-system-x86_64", "apt-get install qemu-system-x86"),
                                             ("mdadm", "apt-get install mdadm"),
                                             ("busybox", "apt-get install busybox-static")])
def test_a_missing_program_is_named_with_its_install_command(absent, install, monkeypatch):
    monkeypatch.setattr(vm, "vng_path", lambda runner: "/usr/bin/vng")
    installed = frozenset(p for p, _ in vm.HOST_TOOLS) - {absent}
    problem = vm.prerequisites_problem(_Machine(0), RecordingRunner(installed=installed))
    assert absent in problem and install in problem


def test_no_kernel_image_names_the_package(tmp_path):
    with pytest.raises(UnsupportedError, match="apt-get install linux-image-amd64"):
        vm.kernel_image(tmp_path)


def test_the_newest_kernel_image_is_booted(tmp_path):
    for name in ("vmlinuz-6.1.0-9-amd64", "vmlinuz-6.1.0-56-amd64", "vmlinuz-6.1.0-10-amd64"):
        (tmp_path / name).touch()
    assert vm.kernel_image(tmp_path).name == "vmlinuz-6.1.0-56-amd64"


# ---- a stand-in vng: real processes, no VM ---------------------------------------------------------------------

def _fake_vng(folder: Path, body: str) -> Path:
    script = folder / "vng"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


@pytest.fixture
def lab_with(tmp_path, monkeypatch):
    """A lab (backing files of its own, in its manifest) whose ``vng`` is the script the test gives."""
    if os.geteuid() != 0:
        pytest.skip("the lab needs root")
    labs = []

    def make(body: str, **spec) -> vm.Lab:
        fake = _fake_vng(tmp_path, body)
        monkeypatch.setattr(vm, "vng_path", lambda runner: str(fake))
        monkeypatch.setattr(vm, "prerequisites_problem", lambda system, runner, boot=None: None)
        monkeypatch.setattr(vm, "kernel_image", lambda boot=None: tmp_path / "vmlinuz-test")  # never booted
        lab = vm.Lab(vm.VmSpec(devices=2, device_size=2**20, **spec), manifests=tmp_path)
        labs.append(lab.__enter__())
        return lab

    yield make
    for lab in labs:
        lab.close()


def test_a_kvm_probe_that_hangs_falls_back_to_tcg_within_its_bound(lab_with, tmp_path, monkeypatch):
    monkeypatch.setattr(vm, "PROBE_S", 1.5)
    lab = lab_with('case "$*" in *--disable-kvm*) exit 0;; esac; exec sleep 60')
    monkeypatch.setattr(lab.system, "dev", tmp_path)
    (tmp_path / "kvm").touch()
    accelerator, why = vm.probe_accelerator(lab)
    assert accelerator == "tcg" and "did not finish within 2 s and was stopped" in why
    probe = next(e.details for e in lab.teardown.entries if e.kind == "process")
    assert not processes.still_ours(probe["process"], probe["start"], lab.system)


def _logs(tmp_path: Path) -> Path:
    folder = tmp_path / "flashscale-logs"
    folder.mkdir(exist_ok=True)
    return folder


def test_logs_go_only_to_a_folder_of_ours(lab_with, tmp_path):
    lab = lab_with("exit 0", accelerator="tcg")
    with pytest.raises(ConfigError, match="must be a folder named flashscale-"):
        lab.boot(["true"], tmp_path, rwdirs=[tmp_path])


def test_a_guest_that_does_not_boot_says_what_its_console_said(lab_with, tmp_path):
    lab = lab_with('echo "Kernel panic - not syncing: VFS: Unable to mount root fs"; exit 1', accelerator="tcg")
    with pytest.raises(vm.VmError, match="(?s)did not boot.*Kernel panic - not syncing"):
        lab.boot(["true"], _logs(tmp_path), rwdirs=[tmp_path])


def test_a_kernel_that_panics_is_stopped_at_once_and_named(lab_with, tmp_path):
    """An early panic (here: a command line over the kernel's 2 KiB) leaves QEMU waiting for ever: the lab reads the
    console and stops it."""
    lab = lab_with('echo "[ 0.04] kernel BUG at lib/string_helpers.c:1027!"; exec sleep 60', accelerator="tcg")
    with pytest.raises(vm.VmError, match=r"kernel panicked \(\[ 0.04\] kernel BUG at lib/string_helpers.c:1027!\)"):
        lab.boot(["true"], _logs(tmp_path), rwdirs=[tmp_path], timeout_s=30)


def test_the_command_goes_in_a_script_not_on_the_kernel_command_line(lab_with, tmp_path):
    lab = lab_with('printf "%s\\n" "$@" > "$(dirname "$0")/argv"; exit 0', accelerator="tcg")
    long = ["echo", "x" * 5000]
    with pytest.raises(vm.VmError, match="did not boot"):  # the stand-in runs no guest: no mark
        lab.boot(long, _logs(tmp_path), rwdirs=[tmp_path])
    argv = (tmp_path / "argv").read_text()
    assert "x" * 5000 not in argv and len(argv) < 2048
    script = _logs(tmp_path) / vm.COMMAND_FILE
    assert argv.splitlines()[-1] == f"sh {script}"  # the guest runs the script, from where it finds it at boot
    lines = script.read_text().splitlines()
    assert lines[0] == "#!/bin/sh" and lines[-1] == f"exec echo {'x' * 5000} >> {_logs(tmp_path) / vm.OUTPUT_LOG} 2>&1"


def test_a_guest_that_runs_past_its_time_is_stopped(lab_with, tmp_path):
    lab = lab_with("exec sleep 60", accelerator="tcg")
    with pytest.raises(vm.VmError, match="did not finish within 1 s and was stopped"):
        lab.boot(["true"], _logs(tmp_path), rwdirs=[tmp_path], timeout_s=1)
    qemu = next(e.details for e in lab.teardown.entries if e.kind == "process")
    assert not processes.still_ours(qemu["process"], qemu["start"], lab.system)


def test_the_lab_leaves_nothing_behind(lab_with, tmp_path):
    lab = lab_with("exit 0", accelerator="tcg")
    backing = sorted(lab.workdir.glob("flashscale-nvme*.img"))
    assert [p.stat().st_size for p in backing] == [2**20, 2**20]
    assert all(p.stat().st_blocks == 0 for p in backing)  # sparse
    manifest = lab.teardown.manifest
    assert manifest.exists()
    assert lab.tool_tmp.parent == lab.workdir
    (lab.tool_tmp / "virtme_retabc123").write_text("")  # what vng leaves in its TMPDIR when it is killed
    lab.close()
    assert not lab.workdir.exists() and not manifest.exists()


def test_the_guests_error_comes_back_as_its_own_class(tmp_path):
    request = {"answer": str(tmp_path / vmlab.ANSWER)}
    vmlab.answer(request, error="device /dev/nvme0n1 is mounted", kind="RefusedError")
    boot = vm.Boot(1, 1.0, "tcg", tmp_path / "out", tmp_path / "console")
    with pytest.raises(RefusedError, match="in the VM: device /dev/nvme0n1 is mounted"):
        vmlab._answer(tmp_path, boot)
    vmlab.answer(request, error="odd", kind="SystemExit")  # not one of ours: the base class, never another
    with pytest.raises(FlashscaleError, match="in the VM: odd"):
        vmlab._answer(tmp_path, boot)


def test_a_vm_campaign_this_machine_cannot_run_is_refused_before_anything_is_made(tmp_path, monkeypatch):
    monkeypatch.setattr(vmlab, "prerequisites_problem",
                        lambda system, runner: "the VM lab needs qemu-system-x86_64: apt-get install qemu-system-x86")
    spec = CampaignSpec(name="no-qemu", emulation="vm", data_dir=str(tmp_path))
    with pytest.raises(UnsupportedError, match="'no-qemu' with EMULATION vm: .*apt-get install qemu-system-x86"):
        vmlab.run_campaign(spec.name, asdict(spec), tmp_path, vm.VmSpec(), RecordingRunner(), False)
    assert list(tmp_path.iterdir()) == []
