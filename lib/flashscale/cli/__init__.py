"""The ``flashscale`` command. Each subcommand lives in its own module with ``add_arguments`` and ``main``.

Only here do errors become messages and exit statuses: 0 success, 1 a flashscale error (the message names the
bad value), 2 bad usage (argparse), 3 ``flashscale import`` imported what it could but refused some files (each
named), 4 this machine cannot carry the caps a known truth needs (``HarnessCeilingError``, with CAP_FIT 'refuse':
nothing was measured), 130 interrupted. Output into a pipe that closes early (``| head``) ends
quietly with status 0, as Unix tools do: the rest of the output is dropped, nothing else.
"""
from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Sequence

from ..errors import FlashscaleError, HarnessCeilingError
from . import analyze, devices, erase, import_, jobfile, plan, reap, reproduce, run, vm_guest

HARNESS_CEILING = 4  # the exit status of a HarnessCeilingError: the machine cannot carry a truth's caps
SUBCOMMANDS = {"run": run, "reproduce": reproduce, "analyze": analyze, "plan": plan, "devices": devices,
               "erase": erase, "reap": reap, "jobfile": jobfile, "vm-guest": vm_guest, "import": import_}


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="flashscale", description=(
        "Measure how flash storage scales. Guide: docs/index.md (make docs builds the site); every command and "
        "option: docs/reference/commands.md."))
    top.add_argument("-v", "--verbose", action="store_true", help="log every external command")
    subs = top.add_subparsers(dest="command", required=True)
    for name, module in SUBCOMMANDS.items():
        sub = subs.add_parser(name, help=module.__doc__.strip().splitlines()[0], description=module.__doc__)
        module.add_arguments(sub)
        sub.set_defaults(handler=module.main)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(name)s: %(message)s")
    try:
        return args.handler(args) or 0
    except FlashscaleError as exc:
        print(f"flashscale {args.command}: error: {exc}", file=sys.stderr)
        return HARNESS_CEILING if isinstance(exc, HarnessCeilingError) else 1
    except KeyboardInterrupt:
        print(f"flashscale {args.command}: interrupted; everything it created was torn down", file=sys.stderr)
        return 130
    except BrokenPipeError:
        _quiet_stdout()
        return 0


def _quiet_stdout() -> None:
    """The reader of our output went away (``| head``): point stdout at /dev/null, so that the flush at exit does
    not raise BrokenPipeError again (Python's own advice for SIGPIPE)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


if __name__ == "__main__":
    sys.exit(main())
