"""A campaign: build the array, run the sweep on each layout, keep every point's raw files and the tidy table.

    spec = CampaignSpec.from_parameters(CAMPAIGN="quickstart", DEVICES=4, LAYOUTS=["single", "jbod"], ...)
    result = run(spec)          # result.table, result.notes, result.directory

The array and every layout are torn down before ``run`` returns or raises, including on Ctrl-C. Rows are appended
to ``rows.jsonl`` as each run finishes, so an interrupted campaign keeps what it measured; each run's start and end,
with the runs left and an ETA, go to ``progress.log`` beside them and to the bar (``measure.progress``).

Where it runs (``backend``):

    loop        the emulated array flashscale makes itself: loop devices capped by block throttling (the default)
    directory   plain directories on the local disk, when loop devices cannot be made (said so in ``notes``)
    vm          NVMe devices of a virtual machine with a real kernel (``vmlab``): the campaign runs inside it as a
                test bed of the VM's devices, capped by the guest's block throttling, so md, IMSM and LVM are built
                by the same code as on real devices, through the same guard
    testbed     real devices named by identity in a test bed file (``TESTBED``), every destructive step through
                the guard; after each erase every device is written in full ``PRECONDITION_PASSES`` times (2:
                SNIA's workload-independent precondition, ``arrays.fill``). A test bed campaign is a dry run unless
                ``DRY_RUN=False``: it raises ``DryRun`` with
                the exact commands it would execute, having touched nothing. To measure, ``CONFIRM`` must list
                the test bed's identities, as strings.

Interrupted and resumed: ``RESUME=True`` continues the campaign in its own folder (``measure.resume``): finished
runs are kept exactly once and not run again, the run that was cut short runs again, the layout it was on is
rebuilt (erased and preconditioned anew), and a change of the campaign or the machine that would mix numbers that
cannot be compared is refused, naming it, unless ``FORCE_RESUME=True`` (then ``notes`` says so). A campaign folder
is held by one run at a time (``system.lock``); a run that died (``kill -9``) is found by its stale lock, and what it
left (loop devices, mounts, the cgroup, backing files) is undone through ``flashscale reap``'s code before anything
else. A fio run that fails is kept as a failed row; ``ON_FAILURE`` says whether the sweep goes on.

The layout ``mounted`` measures inside an existing mount point (``MOUNT_DIR``: GPFS, BeeGFS, Lustre, NFS, or any
file system the user made); flashscale only creates and removes its own directory there.
"""
from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import platform
import signal
import threading
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Sequence

import pandas as pd

from ..measure import monitoring, reanalysis, results, resume
from ..measure.results import CampaignResult
from ..arrays import fill, layouts, support
from ..system.commands import Runner
from ..system.devices import System
from ..arrays.emulated import ArraySpec, cap_fit_policy, loop_support_problem
from ..arrays.support import MOUNTED
from ..layouts import MEASURABLE
from . import directories, emulated, parameters, stated, testbed as testbeds, vmlab
from ..system.host import queue_depth
from ..errors import ConfigError, FlashscaleError, UnsupportedError
from ..arrays.guard import Guard, confirmation
from ..arrays.layouts import Options
from ..measure.progress import Progress
from ..measure.recorder import Recorder, check_on_failure
from ..measure.sweep import Sweep
from ..system import lock, provenance

DEFAULT_CAMPAIGN = "quickstart"
EMULATION_MODES = ("auto", "loop", "directory", "vm")


class DryRun(FlashscaleError):
    """A test bed campaign stopped before touching anything; its message is the exact plan."""


