"""make test's budget (tests/conftest.py): a suite that took longer than its budget by more than the margin fails,
naming the budget, counted from when make test began (FLASHSCALE_SUITE_SINCE: its two sessions are one suite);
one inside it passes."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]
QUICK = "tests/test_make_help.py::test_phony_targets_are_read_across_continuation_lines"


def _session(since: int, budget: int, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "FLASHSCALE_SUITE_SINCE": str(since), "FLASHSCALE_SUITE_BUDGET_S": str(budget)}
    return subprocess.run([sys.executable, "-m", "pytest", QUICK, "-q", "-p", "no:cacheprovider", *extra], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120)


def test_a_suite_over_its_budget_since_make_test_began_fails_and_one_inside_passes():
    # over: with pytest-xdist, as make test's first part runs, so the controller (not a worker) holds the budget
    over = _session(int(time.time()) - 1000, 100, "-n", "2")  # began 1,000 s ago: over 100 s + 15%
    assert over.returncode == 1, over.stdout[-2000:] + over.stderr[-2000:]
    assert "over its budget of 100 s by more than 15% (115 s)" in over.stdout, over.stdout[-2000:]
    inside = _session(int(time.time()), 1000)
    assert inside.returncode == 0 and "over its budget" not in inside.stdout, inside.stdout[-2000:]
