"""Baseline, best bandwidth, scaling efficiency and tax from a results table (Parquet or CSV).

One row per (layout, devices, rw), and per bs with --by bs: best_bw_bytes, best_bs, best_numjobs, best_iodepth,
baseline_bw_bytes, efficiency = best / (devices x baseline), tax = 1 - best / best of the reference layout with
the same devices and rw, each with a confidence interval (*_lo, *_hi) over the repetitions. Rows whose ``warmup``
column is true are ignored. --fit adds the knee and the Universal Scalability Law fitted against numjobs;
--ceilings FILE (YAML, see flashscale.ceilings.Ceilings) adds the expected ceiling, the binding limit and the
fraction of it reached.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

from ..analysis import core as analysis, ceilings, scaling, stats
from ..measure import results
from ..errors import ConfigError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", help="results table: .parquet or .csv (or a campaign directory)")
    parser.add_argument("--reference", required=True, metavar="LAYOUT", help="layout the tax is measured against")
    parser.add_argument("--baseline-bs", type=int, default=analysis.BASELINE_BS, metavar="BYTES",
                        help=f"block size of the single-device baseline, bytes (default {analysis.BASELINE_BS})")
    parser.add_argument("--by", choices=analysis.BY_CHOICES, action="append", default=[], help="also group by this column")
    parser.add_argument("--format", choices=["table", "csv"], default="table", help="output format")
    parser.add_argument("--fit", action="store_true",
                        help="add the knee and the USL fit against numjobs (knee_numjobs, usl_sigma, usl_kappa, "
                             "usl_peak_numjobs, usl_r2, with _lo/_hi; fit_note says why a fit was refused)")
    parser.add_argument("--ceilings", metavar="FILE", default=None,
                        help="YAML file of ceiling parameters: adds the expected ceiling, the binding limit and "
                             "the fraction of it reached")
    parser.add_argument("--confidence", type=float, default=0.95, help="confidence of the _lo/_hi intervals")


def _ceilings_file(path: str) -> dict:
    file = Path(path)
    if not file.is_file():
        raise ConfigError(f"ceilings file {path!r} does not exist")
    try:
        return yaml.safe_load(file.read_text()) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"ceilings file {path!r} is not valid YAML: {exc}") from None


def main(args: argparse.Namespace) -> int:
    frame = results.load(args.results)
    by = tuple(args.by)
    summary = stats.summary_intervals(frame, reference=args.reference, baseline_bs=args.baseline_bs, by=by,
                                      confidence=args.confidence)
    if args.fit:
        keys = ["layout", "devices", "rw", *by]
        fits = scaling.fit_table(frame, by=by, confidence=args.confidence)
        summary = summary.merge(fits[[*keys, *scaling.FIT_COLUMNS]], on=keys, how="left", validate="one_to_one")
    if args.ceilings:
        summary = ceilings.ceiling_table(summary, _ceilings_file(args.ceilings))
    if args.format == "csv":
        summary.to_csv(sys.stdout, index=False)
    else:
        print(summary.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    return 0