@dataclass(frozen=True)
class CampaignSpec:
    name: str
    layouts: tuple[str, ...] = ("single", "jbod", "btrfs-raid0")
    array: ArraySpec = field(default_factory=ArraySpec)
    sweep: Sweep = field(default_factory=Sweep)
    emulation: str = "auto"
    host: str = "localhost"
    data_dir: str = "data/campaigns"
    options: Options = field(default_factory=Options)  # fs, stripe unit, mount options, erase
    testbed: str | None = None          # a test bed file naming real devices by identity
    confirm: tuple[str, ...] | None = None  # the identities the user confirmed (strings)
    dry_run: bool = True                # with a test bed: print the plan and stop, touching nothing
    wipe: bool | tuple[str, ...] = ()   # signature types the plan may erase on a test bed (True: any)
    mount_dir: str | None = None        # the existing mount point of the ``mounted`` layout
    mount_devices: int = 1              # how many devices sit under it, for efficiency against N x baseline
    use_devices: int | None = None      # a test bed campaign on its first N devices only (device-count sweeps)
    precondition_passes: int = 2        # on a test bed: each device written in full this often after its erase
    resume: bool = False                # continue the interrupted campaign in its own folder
    force_resume: bool = False          # resume even when the campaign or the machine changed (said in notes)
    on_failure: str = "continue"        # after a failed fio run: continue the sweep, or stop it
    vm_accel: str = "auto"              # EMULATION vm: kvm, tcg, or auto (KVM when a short probe boots)
    ceilings: dict | None = None        # CEILINGS: a file's path or a mapping, kept as the values it gives
    calibrations: tuple[str, ...] = ()  # CALIBRATION: campaign folders of the layouts on fewer devices

    def __post_init__(self) -> None:
        parameters.check_campaign_name(self.name)
        for flag in ("resume", "force_resume"):
            if not isinstance(getattr(self, flag), bool):
                raise ConfigError(f"{flag.upper()}={getattr(self, flag)!r} must be True or False")
        check_on_failure(self.on_failure)
        if self.emulation not in EMULATION_MODES:
            raise ConfigError(f"emulation={self.emulation!r} is not one of {', '.join(EMULATION_MODES)}")
        known = MEASURABLE
        bad = [name for name in self.layouts if name not in known]
        if bad or not self.layouts:
            raise ConfigError(f"layouts {bad or 'empty'}: choose from {', '.join(known)}")
        object.__setattr__(self, "layouts", tuple(self.layouts))
        if MOUNTED in self.layouts and not self.mount_dir:
            raise ConfigError("layout 'mounted' needs MOUNT_DIR, the existing mount point to measure inside")
        if self.mount_dir is not None and not Path(self.mount_dir).is_dir():
            raise ConfigError(f"MOUNT_DIR={self.mount_dir!r} is not an existing directory")
        if isinstance(self.mount_devices, bool) or not isinstance(self.mount_devices, int) or self.mount_devices < 1:
            raise ConfigError(f"MOUNT_DEVICES={self.mount_devices!r} must be a whole number of at least 1")
        if self.testbed is not None and not Path(self.testbed).is_file():
            raise ConfigError(f"TESTBED={self.testbed!r} is not a test bed file")
        n = self.use_devices
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
            raise ConfigError(f"USE_DEVICES={n!r} must be a whole number of at least 1")
        fill.check_passes(self.precondition_passes)
        if not isinstance(self.dry_run, bool):
            raise ConfigError(f"DRY_RUN={self.dry_run!r} must be True or False")
        if self.confirm is not None:
            object.__setattr__(self, "confirm", confirmation(self.confirm))
        if not isinstance(self.wipe, bool):
            wipe = self.wipe.split(",") if isinstance(self.wipe, str) else self.wipe
            if not isinstance(wipe, (list, tuple)) or not all(isinstance(w, str) for w in wipe):
                raise ConfigError(f"WIPE={self.wipe!r} must be True, False or a list of signature types (strings)")
            object.__setattr__(self, "wipe", tuple(w.strip() for w in wipe if w.strip()))
        object.__setattr__(self, "calibrations", tuple(str(c) for c in (self.calibrations or ())))
        for folder in self.calibrations:
            if not self.calibration_folder(folder).is_dir():
                raise ConfigError(f"CALIBRATION {folder!r} is not a campaign folder under DATA_DIR={self.data_dir!r} "
                                  "nor a folder")
        try:  # the file's content, not its path, is the spec: campaign.json records it, resume compares it
            object.__setattr__(self, "ceilings", parameters.read_ceilings(self.ceilings))
        except ConfigError as exc:
            raise ConfigError(f"CEILINGS={self.ceilings!r}: {exc}") from None

    def calibration_folder(self, name: str) -> Path:
        """A ``CALIBRATION`` entry as a folder: a campaign's name under ``DATA_DIR``, else a path as given."""
        under = results.data_root(self.data_dir) / name
        return under if under.is_dir() else Path(name)

    @classmethod
    def from_dict(cls, d: dict) -> "CampaignSpec":
        """The spec ``asdict`` gave (as JSON keeps it: lists for tuples), e.g. a VM guest's from its host's."""
        sweep = {k: _tuples(v) for k, v in d["sweep"].items()}
        return cls(**{**d, "array": ArraySpec(**d["array"]), "sweep": Sweep(**sweep),
                      "options": layouts.Options(**d["options"])})

    @classmethod
    def from_parameters(cls, **p) -> "CampaignSpec":
        """Build a spec from a notebook's UPPER_CASE parameters (``parameters.PARAMETERS`` says which field each sets; a
        parameter not given, or given as None or empty where that means "none", takes the field's default).
        Parameters of the notebook itself (``REFERENCE``, ``PROGRESS``, ...) set no field; those the rules read
        (``rules.RULES``: a ``REFERENCE`` among the ``LAYOUTS``...) are checked with the others, so a notebook
        that passes all its UPPER_CASE globals is refused before it measures what it could not report."""
        parameters.check(p, PARTS)
        parts = parameters.split(p, PARTS)
        return cls(name=p.get("CAMPAIGN", DEFAULT_CAMPAIGN), array=ArraySpec(**parts["array"]),
                   sweep=Sweep(**parts["sweep"]), options=layouts.Options(**parts["options"]), **parts["spec"])


