"""The host half of a campaign in the VM lab (``EMULATION="vm"``): boot the lab, let the campaign run inside it.

    InVmLab(runner, array, name=..., accelerator=...)   the place (``campaigns.place.Place``) as its host sees it:
                                                        checked here, its campaign run inside (``run_inside``)
    directory, notes = run_campaign(name, spec_dict, data_root, VmSpec(devices=4), runner, progress=True)

The host holds the campaign folder's lock (``system.lock``) and the lab (``system.vmlab.vm.Lab``: its backing files and
QEMU process, in its manifest). It writes, in a folder of its own inside ``data_root`` (which the guest may write),
a test bed file of the lab's NVMe identities and a request; the guest runs ``flashscale vm-guest REQUEST``
(``cli.vm_guest``), which measures the campaign through ``campaign.run`` exactly as on a test bed of real devices,
named by those identities and confirmed, every destructive step through the guard, each device capped by the
guest's block throttling. Rows, raw files and ``campaign.json`` land in ``data_root/<name>`` as any campaign's do;
the guest's answer (its folder, its notes, or the error it met) comes back in the request folder. The VM's console
is kept as ``vm-console.log`` beside the rows.
"""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import yaml

from .. import errors
from ..arrays.emulated import cap_fit_policy
from ..errors import ConfigError, UnsupportedError
from ..measure import campaign_folder, results
from ..paths import project_root
from ..system import lock
from ..system.commands import Runner
from ..measure.units import size
from ..system.devices import Device, System
from ..system.vmlab.vm import IMSM_NOTE, Boot, Lab, VmError, VmSpec, prerequisites_problem
from .place import Place, caps_words

__all__ = ["InVmLab", "VmSpec", "run_campaign", "guest_request", "answer"]

REQUEST, ANSWER, TESTBED = "flashscale-request.json", "flashscale-answer.json", "flashscale-testbed.yaml"
CONSOLE, GUEST_OUTPUT = "vm-console.log", "vm-output.log"  # kept beside the rows
# The guest's environment: mdadm builds IMSM without Intel's RST platform only with this switch (its own, for
# testing); Python writes no bytecode into the host's read-only checkout.
GUEST_ENV = ("IMSM_NO_PLATFORM=1", "PYTHONDONTWRITEBYTECODE=1")


class InVmLab(Place):
    """The VM lab seen from its host: nothing is built here; the lab boots and the campaign runs inside it, as a
    test bed of the lab's NVMe devices (``testbed.InVmGuest``), which writes the campaign folder."""

    backend = "vm"

    def __init__(self, *args, name: str, accelerator: str = "auto", **kw):
        super().__init__(*args, **kw)
        self.name, self.accelerator = name, accelerator

    def words(self) -> str:
        return f"{self.array.devices} NVMe device(s) of the VM lab, {caps_words(self.array)}"

    def problems(self, names, workloads) -> None:
        if workloads:
            raise ConfigError("application workloads do not run in the VM lab; leave them out of an EMULATION vm run")
        problem = prerequisites_problem(self.system, self.runner)
        if problem:  # before anything is made, even the request folder
            raise UnsupportedError(f"campaign {self.name!r} with EMULATION vm: {problem}")

    def build_problem(self, name: str) -> str | None:
        """Built inside the VM lab, whose kernel has md and device-mapper: what the lab itself lacks here."""
        return prerequisites_problem(self.system, self.runner)

    def reproduction_problem(self, dry_run: bool, confirmed: bool) -> str | None:
        problem = prerequisites_problem(self.system, self.runner)
        return f"the original measured in the VM lab, which cannot run here: {problem}" if problem else None

    def creates(self) -> list[str]:
        """The lab (``system.vmlab.vm.Lab``) and the request folder its guest answers in."""
        return [f"the VM lab: {self.array.devices} NVMe device(s) of {size(self.array.device_size)} each on backing "
                f"files, a QEMU VM booted with this machine's kernel (accelerator {self.accelerator})",
                "a request folder in the data folder, which the guest reads and answers in",
                f"inside the VM: a cgroup holding each device at its cap ({caps_words(self.array)})"]

    def stand_ins(self) -> list:
        return [Device(f"NVME{i}", f"nvme:{i}") for i in range(self.array.devices)]
    def run_inside(self, spec: dict, data_root: Path, progress: bool) -> results.CampaignResult:
        """The campaign ``spec`` (its ``asdict``) run inside the lab; the guest does not see this process's
        environment, so the CAP_FIT in force here goes with the spec."""
        spec = {**spec, "array": {**spec["array"], "cap_fit": cap_fit_policy(self.array.cap_fit)}}
        directory, notes = run_campaign(self.name, spec, data_root, VmSpec(
            devices=self.array.devices, device_size=self.array.device_size, accelerator=self.accelerator,
            name=self.name), self.runner, progress)
        return results.CampaignResult(results.rebuild_table(directory), directory, self.backend, notes)


