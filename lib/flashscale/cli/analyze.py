"""Baseline, best bandwidth, scaling efficiency and tax from a results table (Parquet or CSV).

One row per (layout, devices, rw), and per bs with --by bs: best_bw_bytes, best_bs, best_numjobs, best_iodepth,
baseline_bw_bytes, efficiency = best / (devices x baseline), tax = 1 - best / best of the reference layout with
the same devices and rw. Rows whose ``warmup`` column is true are ignored.
"""
from __future__ import annotations

import argparse
import sys

from .. import analysis, results


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", help="results table: .parquet or .csv (or a campaign directory)")
    parser.add_argument("--reference", required=True, metavar="LAYOUT", help="layout the tax is measured against")
    parser.add_argument("--baseline-bs", type=int, default=2**20, metavar="BYTES",
                        help="block size of the single-device baseline, bytes (default 1048576)")
    parser.add_argument("--by", choices=["bs"], action="append", default=[], help="also group by this column")
    parser.add_argument("--format", choices=["table", "csv"], default="table", help="output format")


def main(args: argparse.Namespace) -> int:
    frame = results.load(args.results)
    summary = analysis.summarize(frame, reference=args.reference, baseline_bs=args.baseline_bs, by=tuple(args.by))
    if args.format == "csv":
        summary.to_csv(sys.stdout, index=False)
    else:
        print(summary.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    return 0
