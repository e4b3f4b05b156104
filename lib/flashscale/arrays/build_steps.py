"""A plan: the exact commands a layout or an erase will run, as data, so it can be printed before it runs.

A ``Step`` is one argv, the devices it writes (the guard re-checks each right before it runs) and, when it makes
something, the kind and details recorded in the teardown (``Teardown.record``) *before* it runs, so an interrupted run
leaves a manifest that ``flashscale reap`` can undo. ``execute`` runs a plan; ``render`` prints it for a dry run.
"""
from __future__ import annotations

import logging
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from .. import faults
from ..system import undo
from ..system.commands import Runner
from ..system.devices import System
from ..errors import UnsupportedError
from .guard import Guard
from ..system.teardown import Teardown

log = logging.getLogger("flashscale.plan")

MADE_DEVICES = ("md", "lvm-lv")  # kinds whose "path" is a block device the plan made and may then write


@dataclass(frozen=True)
class Step:
    argv: tuple[str, ...]
    writes: tuple[str, ...] = ()
    creates: str | None = None
    details: dict = field(default_factory=dict)

    def __str__(self) -> str:
        return shlex.join(self.argv)


def render(steps: Sequence[Step]) -> str:
    """The plan as the shell lines it amounts to, one per step."""
    return "\n".join(str(step) for step in steps)


def execute(steps: Sequence[Step], *, guard: Guard, runner: Runner, teardown: Teardown, system: System) -> list[str]:
    """Run ``steps`` in order through the guard; verify each thing made is there. Returns the lines run."""
    done = []
    for step in steps:
        recorded = (lambda s=step: teardown.record(s.creates, **s.details)) if step.creates else None
        if step.argv[0] == "mkdir":  # a mount point in our own temporary directory: no device is written
            guard.check(step.writes)
            if recorded:
                recorded()
            log.info("mkdir %s", step.argv[1])
            Path(step.argv[1]).mkdir()
        else:  # checked, recorded, then run: nothing is recorded or run when the guard refuses
            guard.run(runner, step.argv, step.writes, before=recorded)
        done.append(str(step))
        if step.creates in MADE_DEVICES:
            undo.settle(runner)
            guard.adopt(step.details["path"])
        if step.creates and undo.present(step.creates, step.details, system) is False:
            raise UnsupportedError(f"{step} reported success but its {step.creates} "
                                   f"{step.details.get('path', '')} is not there")
        faults.reached("layout-building")
    return done
