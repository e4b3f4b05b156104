"""Named fault points: the moments of a campaign at which a test has the process killed with SIGKILL, as a crash, an
OOM kill or ``kill -9`` would, so that a resume is proven from each of them (``tests/test_kill_points.py``).

``FLASHSCALE_FAULT=<point>[@<n>]`` in the environment kills this process the ``n``-th time (default the first) it
reaches ``point``; without it every point costs one dictionary look-up. It is a test's switch: nothing in flashscale
sets it, and a value naming no point of ``POINTS`` is refused (``ConfigError``, naming it) at the first point reached,
so a typo cannot leave a test that kills nothing.
"""
from __future__ import annotations

import os
import re
import signal

from .errors import ConfigError

ENV = "FLASHSCALE_FAULT"
POINTS = {
    "manifest-recorded": "a thing recorded in a teardown's manifest, not yet made (Teardown.record)",
    "manifest-writing": "a manifest's new text written beside it, not yet renamed over it (Teardown._write)",
    "layout-building": "a layout's build step run, the steps after it not yet (arrays.build_steps.execute)",
    "run-folder-made": "a run's raw folder made, its job file not yet written (measure.fio.run, measure.ahead.start)",
    "ahead-held": "the next run's fio started ahead and held at its gate while this run measures (measure.ahead)",
    "fio-running": "fio started and measuring, not yet exited (system.commands.Runner.run, measure.ahead)",
    "fio-exited": "fio exited with its output, the row not yet written (measure.recorder)",
    "row-env-written": "a run's env.json written, its row not yet appended to rows.jsonl (measure.recorder)",
    "row-half-written": "half of a row's line appended to rows.jsonl (measure.campaign_folder.append_rows)",
    "layout-tearing-down": "a teardown's entry undone, the entries before it not yet (Teardown.close)",
}
_SPEC = re.compile(r"(?P<point>[a-z-]+)(?:@(?P<n>[1-9][0-9]{0,5}))?")
_reached: dict[str, int] = {}


def armed() -> tuple[str, int] | None:
    """The point and count ``FLASHSCALE_FAULT`` names, None when it is unset; ConfigError when it names none."""
    value = os.environ.get(ENV, "")
    if not value:
        return None
    match = _SPEC.fullmatch(value)
    if match is None or match["point"] not in POINTS:
        raise ConfigError(f"{ENV}={value!r} names no fault point: one of {', '.join(POINTS)}, optionally @<n>")
    return match["point"], int(match["n"] or 1)


def armed_at(point: str) -> bool:
    """Whether the switch names ``point``: for a point that must first make its fault (half a line written)."""
    chosen = armed()
    return chosen is not None and chosen[0] == point


def reached(point: str) -> None:
    """This process is at ``point`` (one of ``POINTS``): killed with SIGKILL here when the switch says so."""
    if point not in POINTS:
        raise ValueError(f"{point!r} is not a fault point")
    chosen = armed()
    if chosen is None or chosen[0] != point:
        return
    _reached[point] = _reached.get(point, 0) + 1
    if _reached[point] == chosen[1]:
        os.kill(os.getpid(), signal.SIGKILL)
