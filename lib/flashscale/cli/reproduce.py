"""Run a published campaign again and say whether each of its key numbers reproduced.

DIR_OR_REPORT is a campaign's report folder (reports/<campaign>) or one of its reports. Its notebooks run again
with the parameters each ran with (-p on top, e.g. -p 'CAP_SCALE=[1, 0.5]') as the campaign <campaign>-reproduced,
published beside it; then 08_compare holds every baseline, best, efficiency and tax against the original's, with
both intervals, and publishes reproduction.html there: each number reproduced, differing beyond the noise by X%,
or not comparable (why), and the verdict in one sentence (printed last). Refused, naming what differs, when this
machine cannot run the original's notebooks as they ran. The list of reports written goes to stdout.
"""
from __future__ import annotations

import argparse

from ..notebooks import execute, reproduce
from ..publish.report import read_record


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("published", metavar="DIR_OR_REPORT",
                        help="a campaign's report folder, e.g. reports/quickstart, or one of its reports")
    parser.add_argument("--reports", default=None, metavar="DIR",
                        help="where the reproduction's reports go (default: beside the original's)")
    parser.add_argument("-p", "--parameter", action="append", default=[], metavar="NAME=YAML",
                        help="change one parameter of the notebooks that declare it, e.g. -p 'CAP_SCALE=[1, 0.5]'")


def main(args: argparse.Namespace) -> int:
    overrides = execute.parse_overrides(args.parameter)
    published = reproduce.reproduce(args.published, overrides, reports_dir=args.reports)
    for path in published:
        print(path)
    print(read_record(published[-1].with_suffix(".ipynb"))["verdict"])
    return 0
