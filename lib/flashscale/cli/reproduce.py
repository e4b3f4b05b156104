"""Run a published campaign again and say whether each of its key numbers reproduced.

DIR_OR_REPORT is a campaign's report folder (reports/<campaign>) or one of its reports. It runs again as
<campaign>-reproduced, and reproduction.html says of every number: reproduced, differs beyond the noise, or not
comparable. It prints each report written, the comparison last, then the verdict; --format csv or json one row a
report (report, verdict: the comparison's row carries it). Guide: docs/howto/reproduce.md; every option:
docs/reference/commands.md#flashscale-reproduce.
"""
from __future__ import annotations

import argparse

from .output import add_format, emit


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("published", metavar="DIR_OR_REPORT",
                        help="a campaign's report folder, e.g. reports/quickstart, or one of its reports")
    parser.add_argument("--reports", default=None, metavar="DIR",
                        help="where the reproduction's reports go (default: beside the original's)")
    parser.add_argument("-p", "--parameter", action="append", default=[], metavar="NAME=YAML",
                        help="change one parameter of the notebooks that declare it, e.g. -p 'CAP_SCALE=[1, 0.5]'")
    add_format(parser)


def main(args: argparse.Namespace) -> int:
    from ..notebooks import execute, reproduce
    from ..publish.report import read_record

    overrides = execute.parse_overrides(args.parameter)
    published = reproduce.reproduce(args.published, overrides, reports_dir=args.reports)
    verdict = read_record(published[-1].with_suffix(".ipynb"))["verdict"]
    if args.format == "table":
        print(*published, verdict, sep="\n")
    else:
        emit([dict(report=str(path), verdict=verdict if path == published[-1] else None) for path in published],
             args.format)
    return 0
