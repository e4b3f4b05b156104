"""What this machine can build: per layout asked for, whether it can be built here and, if not, what it lacks, with
the exact commands it would run on a machine that can. Nothing is touched: the machine is only read.

    layout_support(names, backend)   per layout: supported, and what is missing (backend "vm": the VM lab's needs)
    backend_for(emulation, testbed)  the backend a campaign will choose here
    layouts_to_run(support, single)  the supported layouts, with ``single`` first when a baseline is needed
    plans(support, devices, options) the command plans of the layouts this machine cannot build
    unsupported_sentences(support)   what this machine cannot build, in words
"""
from __future__ import annotations

from typing import Sequence

import pandas as pd

from . import layouts
from .. import layouts as descriptors
from .emulated import loop_support_problem
from .plan import render
from ..system.commands import Runner
from ..system import vm
from ..system.devices import Device, System

MOUNTED = descriptors.MOUNTED  # an existing mount point (GPFS, BeeGFS, NFS...), measured inside, never built


def layout_support(names: Sequence[str], backend: str, runner: Runner | None = None,
                   system: System | None = None, mount_dir: str | None = None) -> pd.DataFrame:
    """Per layout asked for: whether this machine can build it, and if not, what it lacks (nothing is touched)."""
    runner, system = runner or Runner(), system or System()
    lab_problem = vm.prerequisites_problem(system, runner) if backend == "vm" else None
    rows = []
    for name in names:
        kind = layouts.DEVICE_LAYOUTS.get(name)
        if name == MOUNTED:
            reason = None if mount_dir else "needs MOUNT_DIR, the existing mount point to measure inside"
        elif kind is None:
            reason = f"unknown layout (choose from {', '.join(descriptors.MEASURABLE)})"
        elif backend == "directory" and not kind.on_directories:
            reason = "needs block devices; this run measures plain directories"
        elif backend == "vm":  # built inside the VM lab, whose kernel has md and device-mapper
            reason = lab_problem
        else:
            reason = layouts.missing(name, system, runner)
        rows.append({"layout": name, "supported": reason is None, "missing": reason or ""})
    return pd.DataFrame(rows)


def backend_for(emulation: str, testbed: str | None = None) -> str:
    """The backend ``campaign.run`` will choose for ``emulation`` (or a test bed) on this machine."""
    if testbed:
        return "testbed"
    if emulation == "vm":
        return "vm"
    return "loop" if emulation != "directory" and loop_support_problem() is None else "directory"


def layouts_to_run(support: pd.DataFrame, with_single: bool) -> list[str]:
    """The supported layouts, with ``single`` first when the stage must measure its own baseline."""
    names = list(support.loc[support["supported"], "layout"])
    return (["single"] if with_single and "single" not in names else []) + names


def plans(support: pd.DataFrame, devices: int, options: layouts.Options) -> str:
    """The exact commands each layout this machine cannot build would run on one that can, on ``devices`` (at
    least 2) example devices ``/dev/nvme<i>n1`` built with ``options``: the command plans of md, IMSM and LVM,
    shown rather than run."""
    examples = [Device(f"/dev/nvme{i}n1", f"example:{i}") for i in range(max(2, devices))]
    blocks = [f"# {name}\n" + render(layouts.plan(name, examples, options=options, token="NAME"))
              for name in support.loc[~support["supported"], "layout"] if name in layouts.DEVICE_LAYOUTS]
    return "\n".join(blocks)


def unsupported_sentences(support: pd.DataFrame) -> list[str]:
    """What this machine cannot build, and what it lacks for each."""
    return [f"{r.layout} is not measured here: {r.missing}." for r in support.itertuples() if not r.supported]
