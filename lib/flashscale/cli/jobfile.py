"""Check a fio job file of your own: print it as flashscale would run it on the targets, or say why not.

Nothing runs and nothing is written; a refused file exits with status 1, naming the option and its line. Guide:
docs/howto/job-files.md; every option: docs/reference/commands.md#flashscale-jobfile.
"""
from __future__ import annotations

import argparse

from ..errors import ConfigError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="the fio job file")
    parser.add_argument("--target", action="append", required=True, metavar="DIR",
                        help="a directory or device of the layout (repeat for each)")
    parser.add_argument("--raw-dir", default="raw", metavar="DIR",
                        help="where the run's logs would go (default: raw, nothing is created)")
    parser.add_argument("-s", "--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a swept option to set in every job, e.g. -s numjobs=4")


def _overrides(pairs: list[str]) -> dict[str, str]:
    overrides = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise ConfigError(f"-s {pair!r}: give NAME=VALUE, e.g. numjobs=4")
        overrides[name.strip()] = value.strip()
    return overrides


def main(args: argparse.Namespace) -> int:
    from ..measure.jobfile import JobFile
    from ..measure.jobrun import accepted_by_fio
    from ..system.commands import Runner

    text = JobFile.read(args.file).rewrite(args.target, args.raw_dir, _overrides(args.set))
    accepted_by_fio(text, Runner())
    print(text, end="")
    return 0
