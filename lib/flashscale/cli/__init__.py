"""The ``flashscale`` command. Each subcommand lives in its own module with ``add_arguments`` and ``main``; a module
imports at its top only what its parser needs, and what its run needs where it runs, so that ``--help`` imports none
of pandas, numpy or scipy (tests/test_cli_manners.py; benchmarks/bench_cli.py times it).

Only here do errors become messages and exit statuses: 0 success, 1 a flashscale error (the message names the
bad value), 2 bad usage (argparse), 3 ``flashscale import`` imported what it could but refused some files (each
named), 4 this machine cannot carry the caps a known truth needs (``HarnessCeilingError``, with CAP_FIT 'refuse':
nothing was measured), 5 ``flashscale compare --fail-on`` found a verdict it gates on, 130 interrupted. Output into a pipe that closes early (``| head``) ends
quietly with status 0, as Unix tools do: the rest of the output is dropped, nothing else.

``flashscale --version`` says the package's version and the commit of the checkout it runs from
(``system.provenance``), read only when asked. ``flashscale completion bash|zsh|fish`` prints the shell's
completion script; a completion request is answered before anything else (``completion.complete``). Results print
in one ``--format table|csv|json`` (``output``), sizes and rates read by one reader each (``measure.units``).
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

from ..errors import FlashscaleError, HarnessCeilingError
from . import (analyze, archive, compare, completion, devices, erase, import_, jobfile, plan, reap, reproduce, run,
               vm_guest)

HARNESS_CEILING = 4  # the exit status of a HarnessCeilingError: the machine cannot carry a truth's caps
SUBCOMMANDS = {"run": run, "reproduce": reproduce, "analyze": analyze, "compare": compare, "archive": archive,
               "plan": plan, "devices": devices, "erase": erase, "reap": reap, "jobfile": jobfile,
               "vm-guest": vm_guest, "import": import_, "completion": completion}


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="flashscale", description=(
        "Measure how flash storage scales. Guide: docs/index.md (make docs builds the site); every command and "
        "option: docs/reference/commands.md."))
    top.add_argument("--version", action=Version)
    verbosity(top, False)
    subs = top.add_subparsers(dest="command", required=True)
    for name, module in SUBCOMMANDS.items():
        sub = subs.add_parser(name, help=module.__doc__.strip().splitlines()[0], description=module.__doc__)
        verbosity(sub, argparse.SUPPRESS)
        module.add_arguments(sub)
        sub.set_defaults(handler=module.main)
    return top


def verbosity(parser: argparse.ArgumentParser, default) -> None:
    """-v and -q, on the command and on each subcommand, so that either is taken before or after the subcommand's
    name. A subcommand's default is ``argparse.SUPPRESS``: not given there, it leaves the command's own as it was."""
    either = parser.add_mutually_exclusive_group()
    either.add_argument("-v", "--verbose", action="store_true", default=default, help="log every external command")
    either.add_argument("-q", "--quiet", action="store_true", default=default,
                        help="show only errors: no warnings or information logged")


class Version(argparse.Action):
    """``--version``: flashscale's version and the checkout's commit (``provenance.commit_words``), on stdout, then
    exit 0; git is asked only when the option is given, never to build the parser."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help="print flashscale's version and the commit of its checkout, and exit"):
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(version_line())
        parser.exit()


def version_line() -> str:
    """``flashscale 0.1.0 (commit 96bb5720ab)``; ``(no git commit)`` outside a checkout (an installed package)."""
    from ..system import provenance

    facts = provenance.software()
    return f"flashscale {facts['flashscale'] or 'unknown'} ({provenance.commit_words(facts)})"


def main(argv: Sequence[str] | None = None) -> int:
    top = parser()
    completion.complete(top)  # a shell asking what comes next: answered, and the process ends
    args = top.parse_args(argv)
    if args.verbose and args.quiet:  # one before the subcommand, the other after it
        top.error("argument -q/--quiet: not allowed with argument -v/--verbose")
    import logging  # here, not above: --help has exited by now, without it

    level = logging.INFO if args.verbose else logging.ERROR if args.quiet else logging.WARNING
    logging.basicConfig(level=level, format="%(name)s: %(message)s")
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
