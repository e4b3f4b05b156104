"""The errors flashscale raises.

The library raises, the command line decides: only ``flashscale.cli`` turns these into messages and exit codes.
Every message names the value that was wrong.

    FlashscaleError              anything flashscale itself refuses or cannot do
    ├── ConfigError              bad input: a parameter, a campaign file, a sweep axis (also a ValueError)
    ├── CommandError             an external command failed: its argv, exit status and stderr are kept
    ├── FioError                 fio ran but its result is unusable (job error, no I/O, no JSON)
    ├── UnsupportedError         this machine cannot do it (no root, no loop devices, no md, no device-mapper)
    │   └── HarnessCeilingError  it cannot carry the caps a known truth needs (measured, with CAP_FIT 'refuse')
    ├── RefusedError             a destructive step was refused by a guard; nothing was touched
    └── AnalysisError            the results cannot answer the question (missing column, baseline, reference)
"""
from __future__ import annotations


class FlashscaleError(Exception):
    """Base class of every error flashscale raises on purpose."""


class ConfigError(FlashscaleError, ValueError):
    """A parameter, campaign file or sweep description is invalid."""


class CommandError(FlashscaleError):
    """An external command exited with a status we did not accept."""

    def __init__(self, argv: list[str] | tuple[str, ...], returncode: int, stderr: str = ""):
        self.argv = list(argv)
        self.returncode = returncode
        self.stderr = stderr
        detail = stderr.strip().splitlines()[-1] if stderr.strip() else "no message on stderr"
        super().__init__(f"command {' '.join(self.argv)!r} exited with status {returncode}: {detail}")


class FioError(FlashscaleError):
    """fio finished but its output cannot be trusted as a measurement."""


class UnsupportedError(FlashscaleError):
    """The machine lacks what this step needs; raised before anything is touched."""


class RefusedError(FlashscaleError):
    """A guard refused a destructive step; nothing was written."""


class AnalysisError(FlashscaleError, ValueError):
    """The results table cannot answer the question asked of it."""


class HarnessCeilingError(UnsupportedError):
    """The machine that emulates a test bed cannot carry the caps its known truth needs (``measure.harness``):
    measured before anything was held to that truth."""


def kind(name: str) -> type[FlashscaleError]:
    """The error class of this module called ``name`` (an error that crossed a process: a notebook's kernel, the VM
    lab's guest), FlashscaleError for any other name."""
    found = globals().get(name)
    return found if isinstance(found, type) and issubclass(found, FlashscaleError) else FlashscaleError
