"""``make help`` names every target of the Makefile's .PHONY, and names no target that .PHONY leaves out; each of
them is a rule of the Makefile. (The durations it states: tests/test_durations.py.)"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAKEFILE = ROOT / "Makefile"
NAMED = re.compile(r"^make ([\w-]+) +- ", re.M)


def phony(makefile: str) -> set[str]:
    """The targets of every ``.PHONY:`` line of a Makefile, continuation lines included."""
    joined = makefile.replace("\\\n", " ")
    return {t for line in re.findall(r"^\.PHONY:(.*)$", joined, re.M) for t in line.split()}


def rules(makefile: str) -> set[str]:
    """The targets the Makefile has a rule for (``name:`` or ``name: prerequisites`` at a line's start)."""
    return set(re.findall(r"^([\w-]+) *:(?!=)", makefile, re.M))


def help_output() -> str:
    done = subprocess.run(["make", "--no-print-directory", "-s", "-C", str(ROOT), "help"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_help_names_every_phony_target_and_no_other():
    targets, named = phony(MAKEFILE.read_text()), NAMED.findall(help_output())
    assert {"deps", "deps-vm", "test-fast", "system-deps", "reference-docs", "demo"} <= targets
    assert not targets - set(named), f"make help does not name: {sorted(targets - set(named))}"
    assert not set(named) - targets, f"make help names targets .PHONY does not: {sorted(set(named) - targets)}"
    assert len(named) == len(set(named)), "make help names a target twice"
    assert not targets - rules(MAKEFILE.read_text()), f".PHONY targets without a rule: {targets - rules(MAKEFILE.read_text())}"


def test_phony_targets_are_read_across_continuation_lines():
    makefile = ".PHONY: a b \\\n\tc\nFOO := x\n.PHONY: d\na: b\nFOO: c\nd:\n"
    assert phony(makefile) == {"a", "b", "c", "d"}
    assert rules(makefile) == {"a", "FOO", "d"}
