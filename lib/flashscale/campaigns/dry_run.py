"""A campaign's dry run (``flashscale run --dry-run``; ``--estimate`` checks the same before it prices anything).

Each notebook's campaign is built from every value it would run with, as its notebook builds it, in the checkout
(where papermill runs it), and checked at its place as the run checks it (``Place.dry_run``): bad input raises a
ConfigError naming the value; what this machine lacks is said where the run would stop. Then what the campaign would
create and run is said: nothing is made, and no command runs but the reads a check makes (``ReadOnly``).

    ReadOnly(inner)                                  the dry run's runner: ``READS`` run, any other command refused
    of_notebook(name, campaign, values, given, runner)   one notebook's ``NotebookPlan``
    check_paths(values)                              every path a notebook would read, there and of its kind
    idle(given, values)                              a sentence per given parameter that does nothing there
    asked(given, values)                             whether DRY_RUN makes the campaign a dry run
    lines(plans), as_json(plans)                     what the dry run prints
"""
from __future__ import annotations

import os
import shlex
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Mapping, Sequence

from ..errors import ConfigError, FlashscaleError
from ..measure import campaign_folder, jobrun
from ..paths import project_root
from ..system.commands import Runner
from . import campaign as campaigns, cluster as clusters, hosts
from .parameters import shown
from .place import Place, Plan

MEASURING = {"RW", "NUMJOBS", "RUNTIME_S", "REPETITIONS"}  # a notebook that declares one of these runs a sweep
# The commands a check may run, reading only: a device's signatures (the guard), this machine's addresses (SUBNET).
READS = (("blkid", "-p"), ("ip", "-j", "-4", "addr", "show"), ("ip", "-j", "-4", "route", "show"))
# The notebooks that measure only the layouts this machine can build of those asked (03: can_build.layouts_to_run).
BUILDS_WHAT_IT_CAN = {"03_layout_tax"}
# The layouts a study stage names in its code, not its parameters (notebooks 01 and 02).
STAGE_LAYOUTS = {"01_baseline": ("single",), "02_scaling": ("jbod",)}
# Each parameter that names a path a notebook reads (relative to the checkout, or absolute), and what it must be.
PATHS = {"TESTBED": "file", "MOUNT_DIR": "folder", "BACKING_DIR": "folder", "INVENTORY": "file",
         "KNOWN_HOSTS": "file", "SSH_IDENTITY": "file", "SSH_CONFIG": "file", "JOB_FILE": "file",
         "IMPORTED": "folder", "REFERENCE_DIR": "folder"}


class ReadOnly(Runner):
    """The dry run's runner: the reads a check makes (``READS``) run through ``inner`` (a ``Runner`` by default);
    any other command, and anything spawned, is refused, naming it (a dry run that reached one would be a bug,
    never a measurement)."""

    def __init__(self, inner: Runner | None = None):
        super().__init__()
        self.inner = inner if inner is not None else Runner()

    def run(self, argv: Sequence[str], **options):
        argv = tuple(str(a) for a in argv)
        if not any(argv[:len(read)] == read for read in READS):
            raise FlashscaleError(f"a dry run runs no command, and was about to run {shlex.join(argv)!r}")
        self.history.append(argv)
        return self.inner.run(argv, **options)

    def spawn(self, argv: Sequence[str], log_file: Path, **options):
        raise FlashscaleError(f"a dry run starts nothing, and was about to start {shlex.join(map(str, argv))!r}")

    def which(self, program: str) -> str | None:
        return self.inner.which(program)


@dataclass(frozen=True)
class NotebookPlan:
    """One notebook's dry run: where its campaign's rows would go (``folder``), its place's ``plan`` and the fio
    ``runs`` of each layout (None, 0: it measures nothing), and ``notes`` (parameters that do nothing there)."""

    notebook: str
    folder: str | None = None
    plan: Plan | None = None
    runs: int = 0
    notes: tuple[str, ...] = ()


def check_path(name: str, value: object, kind: str) -> None:
    """ConfigError naming ``name`` and ``value`` where it is not an existing ``kind`` ("file" or "folder"), relative
    to the checkout unless absolute (a symbolic link is followed; one that leads nowhere is said so)."""
    if not isinstance(value, str) or not value.strip() or "\0" in value:
        raise ConfigError(f"{name}={shown(value)} must be the path of a {kind} (relative to the checkout)")
    path = Path(value) if Path(value).is_absolute() else project_root() / value
    try:
        found = path.is_file() if kind == "file" else path.is_dir()
        link = path.is_symlink() and not path.exists()
    except OSError as exc:
        raise ConfigError(f"{name}={shown(value)} cannot be a {kind}: {exc.strerror}") from None
    if not found:
        why = "a symbolic link that leads nowhere" if link else "no such file or folder" if not path.exists() else (
            f"not a {kind}")
        raise ConfigError(f"{name}={shown(value)} must be an existing {kind}: {path} is {why}")


