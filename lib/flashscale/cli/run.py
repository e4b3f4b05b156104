"""Execute a campaign: its notebooks with papermill, parameters from the campaign file, reports as HTML.

Reports go to reports/<campaign>/, measurements to data/campaigns/<campaign>/; each fio run is shown on stderr as
it starts and ends, and the reports written are listed on stdout. Guide: docs/tutorials/quickstart.md; every
option: docs/reference/commands.md#flashscale-run.
"""
from __future__ import annotations

import argparse
import json

from ..errors import ConfigError
from .output import add_format


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("campaign", help="campaign file (YAML), e.g. runners/quickstart.yaml")
    parser.add_argument("--reports", default=None, metavar="DIR", help="where reports go (default: reports/)")
    parser.add_argument("-p", "--parameter", action="append", default=[], metavar="NAME=YAML",
                        help="override one notebook parameter, e.g. -p DEVICES=2 (value read as YAML)")
    parser.add_argument("--resume", action="store_true",
                        help="continue the interrupted run of this campaign: finished runs and notebooks are kept")
    parser.add_argument("--force-resume", action="store_true",
                        help="resume even when the campaign file or the machine changed (the report says so)")
    parser.add_argument("--estimate", action="store_true",
                        help="print the device time and the wall time each notebook and the whole campaign will "
                             "take, from its own parameters, and stop: nothing runs")
    parser.add_argument("--dry-run", action="store_true",
                        help="check the campaign as the run would, print the estimate and what it would create and "
                             "run (devices, cgroups, hosts, commands), and stop (as -p DRY_RUN=true)")
    add_format(parser, choices=("table", "json"))  # with --estimate or --dry-run: json, each notebook's too
    parser.add_argument("--budget", metavar="DURATION", default=None,
                        help="refuse a campaign whose estimated wall time cannot fit, e.g. 90m, 2h, 1h30m, 3600, "
                             "saying what it would have to drop")
    parser.add_argument("--reanalyze", action="store_true",
                        help="execute the notebooks again on the campaign's stored runs and publish their reports "
                             "anew: no device touched, no fio run (after a change of analysis or of the lock)")


def show_estimate(args: argparse.Namespace, overrides: dict, budget_s: float | None) -> int:
    """``--estimate``: each notebook's cost and the campaign's, as lines or JSON; 1 where it cannot fit the budget."""
    from ..notebooks import cost, estimate, execute

    each, whole = execute.estimate_campaign(args.campaign, overrides)
    said = cost.fits(whole, budget_s, each) if budget_s is not None else None
    if args.format == "json":
        print(json.dumps({**whole.json(), "notebooks": {name: c.json() for name, c in each.items()},
                          "budget_s": budget_s, "fits": said is None, "over_budget": said}, indent=2))
    else:
        print("\n".join(estimate.lines(each, whole)))
        if said:
            print(f"over the budget: {said}")
    return 1 if said else 0


def show_dry_run(args: argparse.Namespace, campaign: dict, values: dict, plans: list, budget_s: float | None) -> int:
    """``--dry-run`` (or DRY_RUN true): the estimate, then each notebook's plan (``execute.campaign_plans``'s), as
    lines or JSON; 1 where the estimate cannot fit the budget."""
    from ..campaigns import dry_run
    from ..notebooks import cost, estimate, execute

    each, whole = execute.priced(values, plans)
    said = cost.fits(whole, budget_s, each) if budget_s is not None else None
    if args.format == "json":
        print(json.dumps({"dry_run": True, "campaign": campaign["campaign"], "created": [], "ran": [],
                          "notebooks": dry_run.as_json(plans), "estimate": {**whole.json(), "notebooks": {
                              name: c.json() for name, c in each.items()}}, "budget_s": budget_s,
                          "fits": said is None, "over_budget": said}, indent=2))
        return 1 if said else 0
    print("\n".join(estimate.lines(each, whole)))
    print(f"dry run of campaign {campaign['campaign']!r}: nothing was touched (nothing created, no command run). "
          "It would:")
    print("\n".join(dry_run.lines(plans)))
    if said:
        print(f"over the budget: {said}")
    return 1 if said else 0


def main(args: argparse.Namespace) -> int:
    from ..notebooks import estimate, execute

    overrides = execute.parse_overrides(args.parameter)
    budget_s = estimate.parse_duration(args.budget) if args.budget is not None else None
    if args.estimate:
        return show_estimate(args, overrides, budget_s)
    if not args.reanalyze:  # checked as the run checks it; a dry run stops here
        campaign, values, plans, asked = execute.campaign_plans(args.campaign, overrides)
        if args.dry_run or asked:
            return show_dry_run(args, campaign, values, plans, budget_s)
    elif args.dry_run:
        raise ConfigError("--reanalyze measures nothing: it has nothing to dry-run; give one of them")
    published = execute.run_campaign(args.campaign, reports_dir=args.reports, overrides=overrides,
                                     resume=args.resume, force_resume=args.force_resume,
                                     reanalyze=args.reanalyze, budget_s=budget_s)
    for path in published:
        print(path)
    return 0
