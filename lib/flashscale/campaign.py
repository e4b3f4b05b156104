"""A campaign: build the array, run the sweep on each layout, keep every point's raw files and the tidy table.

    spec = CampaignSpec.from_parameters(CAMPAIGN="quickstart", DEVICES=4, LAYOUTS=["single", "jbod"], ...)
    result = run(spec)          # result.table, result.notes, result.directory

The array and every layout are torn down before ``run`` returns or raises, including on Ctrl-C. Rows are appended
to ``rows.jsonl`` as each run finishes, so an interrupted campaign keeps what it measured.
"""
from __future__ import annotations

import json
import os
import platform
import signal
import tempfile
import threading
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
from tqdm.auto import tqdm

from . import fio, layouts, results
from .commands import Runner
from .emulated import ArraySpec, EmulatedArray, loop_support_problem
from .errors import ConfigError, UnsupportedError
from .sweep import Sweep
from .teardown import Teardown, manifest_dir

EMULATION_MODES = ("auto", "loop", "directory")


def _is_checkout(folder: Path) -> bool:
    return (folder / "pyproject.toml").exists() and (folder / "runners").is_dir()


def project_root(start: Path | None = None) -> Path:
    """The flashscale checkout holding ``start`` (a folder with runners/ and pyproject.toml); failing that, the
    checkout this package was installed from (an editable install); failing that, ``start`` itself."""
    start = (start or Path.cwd()).resolve()
    for folder in (start, *start.parents):
        if _is_checkout(folder):
            return folder
    installed_from = Path(__file__).resolve().parents[2]
    return installed_from if _is_checkout(installed_from) else start


@dataclass(frozen=True)
class CampaignSpec:
    name: str
    layouts: tuple[str, ...] = ("single", "jbod", "btrfs-raid0")
    array: ArraySpec = field(default_factory=ArraySpec)
    sweep: Sweep = field(default_factory=Sweep)
    emulation: str = "auto"
    host: str = "localhost"
    data_dir: str = "data/campaigns"

    def __post_init__(self) -> None:
        if not self.name or "/" in self.name or self.name.startswith("."):
            raise ConfigError(f"campaign name {self.name!r} must be a plain, non-empty folder name")
        if self.emulation not in EMULATION_MODES:
            raise ConfigError(f"emulation={self.emulation!r} is not one of {', '.join(EMULATION_MODES)}")
        known = (*layouts.DEVICE_LAYOUTS, )
        bad = [name for name in self.layouts if name not in known]
        if bad or not self.layouts:
            raise ConfigError(f"layouts {bad or 'empty'}: choose from {', '.join(known)}")
        object.__setattr__(self, "layouts", tuple(self.layouts))

    @classmethod
    def from_parameters(cls, **p) -> "CampaignSpec":
        """Build a spec from a notebook's UPPER_CASE parameters (see notebooks/quickstart.ipynb)."""
        array = ArraySpec(devices=p.get("DEVICES", 4), device_size=p.get("DEVICE_SIZE", 2 * 2**30),
                          read_bps=p.get("CAP_READ_BPS", 200_000_000), write_bps=p.get("CAP_WRITE_BPS", 200_000_000),
                          backing_root=p.get("BACKING_DIR") or None)
        sweep = Sweep(rw=p.get("RW", ("write", "read")), bs=p.get("BS", (2**20,)),
                      numjobs=p.get("NUMJOBS", (1, 2, 4)), iodepth=p.get("IODEPTH", (1,)),
                      repetitions=p.get("REPETITIONS", 1), warmup=p.get("WARMUP", True),
                      runtime_s=p.get("RUNTIME_S", 3), ramp_s=p.get("RAMP_S", 1), size=p.get("FILE_SIZE", 128 * 2**20))
        return cls(name=p.get("CAMPAIGN", "quickstart"), layouts=tuple(p.get("LAYOUTS", cls.layouts)), array=array,
                   sweep=sweep, emulation=p.get("EMULATION", "auto"), host=p.get("HOST", "localhost"),
                   data_dir=p.get("DATA_DIR", "data/campaigns"))


@dataclass
class CampaignResult:
    table: pd.DataFrame
    directory: Path
    backend: str
    notes: list[str]


