"""A campaign file's cost before it runs (``flashscale run --estimate``, the first line of every run, ``--budget``).

Each notebook's cost (``notebooks.cost``) comes from the values it will run with: its parameters cell's own, under
the campaign file's and ``-p``'s. Its sweep is the campaign's ``Sweep`` made from them; its layouts are
``LAYOUTS`` where it declares them, else the one layout its stage measures, times each of ``DEVICE_COUNTS`` and
of a cluster's ``HOSTS``; the harness's probe counts where the emulated array's caps are held to a truth; its
precondition runs at the caps' rate on the emulated array, on a test bed at ``cost.ASSUMED_WRITE_BPS``. A notebook
that measures nothing (none of ``MEASURING``: a comparison, a reproduction's report) costs its own wall time only.
What this does not see: a stage's layouts chosen in its code rather than its parameters (the study's 03 measures
its ``LAYOUTS``; 01 one device), a job file's own runtime, an application's workload length.
"""
from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from ..campaigns import campaign as campaigns, cluster as clusters, parameters as schema
from ..campaigns.dry_run import MEASURING
from ..errors import ConfigError
from . import cost
from ..measure.reference import STANDS_IN, reference_of
from ..measure.sweep import Sweep

VM_NOTE = ("in the VM lab, its boot and what its emulated CPU adds to each run are not counted: under TCG a 6 s "
           "run took 9 to 16 s")
UNITS = {"s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400}
DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(d|h|min|m|s)?")


def parse_duration(text: str) -> float:
    """Seconds of a duration as people write it: "3600", "90m", "1h30m", "2 h", "45min"; ConfigError naming it
    otherwise (nothing, a negative, an unknown unit)."""
    said = str(text).strip().lower()
    found = list(DURATION.finditer(said))
    if not said or not found or "".join(m.group(0) for m in found).replace(" ", "") != said.replace(" ", ""):
        raise ConfigError(f"--budget {text!r} is no duration: write e.g. 3600, 90m, 1h30m, 2h")
    seconds = sum(float(m.group(1)) * UNITS[m.group(2) or "s"] for m in found)
    if not seconds > 0:
        raise ConfigError(f"--budget {text!r} must be a positive duration")
    return seconds


def _count(value, default: int = 1) -> int:
    if isinstance(value, (list, tuple)):
        return max(len(value), 1)
    return default


def _shared(values: dict) -> int:
    """How many of the layouts a notebook's ``values`` sweep are the others' tax reference (one per device count;
    ``measure.reference.reference_of``), whose points run to the most with a precision; none on a cluster, whose
    loop reads no tax as it runs."""
    names = values.get("LAYOUTS")
    if "HOSTS" in values or not isinstance(names, (list, tuple)):
        return 0
    against = reference_of([str(n) for n in names], str(values.get("REFERENCE") or STANDS_IN))
    return 0 if against is None else _count(values.get("DEVICE_COUNTS"))


def of_notebook(values: dict) -> cost.Cost:
    """The cost of one notebook run with ``values`` (its parameters, every one it will see: module doc)."""
    if not MEASURING & set(values):
        return cost.Cost((0.0, 0.0), (cost.NOTEBOOK_S,) * 2, (0, 0), {"overhead": (cost.NOTEBOOK_S,) * 2})
    parts_of = clusters.PARTS if "HOSTS" in values else campaigns.PARTS
    split = schema.split(values, parts_of)
    sweep = Sweep(**split["sweep"])
    layouts = _count(values.get("LAYOUTS")) * _count(values.get("DEVICE_COUNTS")) * _count(values.get("HOSTS"))
    emulated = not values.get("TESTBED") and not values.get("REMOTE_HOSTS") and not values.get("INVENTORY")
    write_bps = None
    if emulated:
        array = campaigns.ArraySpec(**split.get("array", {})) if "array" in split else campaigns.ArraySpec()
        write_bps = array.write_bps * array.devices if array.write_bps else None
    probe = emulated and bool(values.get("CAP_READ_BPS", 1) or values.get("CAP_WRITE_BPS", 1))
    # each build of a layout (BUILDS) is swept and preconditioned again: a layout's cost that many times
    found = cost.of_layouts(sweep, layouts * sweep.builds, write_bps=write_bps, probe=probe,
                            shared=_shared(values) * sweep.builds)
    if values.get("EMULATION") == "vm":
        return replace(found, notes=(*found.notes, VM_NOTE))
    return found


def of_campaign(values: dict[Path, dict]) -> tuple[dict[str, cost.Cost], cost.Cost]:
    """Each notebook's cost (by its name) and the campaign's, from each notebook's values."""
    each = {path.stem: of_notebook(v) for path, v in values.items()}
    return each, cost.total(each.values())


def lines(each: dict[str, cost.Cost], whole: cost.Cost) -> list[str]:
    """What a person reads: one line a notebook, then the total and what is assumed."""
    said = [f"  {name}: {c.words()}" for name, c in each.items()]
    said.append(f"estimate: {whole.words()}")
    return said + [f"  ({note})" for note in whole.notes]