def check_paths(values: Mapping[str, object]) -> None:
    """Every path of ``PATHS`` among ``values`` (None or empty: none given) checked (``check_path``), and
    ``DATA_DIR`` one the run can make its folders in (``check_writable``)."""
    for name, kind in PATHS.items():
        if values.get(name) not in (None, ""):
            check_path(name, values[name], kind)
    if isinstance(values.get("DATA_DIR"), str):
        check_writable("DATA_DIR", values["DATA_DIR"])


def check_writable(name: str, value: str) -> None:
    """ConfigError naming ``name`` and ``value`` where the folder it names (relative to the checkout) is not one,
    or its nearest existing folder cannot be written: the run would fail making its campaign's folder there."""
    if not value.strip() or "\0" in value:
        raise ConfigError(f"{name}={shown(value)} must name a folder (relative to the checkout)")
    path = campaign_folder.data_root(value)
    try:
        found = next(p for p in (path, *path.parents) if p.exists())
        usable = found.is_dir() and os.access(found, os.W_OK | os.X_OK)
    except OSError as exc:
        raise ConfigError(f"{name}={shown(value)} cannot be a folder: {exc.strerror}") from None
    if not usable:
        raise ConfigError(f"{name}={shown(value)}: {found} is {'not a folder' if not found.is_dir() else 'not writable'}"
                          ": the campaign's folder cannot be made there")


def _no_testbed(v: Mapping) -> bool:
    return not v.get("TESTBED")


def _testbed(v: Mapping) -> bool:
    return bool(v.get("TESTBED")) and "HOSTS" not in v


# Parameters that do nothing unless another says so: (names, when they do nothing, why).
IDLE: tuple[tuple[tuple[str, ...], Callable[[Mapping], bool], str], ...] = (
    (("CONFIRM", "WIPE", "USE_DEVICES", "PRECONDITION_PASSES"), _no_testbed,
     "without TESTBED no real device is erased: the devices are flashscale's own"),
    (("DEVICES", "DEVICE_SIZE", "BACKING_DIR", "CAP_SCALE", "CAP_READ_BPS", "CAP_WRITE_BPS", "CAP_FIT"), _testbed,
     "with TESTBED the test bed's own devices are measured, uncapped (USE_DEVICES takes its first N)"),
    (("DEVICES", "DEVICE_SIZE", "CAP_READ_BPS", "CAP_WRITE_BPS", "LINK_BPS", "SUBNET"),
     lambda v: bool(v.get("REMOTE_HOSTS") or v.get("INVENTORY")),
     "real hosts are measured as they are: their own devices, caps and links, no emulated hosts made"),
    (("MAX_REPETITIONS",), lambda v: v.get("PRECISION") is None, "without PRECISION each point runs REPETITIONS times"),
    (("SS_DUR_S", "SS_RAMP_S"), lambda v: not v.get("SS"), "without SS fio judges no steady state"),
    (("VM_ACCEL",), lambda v: v.get("EMULATION") != "vm", "only the VM lab (EMULATION vm) has an accelerator"),
    (("MOUNT_DEVICES",), lambda v: "mounted" not in (v.get("LAYOUTS") or ()),
     "only the layout mounted measures in MOUNT_DIR"),
)


def idle(given: Mapping[str, object], values: Mapping[str, object]) -> list[str]:
    """A sentence per parameter of ``given`` (the campaign file's and -p's) that does nothing with ``values`` (every
    value the notebook runs with); None or empty is "none" and says nothing."""
    return [f"{name}={shown(given[name])} does nothing here: {why}" for names, when, why in IDLE
            for name in names if given.get(name) not in (None, "", [], ()) and when(values)]


