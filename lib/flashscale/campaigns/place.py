"""Where a campaign runs: the one interface every place implements (ceph/cbt's ``Benchmark``: initialize, run,
cleanup), picked once by ``campaign.choose``, so no code outside the place modules asks which place it is.

    place.check(layouts, workloads)   refuse, before anything is touched, what cannot run here (reads only)
    place.dry_run(layouts)            the run's check, then what it would create and run (``Plan``), nothing made
    place.facts()                     what campaign.json's environment says of it: its ``backend``, its words
                                      (``words``: what the report says it measured on), its devices' identities
    place.notes                       what the report must say of where the campaign ran
    place.layouts(names)              the layouts of ``LAYOUTS`` it measures, and a note on those it cannot
    place.devices()                   the devices its layouts use, guarded in ``check`` (none: plain directories)
    with place:                       what the place is made of (an emulated array, a cgroup of caps, a scratch
                                      folder), undone on leaving it: on success, on error and on Ctrl-C (``undo``)
    place.run(todo, recorder)         its truth first, where one is known (``truth``: the harness measures its
                                      devices uncapped and holds the caps they carry), then each layout built
                                      (``build``), swept and torn down (``swept``: a cluster's hosts, their own)
    place.host_counts()               the host counts each layout is swept on (a cluster's ``HOSTS``; none here)

The places: the emulated array (``emulated.OnEmulatedArray``), plain directories (``directories.OnDirectories``),
a test bed of real devices (``testbed.OnTestBed``) and the VM lab's devices inside its guest
(``testbed.InVmGuest``), the VM lab seen from its host (``vmlab.InVmLab``, whose campaign runs inside the lab:
``run_inside``), and a cluster's hosts (``hosts``: emulated, serving fio, over SSH). A new place implements this
class in its own module, adds a room in ``system``/``arrays`` where it needs one, and is named in the factory.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Sequence

import pandas as pd

from ..arrays import layouts
from ..arrays.emulated import ArraySpec
from ..arrays.layouts import Layout, Options
from ..errors import ConfigError, FlashscaleError, RefusedError, UnsupportedError
from ..layouts import MEASURABLE, describe
from ..measure import campaign_folder
from ..measure.recorder import Recorder
from ..measure.results import BRACKET_PHASE, bracket_name
from ..measure.reference import SINGLE
from ..measure.units import rate
from ..system import lock
from ..system.commands import Runner
from ..system.devices import Device, System
from ..system.teardown import Teardown, manifest_dir


class DryRun(FlashscaleError):
    """A test bed campaign stopped before touching anything; its message is the exact plan."""


@dataclass(frozen=True)
class Plan:
    """What a dry run says of a place (``Place.dry_run``): its ``backend`` and ``place`` in words, what it would
    ``create`` (devices, cgroups, folders, hosts), the ``commands`` each layout would run, and ``notes``: where
    the run would stop on this machine, the layouts it would skip, what the report would say of the place."""

    backend: str
    place: str
    creates: tuple[str, ...]
    commands: tuple[str, ...]
    notes: tuple[str, ...]


def stops(step) -> list[str]:
    """``step()`` run for a dry run: nothing said where it passes or stops at a test bed's own plan (``DryRun``),
    the sentence where this machine lacks something or a guard refuses (the run would stop there)."""
    try:
        step()
    except DryRun:
        return []
    except (UnsupportedError, RefusedError) as exc:
        return [f"here the run would stop: {exc}"]
    return []


@dataclass(frozen=True)
class Mounted:
    """The existing mount point the layout ``mounted`` measures inside (``MOUNT_DIR``), and how many devices sit
    under it (``MOUNT_DEVICES``: efficiency is against that many x baseline)."""

    directory: str | None = None
    devices: int = 1

    def layout(self, teardown: Teardown) -> Layout:
        """Directories of ours inside it, removed by ``teardown`` (``layouts.use_directory``)."""
        return layouts.use_directory(self.directory, teardown, devices=self.devices)


def caps_words(array: ArraySpec) -> str:
    """The caps of ``array`` in words: each direction's rate, and each device below the cap (``CAP_SCALE``)."""
    caps = ", ".join(f"{rate(bps)} {rw}" for bps, rw in ((array.read_bps, "read"), (array.write_bps, "write"))
                     if bps)
    scaled = [f"device {index} at {factor * 100:g}%" for index, factor in enumerate(array.cap_scale, 1)
              if factor != 1]
    return f"{caps} each" + (f"; {', '.join(scaled)} of the cap" if scaled else "") if caps else "no caps"


