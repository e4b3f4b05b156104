"""Execute a campaign: its notebooks with papermill, parameters from the campaign file, reports as HTML.

Reports go to reports/<campaign>/, measurements to data/campaigns/<campaign>/; each fio run is shown on stderr as
it starts and ends, and the reports written are listed on stdout. Guide: docs/tutorials/quickstart.md; every
option: docs/reference/commands.md#flashscale-run.
"""
from __future__ import annotations

import argparse

from ..notebooks import execute


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("campaign", help="campaign file (YAML), e.g. runners/quickstart.yaml")
    parser.add_argument("--reports", default=None, metavar="DIR", help="where reports go (default: reports/)")
    parser.add_argument("-p", "--parameter", action="append", default=[], metavar="NAME=YAML",
                        help="override one notebook parameter, e.g. -p DEVICES=2 (value read as YAML)")
    parser.add_argument("--resume", action="store_true",
                        help="continue the interrupted run of this campaign: finished runs and notebooks are kept")
    parser.add_argument("--force-resume", action="store_true",
                        help="resume even when the campaign file or the machine changed (the report says so)")
    parser.add_argument("--reanalyze", action="store_true",
                        help="execute the notebooks again on the campaign's stored runs and publish their reports "
                             "anew: no device touched, no fio run (after a change of analysis or of the lock)")


def main(args: argparse.Namespace) -> int:
    overrides = execute.parse_overrides(args.parameter)
    published = execute.run_campaign(args.campaign, reports_dir=args.reports, overrides=overrides,
                                     resume=args.resume, force_resume=args.force_resume,
                                     reanalyze=args.reanalyze)
    for path in published:
        print(path)
    return 0
