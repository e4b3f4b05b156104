"""What PRECISION buys against a fixed grid of 3 runs (``make bench-cost``): seed 000's questions answered both ways.

A SIMULATED noise source, not yet the emulated array: each run of a device reads its cap times a factor drawn
around 1 (lognormal, ``spread``), so the known mean is the cap; the runs then go through the library's own rules
(``analysis.repetitions.stop_reason``, ``significance.sequential_tax``, ``stats.interval_t``,
``stats.ratio_interval``, ``significance.tax_test`` and ``practical``). The questions, per campaign:

    the single-device baseline (truth: the cap), jbod's efficiency over 2 devices (truth 1.0), btrfs-raid0's tax
    against jbod (truth 8%) and its verdict against a 2% margin (right: tax).

Fixed: 3 runs a point. Precise: each point runs until PRECISION (0.02) or MAX_REPETITIONS (10); btrfs-raid0's point
then goes on while the sequential tax test has not decided. Printed for both, over ``CAMPAIGNS`` campaigns at each
spread: device time (runs x (runtime + ramp) of the quickstart, 5 + 1 s), the coverage of the truth by the 95%
intervals, and the share of right verdicts. Target (issue 42): the same coverage (>= 93%) and right verdicts (>= 95%)
in a third of the device time or less; printed, not enforced, while the noise source is simulated.
"""
from __future__ import annotations

import sys

import numpy as np

from flashscale.analysis import repetitions, significance, stats

CAP = 200e6
TAX = 0.08
RUN_S = 5 + 1  # the quickstart's runtime and ramp
CAMPAIGNS = 40
PRECISION, MOST, FIXED = 0.02, 10, 3


def measure(rng, level: float, devices: int, spread: float, precise: bool, reference=None) -> list[float]:
    """One point's runs: each device at its cap x a factor around 1, summed x ``level``; fixed or until precise
    (and, with ``reference``, until the sequential tax test decides)."""
    def one() -> float:
        return float(level * CAP * rng.lognormal(0, spread, devices).sum())
    runs = [one() for _ in range(FIXED if not precise else 2)]
    while precise:
        said = repetitions.stop_reason(runs, PRECISION, MOST)
        decided = reference is None or significance.sequential_tax(runs, reference, MOST).decided
        if (said != "more" and decided) or len(runs) >= MOST:
            break
        runs.append(one())
    return runs


def campaign(rng, spread: float, precise: bool) -> dict:
    single = measure(rng, 1.0, 1, spread, precise)
    jbod = measure(rng, 1.0, 2, spread, precise)
    btrfs = measure(rng, 1.0 - TAX, 2, spread, precise, reference=jbod if precise else None)
    lo, hi = stats.interval_t(np.array(single))
    e_lo, e_hi = stats.ratio_interval(np.array(jbod), 2 * np.array(single))
    test = significance.tax_test(btrfs, jbod)
    return {"device_s": (len(single) + len(jbod) + len(btrfs)) * RUN_S,
            "covered": [lo <= CAP <= hi, e_lo <= 1.0 <= e_hi, test.lo <= TAX <= test.hi],
            "right": significance.practical(test) == "tax"}


def main() -> int:
    for spread in (0.005, 0.02):
        found = {}
        for precise in (False, True):
            rng = np.random.default_rng(0)
            done = [campaign(rng, spread, precise) for _ in range(CAMPAIGNS)]
            found[precise] = (np.mean([d["device_s"] for d in done]), np.mean([d["covered"] for d in done]),
                              np.mean([d["right"] for d in done]))
        (fixed_s, fixed_cov, fixed_right), (ours_s, ours_cov, ours_right) = found[False], found[True]
        print(f"info cap varying {spread:.1%} run to run, {CAMPAIGNS} campaigns each (SIMULATED noise source): "
              f"fixed 3 runs {fixed_s:.0f} s of device time, coverage {fixed_cov:.1%}, right verdicts "
              f"{fixed_right:.0%}; PRECISION={PRECISION} {ours_s:.0f} s ({ours_s / fixed_s:.2f} x), coverage "
              f"{ours_cov:.1%}, right verdicts {ours_right:.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