def _campaign_dir(spec: CampaignSpec) -> Path:
    """A fresh directory for this campaign; an earlier one of the same name is kept, renamed with its date."""
    base = Path(spec.data_dir)
    base = base if base.is_absolute() else project_root() / base
    directory = base / spec.name
    if directory.exists():
        stamp = datetime.fromtimestamp(directory.stat().st_mtime, timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        directory.rename(base / f"{spec.name}.{stamp}")
    directory.mkdir(parents=True)
    return directory


def _environment(runner: Runner, backend: str) -> dict:
    fio_version = runner.run(["fio", "--version"]).stdout.strip()
    return {"hostname": platform.node(), "kernel": platform.release(), "python": platform.python_version(),
            "fio": fio_version, "cpus": os.cpu_count(), "backend": backend}


def _backend(spec: CampaignSpec) -> tuple[str, list[str]]:
    problem = loop_support_problem()
    if spec.emulation == "directory":
        return "directory", ["Emulation was set to plain directories: no devices, no erase, no caps."]
    if problem is None:
        return "loop", []
    if spec.emulation == "loop":
        raise UnsupportedError(f"emulation='loop' was asked for but {problem}")
    return "directory", [f"No emulated array: {problem}. The campaign measured plain directories on the local "
                         "disk instead, skipped the erase and the array layouts, and applied no bandwidth caps; "
                         "its efficiency compares directories that share one disk, not devices."]


class _Recorder:
    """Runs one layout's sweep and appends each run's row to the campaign as soon as it finishes."""

    def __init__(self, spec: CampaignSpec, directory: Path, runner: Runner, run_id: str, cap: dict, bar,
                 environment: dict):
        self.spec, self.directory, self.runner, self.run_id, self.cap, self.bar = spec, directory, runner, run_id, cap, bar
        self.environment = environment

    def sweep(self, layout: layouts.Layout, cgroup_procs: list[Path]) -> None:
        for point in self.spec.sweep.points():
            job = self.spec.sweep.job(point, layout.targets)
            for rep, warmup in self.spec.sweep.reps():
                raw_dir = Path("raw") / layout.name / job.point / f"rep{rep}"
                self.bar.set_postfix_str(f"{layout.name} {job.point} rep{rep}")
                started = datetime.now(timezone.utc).isoformat(timespec="seconds")
                data = fio.run(job, self.directory / raw_dir, self.runner, cgroup_procs=cgroup_procs)
                row = {"campaign": self.spec.name, "host": self.spec.host, "layout": layout.name,
                       "devices": layout.devices, **point, "rep": rep, "warmup": warmup, **fio.parse(data),
                       "run_id": self.run_id, "point": job.point, "backend": layout.backend,
                       "cap_bps": self.cap.get(point["rw"], float("nan")), "raw_dir": str(raw_dir),
                       "started_at": started}
                (self.directory / raw_dir / "env.json").write_text(json.dumps(
                    {**self.environment, "targets": list(layout.targets), "layout": layout.description,
                     "cgroup": [str(p) for p in cgroup_procs], "row": row}, indent=1, default=str))
                results.append_rows(self.directory, [row])
                self.bar.update(1)


def _caps(spec: CampaignSpec, backend: str) -> dict:
    if backend != "loop":
        return {}
    a = spec.array
    return {"read": a.read_bps, "randread": a.read_bps, "write": a.write_bps, "randwrite": a.write_bps}


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


def run(spec: CampaignSpec, runner: Runner | None = None, progress: bool = True) -> CampaignResult:
    """Run the campaign; return the tidy table (warm-ups included, flagged) and what the report must say."""
    with _sigterm_as_interrupt():
        return _run(spec, runner or Runner(), progress)


def _run(spec: CampaignSpec, runner: Runner, progress: bool) -> CampaignResult:
    backend, notes = _backend(spec)
    directory = _campaign_dir(spec)
    run_id = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    env = _environment(runner, backend)
    (directory / "campaign.json").write_text(json.dumps(
        {"run_id": run_id, "spec": asdict(spec), "environment": env, "notes": notes}, indent=1, default=str))
    todo = [name for name in spec.layouts if backend == "loop" or name in ("single", "jbod")]
    skipped = [name for name in spec.layouts if name not in todo]
    if skipped:
        notes.append(f"Skipped {', '.join(skipped)}: plain directories cannot be striped into an array.")
    with tqdm(total=spec.sweep.runs() * len(todo), desc=spec.name, disable=not progress, unit="run") as bar:
        recorder = _Recorder(spec, directory, runner, run_id, _caps(spec, backend), bar, env)
        try:
            if backend == "loop":
                _run_on_loop(spec, todo, recorder, runner)
            else:
                _run_on_directories(spec, todo, recorder, directory)
        finally:
            table = results.rebuild_table(directory) if (directory / results.ROWS_FILE).exists() else None
    (directory / "notes.json").write_text(json.dumps(notes, indent=1))
    return CampaignResult(table, directory, backend, notes)


def _run_on_loop(spec: CampaignSpec, todo: list[str], recorder: _Recorder, runner: Runner) -> None:
    with EmulatedArray(spec.array, runner) as array:
        for name in todo:
            teardown = Teardown(manifest_dir() / f"{array.workdir.name}-{name}.json")
            try:
                layout = layouts.build(name, array.devices, runner, teardown)
                recorder.sweep(layout, array.cgroup_procs)
            finally:
                teardown.close()


def _run_on_directories(spec: CampaignSpec, todo: list[str], recorder: _Recorder, directory: Path) -> None:
    scratch = Path(tempfile.mkdtemp(prefix="scratch-", dir=directory))
    teardown = Teardown(manifest_dir() / f"{directory.name}-{scratch.name}.json")
    teardown.record("dir", scratch.rmdir, path=str(scratch))
    try:
        for name in todo:
            layout = layouts.build_directories(name, spec.array.devices, scratch, teardown)
            recorder.sweep(layout, [])
    finally:
        teardown.close()