class Place:
    """One place a campaign runs (the module's docstring). ``array``: the devices' count and caps (the emulated
    array's, or the caps a capped test bed holds); ``options``: how layouts are built; ``mounted``: the mount point
    ``mounted`` measures in."""

    backend: ClassVar[str]              # what rows and campaign.json call the place
    caps_each_device: ClassVar[bool] = False  # CAP_SCALE applies: each device capped at its own fraction

    def __init__(self, runner: Runner, array: ArraySpec, options: Options = Options(), mounted: Mounted = Mounted(),
                 notes: Sequence[str] = (), fallback: str | None = None):
        self.runner, self.array, self.options, self.mounted = runner, array, options, mounted
        self.system = System(runner=runner)
        self.notes = list(notes)
        self.fallback = fallback  # why it stands in for the place asked (no loop devices: plain directories)
        self.stack = contextlib.ExitStack()

    # before anything is touched
    def check(self, names: Sequence[str], workloads: Sequence = ()) -> None:
        """Refuse, reading only, what cannot run here: a ``CAP_SCALE`` where devices are not capped one by one,
        and what the place itself cannot do (``problems``)."""
        if not self.caps_each_device:
            self.array.refuse_cap_scale(self.backend)
        self.problems(names, workloads)

    def dry_run(self, names: Sequence[str], workloads: Sequence = ()) -> Plan:
        """What the campaign would do here, with nothing made and nothing run but the reads ``check`` makes: the
        run's own check (bad input raises, as in the run; what this machine lacks is said in the notes), then what
        ``make`` would create (``creates``) and the commands of each layout it measures (``commands``)."""
        said = stops(lambda: self.check(names, workloads))
        todo, skipped = self.layouts(names)
        commands: list[str] = []
        said += stops(lambda: commands.extend(self.commands(todo)))
        return Plan(self.backend, self.words(), tuple(self.creates()), tuple(commands),
                    tuple(dict.fromkeys([*self.notes, *skipped, *said])))

    def creates(self) -> list[str]:
        """What ``make`` would create, in words, for a dry run: nothing by default."""
        return []

    def commands(self, todo: Sequence[str]) -> list[str]:
        """The commands each layout of ``todo`` would run, erase included, as shell lines under a ``# layout``
        line (``layout_commands``); an existing mount point's directory of ours."""
        lines = []
        for name in todo:
            if describe(name).existing:
                lines.append(f"# layout {name}: mkdir {self.mounted.directory}/flashscale-XXXXXXXX (ours, removed "
                             "after)")
            else:
                lines += [f"# layout {name}", *self.layout_commands(name).splitlines()]
        return lines

    def layout_commands(self, name: str) -> str:
        """What building layout ``name`` would run (``arrays.layouts.dry_run``), on the ``stand_ins``."""
        return layouts.dry_run(name, self.stand_ins(), self.options)

    def stand_ins(self) -> list[Device]:
        """The devices a dry run names in the commands before they exist: ``DEVICE0``, ``DEVICE1``..."""
        return [Device(f"DEVICE{i}", f"stand-in:{i}") for i in range(self.device_count())]

    def problems(self, names: Sequence[str], workloads: Sequence) -> None:
        """Raise what keeps ``names`` (and ``workloads``) from running here: by default, a layout this machine
        cannot build (``build_problem``: md, LVM without device-mapper), before anything is made or erased."""
        problems = [f"{name}: {problem}" for name in names if not describe(name).existing
                    for problem in [self.build_problem(name)] if problem]
        if problems:
            raise UnsupportedError("cannot build " + "; ".join(problems) + ". Nothing was touched; leave these "
                                   "layouts out of LAYOUTS on this machine.")

    def build_problem(self, name: str) -> str | None:
        """What this place lacks to build layout ``name`` (``arrays.layouts.missing``: the kernel's md or
        device-mapper, their tools), or None."""
        return layouts.missing(name, self.system, self.runner)

    def support(self, names: Sequence[str], mount_dir: str | None = None) -> pd.DataFrame:
        """Per layout asked for: whether it can be measured here, and if not what is missing (reads only): the
        table ``arrays.can_build`` says in words and plans for."""
        rows = []
        for name in names:
            if name not in MEASURABLE:
                reason = f"unknown layout (choose from {', '.join(MEASURABLE)})"
            elif describe(name).existing:
                reason = None if mount_dir else "needs MOUNT_DIR, the existing mount point to measure inside"
            else:
                reason = self.build_problem(name)
            rows.append({"layout": name, "supported": reason is None, "missing": reason or ""})
        return pd.DataFrame(rows, columns=["layout", "supported", "missing"])

    def same_as(self, backends: Sequence[str]) -> bool:
        """Whether this is the place a campaign recorded as measured at one of ``backends`` (campaign.json's)."""
        return self.backend in backends

    def reproduction_problem(self, dry_run: bool, confirmed: bool) -> str | None:
        """What keeps a published campaign measured at this kind of place from being measured here again (reading
        only): ``dry_run`` as the notebook would run, ``confirmed`` whether this user confirmed the devices."""
        return None

    def words(self) -> str:
        """What the report says the campaign measured on."""
        return f"{self.device_count()} device(s)"

    def facts(self) -> dict:
        """What campaign.json's environment says of the place: its backend and words, and what it adds (a test
        bed's identities, a VM's QEMU)."""
        return {"backend": self.backend, "place": self.words()}

    def cannot_measure(self, name: str) -> str | None:
        """Why layout ``name`` cannot be measured here (skipped, said in the notes), or None."""
        return None

    def layouts(self, names: Sequence[str]) -> tuple[list[str], list[str]]:
        """The layouts of ``names`` measured here, and a note per reason naming those skipped for it."""
        why = {name: self.cannot_measure(name) for name in names}
        skipped: dict[str, list[str]] = {}
        for name, reason in why.items():
            if reason is not None:
                skipped.setdefault(reason, []).append(name)
        return [n for n in names if why[n] is None], [f"Skipped {', '.join(n)}: {r}." for r, n in skipped.items()]

    def devices(self) -> list[Device]:
        """The devices named by identity that its layouts use (a test bed's: their PCIe links and queue depth enter
        the predictions), guarded in ``check``; none where the place makes its own (the emulated array's loop
        devices) or has none (plain directories)."""
        return []

    def device_count(self) -> int:
        return len(self.devices()) or self.array.devices

    def devices_of(self, name: str) -> int:
        """How many devices layout ``name`` uses here (the mount point's as the user said)."""
        if describe(name).existing:
            return self.mounted.devices
        return len(layouts.chosen(name, range(self.device_count())))

    def caps(self, names: Sequence[str]) -> tuple[dict, dict]:
        """The caps per rw a run held in the place's cgroup carries, and each layout's own (``ArraySpec.rw_caps``)."""
        return self.array.rw_caps(), {n: self.array.rw_caps(n) for n in names if not describe(n).existing}

    # the campaign folder
    def recover(self, folder: Path, contacts=None) -> list[str]:
        """Undo what a run of this campaign that died left (its stale lock's), before anything else; the notes.
        ``contacts``: how the hosts of what it left on real hosts are reached (``system.ssh.shipped.Contacts``)."""
        holder = lock.stale_holder(folder / lock.LOCK_FILE, self.system)  # refuses while another holds it
        return lock.recover(holder, self.runner, self.system, contacts=contacts) if holder is not None else []

    def lock(self, directory: Path):
        """The campaign folder held by this run while it measures."""
        return lock.Lock.take(directory, self.system)

    def host_counts(self) -> tuple[int, ...]:
        """The host counts each layout is swept on: none where fio runs here."""
        return ()

    def recorded(self, spec: dict) -> dict:
        """The spec campaign.json records (and a resume compares): the one given."""
        return spec

    # made, measured, undone
    @contextlib.contextmanager
    def opened(self, directory: Path):
        """The place made for the campaign in ``directory`` (``make``), undone on leaving (``undo``), whatever
        happened: an error, Ctrl-C (which the undo is told of, so an error of its own is chained to it)."""
        with self.stack:
            self.make(directory)
            yield self

    def make(self, directory: Path) -> None:
        """Make what the place is made of (entered in ``stack``, undone by ``undo``); nothing by default."""

    def undo(self) -> None:
        """Undo what ``make`` made, last made first undone."""
        self.stack.close()

    def truth(self, recorder: Recorder) -> list[str]:
        """Where a truth is known: the devices measured uncapped and ``recorder`` told the caps its rows are held
        to (``measure.harness``); what the notes say of it. Nothing where no truth is known."""
        return []

    def cgroup_procs(self, name: str) -> list[Path]:
        """The cgroups fio runs in on layout ``name``: a throttled one where the place caps its devices."""
        return []

    def teardown_of(self, name: str, recorder: Recorder) -> Teardown:
        """The teardown of layout ``name``'s build, its manifest named after the campaign's run and the layout (``run``
        names a layout's second and later builds ``<layout>-build<k>``)."""
        return Teardown(manifest_dir() / f"{recorder.campaign}-{recorder.run_id}-{name}.json", self.runner,
                        self.system)

    def build(self, name: str, teardown: Teardown) -> Layout:
        """Layout ``name`` built (through the guard), everything it makes recorded in ``teardown``; a place whose
        layouts are made elsewhere (a cluster's hosts: ``swept``; the VM lab: ``run_inside``) builds none here."""
        raise ConfigError(f"the {self.backend} place builds no layout in this process ({name}: made where it runs)")

    def run_inside(self, spec: dict, data_root: Path, progress: bool):
        """The campaign ``spec`` run inside the place, its ``measure.results.CampaignResult``, where it hands the
        whole campaign to another machine (the VM lab); None where the campaign measures in this process."""
        return None

    def run(self, todo: Sequence[str], recorder: Recorder) -> list[str]:
        """Its truth first (``truth``), then each layout of ``todo`` built, swept and torn down, ``builds`` times
        over (BUILDS: a new build each time, each recorded in its own manifest and undone before the next), then
        with ``BRACKET`` the tax reference once more (``bracket``); the notes' sentences. An existing mount point is
        measured once a sweep: it cannot be built again."""
        said = self.truth(recorder)
        for name in todo:
            recorder.building(name)
            existing = describe(name).existing
            for build in range(1 if existing else recorder.sweep_spec.builds):
                recorder.build = build
                self.swept(name, f"{name}-build{build}" if build else name, recorder)
        recorder.build = 0
        return said + self.bracket(todo, recorder)

    def bracket(self, todo: Sequence[str], recorder: Recorder) -> list[str]:
        """With ``BRACKET``, the tax reference (``recorder.tax_reference``) built anew and swept once more after
        every layout taxed against it, its rows of phase ``bracket`` and of the bracket's build
        (``Sweep.bracket_build``): what drifted over the campaign (a device warming, its garbage collection,
        another tenant) shows as the reference's change (``analysis.drift``). Only where the campaign measured the
        reference and a layout after it, and not twice on a resume; the notes' sentences."""
        if not recorder.sweep_spec.bracket:
            return []
        against = recorder.tax_reference
        if bracket_name(str(against)) in campaign_folder.layouts_done(recorder.directory):
            return []
        measured = {key[0] for key in recorder.done} | set(todo)
        if against not in measured or not measured - {against, SINGLE}:
            return [f"BRACKET: nothing was bracketed: the campaign measured {against or 'no tax reference'} and no "
                    "layout taxed against it."]
        recorder.build = recorder.sweep_spec.bracket_build()
        try:
            self.swept(against, f"{against}-bracket", recorder, phase=BRACKET_PHASE)
        finally:
            recorder.build = 0
        return [f"{against} was measured again after the layouts taxed against it (BRACKET): its drift at each "
                "point is in the report."]

    def swept(self, name: str, label: str, recorder: Recorder, phase: str = "measure") -> None:
        """Layout ``name`` built (an existing mount point used), its teardown's manifest named ``label``, swept and
        torn down."""
        existing = describe(name).existing
        teardown = self.teardown_of(label, recorder)
        try:
            layout = self.mounted.layout(teardown) if existing else self.build(name, teardown)
            procs = [] if existing else self.cgroup_procs(name)
            recorder.sweep(layout, procs, phase=phase)
        finally:
            teardown.close()