def run_campaign(name: str, spec: dict, data_root: Path, vm: VmSpec, runner: Runner,
                 progress: bool) -> tuple[Path, list[str]]:
    """Run campaign ``name`` (``spec``: its ``asdict``) inside the lab; its folder and the report's notes.

    The host's lock is in ``data_root/flashscale-vm-<name>`` (the guest takes none: the campaign folder is made
    afresh, an earlier one renamed, by the guest), which also holds the request and the answer; a run that died
    (``kill -9``) is found there by the next one, and what it left (the QEMU process, the backing files) undone."""
    system = System(runner=runner)
    problem = prerequisites_problem(system, runner)
    if problem:  # before anything is made, even the request folder
        raise UnsupportedError(f"campaign {name!r} with EMULATION vm: {problem}")
    share = data_root / f"flashscale-vm-{name}"
    share.mkdir(parents=True, exist_ok=True)
    try:
        return _run_in_lab(name, spec, data_root, share, vm, runner, system, progress)
    finally:
        if share.is_dir() and not any(share.iterdir()):
            share.rmdir()


def _run_in_lab(name: str, spec: dict, data_root: Path, share: Path, vm: VmSpec, runner: Runner, system: System,
                progress: bool) -> tuple[Path, list[str]]:
    notes: list[str] = []
    holder = lock.stale_holder(share / lock.LOCK_FILE, system)
    if holder is not None:
        notes += lock.recover(holder, runner, system)
    with lock.Lock.take(share, system), Lab(vm, runner, system) as lab:
        lab.choose_accelerator()
        request = _request(share, spec, lab, data_root)
        boot = lab.boot(["env", *GUEST_ENV, sys.executable, "-m", "flashscale.cli", "vm-guest", str(request)],
                        share, rwdirs=[data_root], cwd=project_root(), echo=sys.stderr if progress else None)
        answer = _answer(share, boot)
        directory = Path(answer["directory"])
        shutil.copyfile(boot.console, directory / CONSOLE)
        shutil.copyfile(boot.output, directory / GUEST_OUTPUT)
        notes += [*answer["notes"], f"The VM booted and ran the campaign in {boot.seconds:.0f} s "
                  f"({boot.accelerator}); its console is {directory / CONSOLE}."]
    campaign_folder.write_notes(directory, notes)
    return directory, notes


def _request(share: Path, spec: dict, lab: Lab, data_root: Path) -> Path:
    """The test bed of the lab's identities, and what the guest is to run: the spec, the VM's facts."""
    bed = share / TESTBED
    lab.teardown.record("file", path=str(bed))
    bed.write_text(yaml.safe_dump({"name": f"vm-{spec['name']}", "devices": lab.identities}))
    request = share / REQUEST
    for leaf in (request, share / ANSWER):
        lab.teardown.record("file", path=str(leaf))
    request.write_text(json.dumps({"spec": {**spec, "data_dir": str(data_root)}, "testbed": str(bed),
                                   "answer": str(share / ANSWER), "facts": lab.facts, "notes": [*lab.notes, IMSM_NOTE]},
                                  indent=1, default=str))
    return request


def _answer(share: Path, boot: Boot) -> dict:
    """What the guest answered; its error raised again here, as the class it was, when it failed."""
    path = share / ANSWER
    if not path.exists():
        tail = "\n".join(boot.output.read_text(errors="replace").splitlines()[-25:])
        raise VmError(f"the VM ended (exit status {boot.returncode}) without an answer from flashscale in it; "
                      f"the last lines it printed:\n{tail}")
    answer = json.loads(path.read_text())
    if answer.get("error"):
        raise errors.kind(answer.get("kind", ""))(f"in the VM: {answer['error']}")
    return answer


def guest_request(path: Path) -> dict:
    """The request a guest was started with (``cli.vm_guest``)."""
    return json.loads(Path(path).read_text())


def answer(request: dict, **fields) -> None:
    """The guest's answer to its host: its campaign folder and notes, or ``error`` and its ``kind``."""
    Path(request["answer"]).write_text(json.dumps(fields, indent=1, default=str))