def _tuples(value):
    """JSON's lists as the tuples a frozen spec holds (a sweep's ``extra`` is a tuple of pairs)."""
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


# The dataclass of each part of the parameters (``parameters.PARTS``): where each parameter's default lives.
PARTS = {"array": ArraySpec, "sweep": Sweep, "options": Options, "spec": CampaignSpec}


def _progress_bar(total: int, desc: str, shown: bool):
    """A bar of ``total`` runs: tqdm's notebook bar where ipywidgets can draw it, else its text bar (``tqdm.auto``
    imported in a notebook without ipywidgets, an install without the ``lab`` extra, warns in the report)."""
    if importlib.util.find_spec("ipywidgets") is not None:
        from tqdm.auto import tqdm
    else:
        from tqdm.std import tqdm
    return tqdm(total=total, desc=desc, disable=not shown, unit="run")


def _environment(runner: Runner, backend: str) -> dict:
    """The machine and the software that measure: host, kernel, fio, the backend, and ``provenance.software()``
    (flashscale's version and commit, the lock, the packages); a VM's guest adds QEMU's version (``vm.Lab.facts``)."""
    fio_version = runner.run(["fio", "--version"]).stdout.strip()
    return {"hostname": platform.node(), "kernel": platform.release(), "python": platform.python_version(),
            "fio": fio_version, "cpus": os.cpu_count(), "backend": backend, "software": provenance.software()}


def _backend(spec: CampaignSpec) -> tuple[str, list[str]]:
    """The backend ``support.backend_for`` chooses here, and the notes that say why; emulation='loop' on a machine
    that cannot make loop devices is refused rather than measured on directories."""
    backend = support.backend_for(spec.emulation, spec.testbed)
    if backend == "testbed":
        return "testbed", [f"Real devices of the test bed {spec.testbed}, named by identity and confirmed; every "
                           "destructive step went through the guard. No bandwidth caps: the devices' own limits."]
    if backend == "loop":
        return "loop", []
    if spec.emulation == "directory":
        return "directory", ["Emulation was set to plain directories: no devices, no erase, no caps."]
    problem = loop_support_problem()
    if spec.emulation == "loop":
        raise UnsupportedError(f"emulation='loop' was asked for but {problem}")
    return "directory", [f"No emulated array: {problem}. The campaign measured plain directories on the local "
                         "disk instead, skipped the erase and the array layouts, and applied no bandwidth caps; "
                         "its efficiency compares directories that share one disk, not devices."]


