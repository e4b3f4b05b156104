"""Execute a campaign: its notebooks with papermill, parameters from the campaign file, reports as HTML.

The executed notebooks and their HTML go to reports/<campaign>/; the measurements to data/campaigns/<campaign>/.
"""
from __future__ import annotations

import argparse

from .. import execute


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("campaign", help="campaign file (YAML), e.g. runners/quickstart.yaml")
    parser.add_argument("--reports", default=None, metavar="DIR", help="where reports go (default: reports/)")
    parser.add_argument("-p", "--parameter", action="append", default=[], metavar="NAME=YAML",
                        help="override one notebook parameter, e.g. -p DEVICES=2 (value read as YAML)")


def main(args: argparse.Namespace) -> int:
    overrides = execute.parse_overrides(args.parameter)
    published = execute.run_campaign(args.campaign, reports_dir=args.reports, overrides=overrides)
    for path in published:
        print(path)
    return 0
