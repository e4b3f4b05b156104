"""Monte Carlo of the interval over builds (``analysis.builds.interval_over``): does its 95% cover what it claims?

Each draw: ``builds`` levels log-normal around 1 with standard deviation ``between`` (of the log), ``runs`` runs on
each with mean-1 log-normal noise ``within``; the interval covers when it holds 1, the level the builds are drawn
around. Beside it, the rule it replaced: the builds' means only where the one-way ANOVA's between-build component
came out the larger, else every run (the pretest). Grid: builds 2-3, runs 2, 3, 5, between 0-5%, within 0.5-5%;
``DRAWS`` draws a setting (argv[1], default 3000). Every setting's coverage, with its Monte Carlo standard error, is
kept in ``benchmarks/results/stats/builds-<stamp>.json``; the exit status is 1 where the interval's coverage falls
below 95% by more than 3 standard errors.

Measured at 3,000 draws (2026-12-02, ``builds-20261202T1827Z.json``): the interval over the builds' means 94.4-95.8%
over the 72 settings, the pretest 76.6-96.6% (2 builds) and 78.6-96.0% (3 builds).
"""
from __future__ import annotations

import itertools
import json
import sys
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from flashscale.analysis import builds, stats

GRID = list(itertools.product((2, 3), (2, 3, 5), (0.0, 0.01, 0.02, 0.05), (0.005, 0.02, 0.05)))
CLAIMED = 0.95


def coverage(k: int, n: int, between: float, within: float, draws: int, rng) -> tuple[float, float]:
    """The share of ``draws`` whose interval holds 1: the interval over the builds' means, and the pretest's."""
    means = pretest = 0
    for _ in range(draws):
        levels = np.exp(rng.normal(0.0, between, k))
        groups = [level * np.exp(rng.normal(-within**2 / 2, within, n)) for level in levels]
        _, _, lo, hi = builds.interval_over(groups)
        means += lo <= 1.0 <= hi
        b, w = builds.one_way([np.log(g) for g in groups])
        lo, hi = stats.interval_t(np.array([g.mean() for g in groups]) if b > w else np.concatenate(groups))
        pretest += lo <= 1.0 <= hi
    return means / draws, pretest / draws


def main(argv: list[str]) -> int:
    draws = int(argv[1]) if len(argv) > 1 else 3000
    rng = np.random.default_rng(7)
    error = float(np.sqrt(CLAIMED * (1 - CLAIMED) / draws))
    found, short = [], []
    print(f"builds runs between within  means  pretest   (claimed {CLAIMED:.0%}, Monte Carlo error {error:.2%})")
    for k, n, between, within in GRID:
        means, pretest = coverage(k, n, between, within, draws, rng)
        found.append({"builds": k, "runs": n, "between": between, "within": within, "means": means,
                      "pretest": pretest})
        print(f"{k:6d} {n:4d} {between:7.3f} {within:6.3f}  {means:.3f}  {pretest:.3f}", flush=True)
        if means < CLAIMED - 3 * error:
            short.append(found[-1])
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%MZ")
    out = Path(__file__).resolve().parent / "results" / "stats" / f"builds-{stamp}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"draws": draws, "claimed": CLAIMED, "monte_carlo_error": error, "seed": 7,
                               "settings": found}, indent=1) + "\n")
    print(f"kept in {out}; {len(short)} setting(s) below {CLAIMED:.0%} by more than 3 standard errors")
    return 1 if short else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