def _check_kernel(spec: CampaignSpec, backend: str, runner: Runner) -> None:
    """Refuse, before anything is made or erased, a layout this machine cannot build (md, LVM without dm)."""
    if backend not in ("loop", "testbed", "vm"):
        return
    system = System(runner=runner)
    problems = [f"{name}: {problem}" for name in spec.layouts if name != MOUNTED
                for problem in [layouts.missing(name, system, runner)] if problem]
    if problems:
        raise UnsupportedError("cannot build " + "; ".join(problems) + ". Nothing was touched; leave these "
                               "layouts out of LAYOUTS on this machine.")


plan = testbeds.plan  # the dry run of a test bed campaign


@contextmanager
def _sigterm_as_interrupt():
    """While measuring, SIGTERM (a kernel shut down, a job killed) unwinds like Ctrl-C, so teardown runs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run(spec: CampaignSpec, runner: Runner | None = None, progress: bool = True,
        workloads: Sequence = (), guest: dict | None = None, baseline: Path | None = None) -> CampaignResult:
    """Run the campaign; return the tidy table (precondition and warm-up rows included, flagged) and what the
    report must say. ``workloads`` run on every layout after the sweep's points (``measure.recorder``).
    ``guest``: this is the VM half of an ``EMULATION="vm"`` campaign (``vmlab``): the VM's facts and the host's
    spec, whose lock the host holds. ``baseline``: another campaign's folder (a study's ``01_baseline``) whose
    single-device rows the stated predictions read when this campaign measures no ``single`` before its layouts
    (not inside the VM lab, which cannot see the host's folders)."""
    if reanalysis.active() and guest is None:  # flashscale run --reanalyze: the stored campaign, nothing measured
        return CampaignResult(*reanalysis.stored(results.data_root(spec.data_dir) / spec.name, asdict(spec)))
    with _sigterm_as_interrupt():
        if spec.emulation == "vm" and guest is None:
            return _run_in_vm(spec, runner or Runner(), progress, workloads)
        return _run(spec, runner or Runner(), progress, workloads, guest, baseline)


def _run_in_vm(spec: CampaignSpec, runner: Runner, progress: bool, workloads: Sequence) -> CampaignResult:
    """The host half of a VM campaign: the lab boots and this module's ``run`` measures inside it."""
    if workloads:
        raise ConfigError("application workloads do not run in the VM lab; leave them out of an EMULATION vm run")
    spec.array.check_backend("vm")
    # the guest does not see this process's environment: the CAP_FIT in force here goes with the spec
    spec = replace(spec, array=replace(spec.array, cap_fit=cap_fit_policy(spec.array.cap_fit)))
    directory, notes = vmlab.run_campaign(spec.name, asdict(spec), results.data_root(spec.data_dir), vmlab.VmSpec(
        devices=spec.array.devices, device_size=spec.array.device_size, accelerator=spec.vm_accel,
        name=spec.name), runner, progress)
    return CampaignResult(results.rebuild_table(directory), directory, "vm", notes)


def _run(spec: CampaignSpec, runner: Runner, progress: bool, workloads: Sequence,
         guest: dict | None = None, baseline: Path | None = None) -> CampaignResult:
    backend, notes = ("vm", list(guest["notes"])) if guest else _backend(spec)
    spec.array.check_backend(backend)  # CAP_SCALE: the loop devices only
    _check_kernel(spec, backend, runner)
    if backend != "vm" and spec.emulation == "vm":
        raise ConfigError("EMULATION='vm' runs inside the VM lab, which campaign.run starts itself")
    if backend == "testbed" and spec.dry_run:
        raise DryRun(f"Dry run of campaign {spec.name!r} (DRY_RUN is True): nothing was touched. To measure, set "
                     f"DRY_RUN=False and CONFIRM to the test bed's identities. It would run:\n{plan(spec, runner)}")
    if backend == "testbed" and spec.confirm is None:
        raise ConfigError(f"campaign {spec.name!r}: DRY_RUN is False but CONFIRM is empty; list the identities of "
                          f"the devices in {spec.testbed} (see flashscale devices)")
    testbed = testbeds.testbed_devices(spec, runner) if backend in ("testbed", "vm") else None
    if testbed is not None:  # every device the layouts use is checked now, before the first is erased
        _, devices, confirm = testbed
        Guard(devices, confirm, spec.wipe, System(runner=runner)).check(devices)
    system = System(runner=runner)
    if backend == "loop":
        emulated.check_space(spec.array, system)
    folder = results.data_root(spec.data_dir) / spec.name
    holder = None if guest else lock.stale_holder(folder / lock.LOCK_FILE, system)  # refuses while another holds it
    if holder is not None:
        notes += lock.recover(holder, runner, system)
    env = {**_environment(runner, backend), **(guest["facts"] if guest else {})}
    if testbed is not None:
        env["devices"] = [d.id for d in testbed[1]]
    directory, run_id, done, layouts_done = resume.open_campaign(folder, guest["spec"] if guest else asdict(spec),
                                                                 env, notes, spec.resume or spec.force_resume,
                                                                 spec.force_resume)
    with contextlib.nullcontext() if guest else lock.Lock.take(directory, system):
        todo = [name for name in spec.layouts if backend != "directory" or name in directories.LAYOUTS]
        skipped = [name for name in spec.layouts if name not in todo]
        if skipped:
            notes.append(f"Skipped {', '.join(skipped)}: plain directories cannot be striped into an array.")
        todo = [name for name in todo if name not in layouts_done]
        with _progress_bar(spec.sweep.runs() * len(todo), spec.name, progress) as bar:
            recorder = Recorder(spec.name, spec.host, spec.sweep, directory, runner, run_id, spec.array.rw_caps(), bar, env,
                                workloads, on_failure=spec.on_failure, done=done,
                                layout_caps={name: spec.array.rw_caps(name) for name in todo if name != MOUNTED},
                                before_build=_stating(spec, directory, testbed, system, baseline),
                                progress=Progress(spec.sweep, len(todo), directory, bar,
                                                  workload_runs=sum(w.runs() for w in workloads)))
            try:
                if todo and backend == "loop":
                    notes += emulated.run(spec, todo, recorder, runner)
                elif todo and backend in ("testbed", "vm"):
                    notes += testbeds.run_on_testbed(spec, testbed, todo, recorder, runner, capped=backend == "vm")
                elif todo:
                    directories.run(spec, todo, recorder, directory, runner)
            finally:
                table = results.rebuild_table(directory) if (directory / results.ROWS_FILE).exists() else None
                monitoring.rebuild_table(directory)
        notes += _failures(table)
        (directory / "notes.json").write_text(json.dumps(notes, indent=1))
    return CampaignResult(table, directory, backend, notes)


def _stating(spec: CampaignSpec, directory: Path, testbed: tuple | None, system: System,
             baseline: Path | None = None) -> stated.Stating:
    """What states each layout's prediction before it is built: its devices, the sweep's points, this machine's
    limits measured once (its CPUs, its memory's copy rate; a test bed's PCIe links and queue depth) with the
    campaign's ``CEILINGS`` on top (``stated.limits``), how the layouts are built (the stripe unit, the file
    system), and the single-device rows of ``baseline`` when the campaign measures none itself; the ``CALIBRATION``
    folders' and ``baseline``'s layouts on fewer devices calibrate a layer's cost (``stated.Stating.calibration``)."""
    count = len(testbed[1]) if testbed is not None else spec.array.devices

    def devices_of(name: str) -> int:
        return spec.mount_devices if name == MOUNTED else len(layouts.chosen(name, range(count)))

    paths = [d.path for d in testbed[1]] if testbed is not None else []
    limits = stated.limits(paths, system, spec.ceilings)
    return stated.Stating(directory, spec.sweep.points(), devices_of, limits,
                          stated.said(paths, system, spec.ceilings, limits), baseline,
                          chunk_bytes=spec.options.chunk_bytes, fs=spec.options.fs,
                          tags=queue_depth(paths, system),
                          calibrations=tuple(spec.calibration_folder(c) for c in spec.calibrations))


def _failures(table: pd.DataFrame | None) -> list[str]:
    """A sentence per failed run, with fio's message: the report lists them."""
    if table is None or "status" not in table.columns:
        return []
    failed = table[table["status"] == "failed"]
    return [f"Failed run: {r.layout} {r.point} rep{r.rep} ({r.raw_dir}): {r.error}" for r in failed.itertuples()]