def asked(given: Mapping[str, Mapping], values: Mapping[str, Mapping]) -> bool:
    """Whether the campaign is a dry run by its ``DRY_RUN`` (``given`` and ``values`` by notebook): given True
    for any notebook (as ``--dry-run``), or a test bed notebook runs with it True (its default). ConfigError where it
    is given False and no notebook measures a test bed: it would do nothing."""
    if any(g.get("DRY_RUN") is True for g in given.values()):
        return True
    beds = [name for name, v in values.items() if v.get("TESTBED")]
    if not beds and any(g.get("DRY_RUN") is False for g in given.values()):
        raise ConfigError("DRY_RUN=False does nothing in this campaign: only a test bed campaign (TESTBED) stops at "
                          "its plan unless it is False; leave DRY_RUN out")
    return any(values[name].get("DRY_RUN", True) is True for name in beds)


def layouts_of(notebook: str, values: Mapping[str, object]) -> tuple[str, ...]:
    """The layouts a notebook measures: its stage's own (``STAGE_LAYOUTS``), else its one ``LAYOUT``, else
    ``LAYOUTS`` (the spec's default where it declares none)."""
    if notebook in STAGE_LAYOUTS:
        return STAGE_LAYOUTS[notebook]
    if "LAYOUT" in values:
        return (values["LAYOUT"],)
    return tuple(values.get("LAYOUTS") or campaigns.CampaignSpec.layouts)


def of_notebook(notebook: str, campaign: str, values: Mapping[str, object], given: Mapping[str, object],
                runner: Runner) -> NotebookPlan:
    """The dry run of ``notebook`` of ``campaign`` with ``values`` (every value it runs with; ``given``: those the
    campaign file and -p give), its place's commands run through ``runner`` (a ``ReadOnly``): ConfigError naming
    what the run would refuse. Call it in the checkout, where papermill runs the notebook."""
    check_paths(values)
    if values.get("JOB_FILE"):  # read and checked on every layout, as the notebook's first cell does
        jobrun.workload(project_root() / str(values["JOB_FILE"]), values.get("JOB_FILE_AXES"),
                        values.get("JOB_FILE_REPETITIONS", 1))
    notes = tuple(idle(given, values))
    if not MEASURING & set(values):
        return NotebookPlan(notebook, notes=notes)
    if "HOSTS" in values:
        spec = clusters.ClusterSpec.from_parameters(**{**values, "CAMPAIGN": campaign})
        place, names = hosts.choose(spec, runner), spec.layouts
    else:
        spec = campaigns.CampaignSpec.from_parameters(**{**values, "CAMPAIGN": campaign,
                                                         "LAYOUTS": list(layouts_of(notebook, values))})
        place, names = campaigns.choose(spec, runner), spec.layouts
        if notebook in BUILDS_WHAT_IT_CAN:
            names, left_out = buildable(place, names, spec.mount_dir)
            notes += tuple(left_out)
    folder = campaign_folder.data_root(spec.data_dir) / spec.name
    return NotebookPlan(notebook, str(folder), place.dry_run(names), spec.sweep.runs(), notes)


def buildable(place: Place, names: Sequence[str], mount_dir: str | None) -> tuple[list[str], list[str]]:
    """The layouts of ``names`` the place can build here (``Place.support``), and a sentence for each it cannot:
    what a notebook that measures only those (``BUILDS_WHAT_IT_CAN``) leaves out."""
    support = place.support(names, mount_dir)
    left = support[~support["supported"]]
    return (list(support.loc[support["supported"], "layout"]),
            [f"{row.layout} is left out here: {row.missing}" for row in left.itertuples()])


def lines(plans: Sequence[NotebookPlan]) -> list[str]:
    """What a person reads: each notebook, where it runs, what it would create and run, and its notes."""
    said = []
    for one in plans:
        if one.plan is None:
            said += [f"{one.notebook}: measures nothing (it reads what is stored)"]
        else:
            said += [f"{one.notebook}: on {one.plan.place} ({one.plan.backend})",
                     *(f"  creates: {what}" for what in one.plan.creates),
                     *(f"  {line}" for line in one.plan.commands),
                     f"  fio: {one.runs} run(s) on each layout, their rows and raw output in {one.folder}",
                     *(f"  note: {note}" for note in one.plan.notes)]
        said += [f"  note: {note}" for note in one.notes]
    return said


def as_json(plans: Sequence[NotebookPlan]) -> dict:
    """The dry run for scripts: each notebook's plan by its name."""
    said = {}
    for one in plans:
        plan = {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(one.plan).items()} if one.plan else {
            "backend": None, "notes": []}
        said[one.notebook] = {**plan, "folder": one.folder, "runs_each_layout": one.runs,
                              "notes": [*plan["notes"], *one.notes]}
    return said
