"""A campaign: build the array, run the sweep on each layout, keep every point's raw files and the tidy table.

    spec = CampaignSpec.from_parameters(CAMPAIGN="quickstart", DEVICES=4, LAYOUTS=["single", "jbod"], ...)
    result = run(spec)          # result.table, result.notes, result.directory

The array and every layout are torn down before ``run`` returns or raises, including on Ctrl-C. Rows are appended
to ``rows.jsonl`` as each run finishes, so an interrupted campaign keeps what it measured; each run's start and end,
with the runs left and an ETA, go to ``progress.log`` beside them and to the bar (``measure.progress``).

Where it runs is a place (``campaigns.place``, which lists every place and its interface), picked once by ``choose``
over ``EMULATION`` and ``TESTBED``, then run by the one loop every campaign runs (``run_at``, a cluster's too); its
``backend`` names it in the rows: ``loop`` (the emulated array: loop devices capped by block throttling, the
default), ``directory`` (plain directories where loop devices cannot be made, said in ``notes``), ``vm`` (a VM with a
real kernel, where md, IMSM and LVM are built by the same code as on real devices) and ``testbed`` (real devices
named by identity, each written in full ``PRECONDITION_PASSES`` times after each erase; a dry run raising ``DryRun``
with the exact commands unless ``DRY_RUN=False``, and ``CONFIRM`` must list the test bed's identities).

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

import importlib.util
import os
import platform
import signal
import threading
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import pandas as pd

from ..measure import archive, campaign_folder, monitoring, results, resume
from ..measure.results import CampaignResult
from ..arrays import fill
from ..system.commands import Runner
from ..arrays.emulated import ArraySpec, loop_support_problem
from ..arrays.can_build import MOUNTED
from ..layouts import MEASURABLE
from . import directories, emulated, parameters, preregistered, testbed as testbeds, vmlab
from .place import Mounted, Place
from .testbed import DryRun
from ..system.host import queue_depth
from ..errors import ConfigError, UnsupportedError
from ..arrays.guard import confirmation
from ..arrays.layouts import Options
from ..measure.progress import Progress
from ..measure.recorder import Recorder
from ..measure.results import bracket_name
from ..measure.reference import SINGLE, STANDS_IN, reference_of
from ..measure.sweep import LEAST_REPETITIONS, Sweep
from ..analysis import repetitions
from ..analysis.significance import DEFAULT_MARGIN
from ..system import provenance

__all__ = ["DEFAULT_CAMPAIGN", "EMULATION_MODES", "EMULATIONS", "PARTS", "CampaignSpec", "DryRun", "choose",
           "layout_support", "place_here", "run", "run_at", "preregistration"]

DEFAULT_CAMPAIGN = "quickstart"
EMULATION_MODES = ("auto", "loop", "directory", "vm")  # EMULATION's values: each picks its place (``EMULATIONS``)


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
    tax_margin: float = DEFAULT_MARGIN  # TAX_MARGIN: the tax test decides against it as runs arrive (PRECISION)
    reference: str = STANDS_IN          # REFERENCE: what that test decides against (measure.reference.reference_of)
    archive: str | None = None          # ARCHIVE: the archive file the campaign is added to when it finishes

    def __post_init__(self) -> None:
        """What a parameter's type says is checked where it enters (``parameters.check``: the schema); here what
        the values mean together, and the files they name."""
        parameters.check_campaign_name(self.name)
        known = MEASURABLE
        bad = [name for name in self.layouts if name not in known]
        if bad or not self.layouts:
            raise ConfigError(f"layouts {bad or 'empty'}: choose from {', '.join(known)}")
        object.__setattr__(self, "layouts", tuple(self.layouts))
        if MOUNTED in self.layouts and not self.mount_dir:
            raise ConfigError("layout 'mounted' needs MOUNT_DIR, the existing mount point to measure inside")
        if self.mount_dir is not None and not Path(self.mount_dir).is_dir():
            raise ConfigError(f"MOUNT_DIR={self.mount_dir!r} is not an existing directory")
        if self.testbed is not None and not Path(self.testbed).is_file():
            raise ConfigError(f"TESTBED={self.testbed!r} is not a test bed file")
        fill.check_passes(self.precondition_passes)
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
        under = campaign_folder.data_root(self.data_dir) / name
        return under if under.is_dir() else Path(name)

    @classmethod
    def from_dict(cls, d: dict) -> "CampaignSpec":
        """The spec ``asdict`` gave (as JSON keeps it: lists for tuples), e.g. a VM guest's from its host's."""
        sweep = {k: _tuples(v) for k, v in d["sweep"].items()}
        return cls(**{**d, "array": ArraySpec(**d["array"]), "sweep": Sweep(**sweep),
                      "options": Options(**d["options"])})

    @classmethod
    def from_parameters(cls, **p) -> "CampaignSpec":
        """Build a spec from a notebook's UPPER_CASE parameters (``parameters.PARAMETERS`` says which field each sets; a
        parameter not given, or given as None or empty where that means "none", takes the field's default).
        Parameters of the notebook itself (``BASELINE_BS``, ``PROGRESS``, ...) set no field; those the rules read
        (``rules.RULES``: a ``REFERENCE`` among the ``LAYOUTS``...) are checked with the others, so a notebook
        that passes all its UPPER_CASE globals is refused before it measures what it could not report."""
        parameters.check(p, PARTS)
        parts = parameters.split(p, PARTS)
        return cls(name=p.get("CAMPAIGN", DEFAULT_CAMPAIGN), array=ArraySpec(**parts["array"]),
                   sweep=Sweep(**parts["sweep"]), options=Options(**parts["options"]), **parts["spec"])


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


def _environment(runner: Runner) -> dict:
    """The machine and the software that measure: host, kernel, fio, and ``provenance.software()`` (flashscale's
    version and commit, the lock, the packages); the place adds its own facts (``Place.facts``)."""
    fio_version = runner.run(["fio", "--version"]).stdout.strip()
    return {"hostname": platform.node(), "kernel": platform.release(), "python": platform.python_version(),
            "fio": fio_version, "cpus": os.cpu_count(), "software": provenance.software()}


def _emulated_array(spec: CampaignSpec, fallback: bool, **given) -> Place:
    """The emulated array where loop devices can be made; else, when ``fallback`` (EMULATION auto), plain
    directories, said in the notes; else refused, naming why."""
    problem = loop_support_problem()
    if problem is None:
        return emulated.OnEmulatedArray(**given)
    if not fallback:
        raise UnsupportedError(f"emulation='loop' was asked for but {problem}")
    return directories.OnDirectories(**given, fallback=problem, notes=[
        f"No emulated array: {problem}. The campaign measured plain directories on the local disk instead, skipped "
        "the erase and the array layouts, and applied no bandwidth caps; its efficiency compares directories that "
        "share one disk, not devices."])


# Each EMULATION's place (a TESTBED's is the test bed, the VM lab's guest its own: ``choose``).
EMULATIONS = {
    "auto": lambda spec, **given: _emulated_array(spec, True, **given),
    "loop": lambda spec, **given: _emulated_array(spec, False, **given),
    "directory": lambda spec, **given: directories.OnDirectories(**given, notes=[
        "Emulation was set to plain directories: no devices, no erase, no caps."]),
    "vm": lambda spec, **given: vmlab.InVmLab(**given, name=spec.name, accelerator=spec.vm_accel),
}


def choose(spec: CampaignSpec, runner: Runner | None = None, guest: dict | None = None,
           testbed: str | None = None) -> Place:
    """The place the campaign runs (``campaigns.place``), decided here once: inside the VM lab's guest (``guest``:
    the host's request), a test bed (``TESTBED``, or ``testbed`` given), or what ``EMULATION`` asks
    (``EMULATIONS``); each is given the parts of the spec it needs, never the spec."""
    given = dict(runner=runner or Runner(), array=spec.array, options=spec.options,
                 mounted=Mounted(spec.mount_dir, spec.mount_devices))
    testbed = testbed or spec.testbed
    bed = testbeds.Bed(str(testbed or ""), spec.use_devices, spec.confirm, spec.wipe, spec.precondition_passes,
                       spec.dry_run, spec.name)
    if guest is not None:
        return testbeds.InVmGuest(**given, bed=bed, guest=guest)
    if testbed:
        return testbeds.OnTestBed(**given, bed=bed)
    return EMULATIONS[spec.emulation](spec, **given)


def place_here(emulation: str = "auto", testbed: str | None = None, runner: Runner | None = None) -> Place:
    """The place a campaign with ``emulation`` (or a ``testbed``) would run at on this machine, with the defaults
    of the rest: to ask what it can measure here (``layout_support``) or whether it can run here at all
    (``Place.reproduction_problem``). Nothing is touched."""
    return choose(CampaignSpec("here", layouts=("single",), emulation=emulation), runner, testbed=testbed)


def layout_support(names: Sequence[str], emulation: str = "auto", testbed: str | None = None,
                   mount_dir: str | None = None, runner: Runner | None = None) -> pd.DataFrame:
    """Per layout asked for: whether the place a campaign with ``emulation`` (or ``testbed``) runs at here can
    measure it, and if not what it lacks (``Place.support``: nothing is touched). ``arrays.can_build`` says it in
    words and gives the plans of those it cannot build."""
    return place_here(emulation, testbed, runner).support(names, mount_dir)


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
    runner = runner or Runner()
    return run_at(spec, lambda: choose(spec, runner, guest), runner, progress, workloads, inside=guest is not None,
                  states=lambda place, directory: preregistration(spec, place, directory, baseline))


def run_at(spec, where: Callable[[], Place], runner: Runner, progress: bool = True, workloads: Sequence = (),
           inside: bool = False, states: Callable | None = None) -> CampaignResult:
    """The one campaign loop, whatever the spec (``CampaignSpec``, ``ClusterSpec``) and the place ``where`` picks:
    the stored campaign with ``--reanalyze`` (not ``inside`` the VM lab), else the place checked before anything is
    made or erased, then measured here (``_measure``: resumed or fresh, held, recovered) or inside it. ``states``: what
    states each layout's prediction before it is built, None where the place states its own (a cluster's)."""
    if resume.reanalyzing() and not inside:  # flashscale run --reanalyze: the stored campaign, nothing measured
        stored = resume.stored_campaign(campaign_folder.data_root(spec.data_dir) / spec.name, asdict(spec))
        return archive.at_end(getattr(spec, "archive", None), CampaignResult(*stored), write=False)
    with _sigterm_as_interrupt():
        place = where()
        place.check(spec.layouts, workloads)  # before anything is made or erased
        archived = getattr(spec, "archive", None)  # ARCHIVE: a campaign's (a cluster's spec has none)
        ran = place.run_inside(asdict(spec), campaign_folder.data_root(spec.data_dir), progress)
        if ran is not None:
            return archive.at_end(archived, ran)
        result = _measure(spec, place, runner, progress, workloads, states)
        return result if inside else archive.at_end(archived, result)  # the VM's guest: the host adds it


def _measure(spec, place: Place, runner: Runner, progress: bool, workloads: Sequence,
             states: Callable | None) -> CampaignResult:
    """The campaign at ``place``: its folder opened (or resumed) and held, the place made, its layouts measured,
    the place undone, the table rebuilt and the notes written."""
    folder = campaign_folder.data_root(spec.data_dir) / spec.name
    notes = [*place.notes, *place.recover(folder)]
    env = {**_environment(runner), **place.facts(), **provenance.machine(place.devices())}
    directory, run_id, done, layouts_done = resume.open_campaign(
        folder, place.recorded(asdict(spec)), env, notes, spec.resume or spec.force_resume, spec.force_resume)
    with place.lock(directory), place.opened(directory):
        todo, skipped = place.layouts(spec.layouts)
        notes += skipped
        todo = [name for name in todo if name not in layouts_done]
        todo, moved = _reference_first(todo, spec)
        notes += [moved] if moved else []
        bracketed = _brackets(spec, todo, layouts_done)
        layouts = len(todo) + int(bracketed)  # the reference's bracket: its sweep once more
        counts = len(place.host_counts()) or 1  # each layout swept on each host count
        with _progress_bar(spec.sweep.runs() * layouts * counts, spec.name, progress) as bar:
            recorder = _recorder(spec, place, directory, runner, run_id, bar, env, workloads, done, todo,
                                 states(place, directory) if states else None, layouts, counts)
            try:
                notes += place.run(todo, recorder) if todo or bracketed else []
            finally:
                table = results.rebuild_table(directory) if campaign_folder.has_rows(directory) else None
                monitoring.rebuild_table(directory)
        notes += _failures(table)
        campaign_folder.write_notes(directory, notes)
    return CampaignResult(table, directory, place.backend, notes)


def _recorder(spec, place: Place, directory: Path, runner: Runner, run_id: str, bar, env: dict,
              workloads: Sequence, done: frozenset, todo: list[str],
              before_build: preregistered.Preregistration | None, layouts: int, counts: int) -> Recorder:
    """What measures each layout's sweep: the place's caps, the progress of every run (``layouts`` sweeps: those of
    ``todo`` and the bracket's, each on ``counts`` host counts), the predictions stated."""
    caps, layout_caps = place.caps(todo)
    return Recorder(spec.name, spec.host, spec.sweep, directory, runner, run_id, caps, bar, env, workloads,
                    on_failure=spec.on_failure, done=done, layout_caps=layout_caps, before_build=before_build,
                    stopping=repetitions.stopping(spec.sweep.precision, spec.sweep.max_repetitions,
                                                  LEAST_REPETITIONS, spec.tax_margin),
                    tax_reference=reference_of(spec.layouts, spec.reference),
                    progress=Progress(spec.sweep, layouts, directory, bar, repeat=counts,
                                      workload_runs=sum(w.runs() for w in workloads)))


def _brackets(spec, todo: Sequence[str], layouts_done: frozenset) -> bool:
    """Whether the reference's bracket (BRACKET) is still to run, as ``Place.bracket`` decides: asked, not run yet
    (a resume whose layouts were all done runs it), and the campaign measures the reference and a layout taxed
    against it; else the progress would count a sweep that never runs."""
    against = reference_of(spec.layouts, spec.reference)
    if not spec.sweep.bracket or against is None or bracket_name(against) in layouts_done:
        return False
    measured = set(todo) | set(layouts_done)
    return against in measured and bool(measured - {against, SINGLE, bracket_name(against)})


def _reference_first(todo: list[str], spec) -> tuple[list[str], str | None]:
    """With PRECISION or BRACKET, the layout the taxes are decided against (``reference_of``) is measured before
    the layouts taxed against it (all but the single device, which never is against jbod): the sequential tax test
    needs its runs at a point before another layout's runs there can stop on a decision, and a bracket brackets
    only the layouts measured between the reference's two sweeps. The order, and a sentence for the notes where it
    moved."""
    against = reference_of(spec.layouts, spec.reference)
    if (spec.sweep.precision is None and not spec.sweep.bracket) or against not in todo:
        return todo, None
    before = [name for name in todo[:todo.index(against)] if name != SINGLE]
    if not before:
        return todo, None
    rest = [name for name in todo if name != against]
    at = rest.index(before[0])
    return [*rest[:at], against, *rest[at:]], (
        f"{against} was measured before {', '.join(before)} (LAYOUTS named it later): "
        + ("with PRECISION each layout's points run until the sequential tax test decides against its runs."
           if spec.sweep.precision is not None else "with BRACKET it is measured before and after them."))


def preregistration(spec: CampaignSpec, place: Place, directory: Path, baseline: Path | None = None) -> preregistered.Preregistration:
    """What states each layout's prediction before it is built: the devices each layout uses at ``place``, the
    sweep's points, this machine's limits measured once (its CPUs, its memory's copy rate; a test bed's PCIe links
    and queue depth) with the campaign's ``CEILINGS`` on top (``preregistered.limits``), how the layouts are built (the
    stripe unit, the file system), and the single-device rows of ``baseline`` when the campaign measures none
    itself; the ``CALIBRATION`` folders' and ``baseline``'s layouts on fewer devices calibrate a layer's cost
    (``preregistered.Preregistration.calibration``)."""
    paths = [d.path for d in place.devices()]
    limits = preregistered.limits(paths, place.system, spec.ceilings)
    return preregistered.Preregistration(directory, spec.sweep.points(), place.devices_of, limits,
                          preregistered.limits_note(paths, place.system, spec.ceilings, limits), baseline,
                          chunk_bytes=spec.options.chunk_bytes, fs=spec.options.fs,
                          tags=queue_depth(paths, place.system),
                          calibrations=tuple(spec.calibration_folder(c) for c in spec.calibrations))


def _failures(table: pd.DataFrame | None) -> list[str]:
    """A sentence per failed run, with fio's message: the report lists them."""
    if table is None or "status" not in table.columns:
        return []
    failed = table[table["status"] == "failed"]
    return [f"Failed run: {r.layout} {r.point} rep{r.rep} ({r.raw_dir}): {r.error}" for r in failed.itertuples()]
