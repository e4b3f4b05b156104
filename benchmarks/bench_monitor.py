"""Benchmark: what monitoring costs. The sampler (``system.monitor.Sampler``) must take under 1% of a core.

    make bench

Two measures, side by side: the sampling thread's own CPU time over the wall time it sampled (at the default
interval of 1 s, and at 0.1 s to magnify it), and a fixed CPU-bound task timed with and without the sampler
running beside it. Not a test: the numbers are printed with the target and the exit status says whether it was met.
"""
from __future__ import annotations

import sys
import time

from flashscale.system import monitor
from flashscale.system.devices import System

TARGET = 0.01  # of one core


def busy_work() -> float:
    """A fixed amount of CPU work; its wall time."""
    start, total = time.perf_counter(), 0
    for i in range(6_000_000):
        total += i * i
    return time.perf_counter() - start


def sampler_share(interval_s: float, seconds: float) -> float:
    """The sampling thread's CPU time over ``seconds`` of sampling every device of this machine."""
    system = System()
    devices = sorted(system.diskstats())
    start = time.monotonic()
    with monitor.Sampler(devices, system, interval_s) as sampler:
        time.sleep(seconds)
    return sampler.cpu_seconds / (time.monotonic() - start)


def main() -> int:
    devices = len(System().diskstats())
    share_1s, share_100ms = sampler_share(1.0, 5.0), sampler_share(0.1, 3.0)
    alone = min(busy_work() for _ in range(3))
    with monitor.Sampler(sorted(System().diskstats()), System(), 1.0):
        beside = min(busy_work() for _ in range(3))
    print(f"sampler, every 1 s, {devices} devices: {share_1s:.4%} of a core (target < {TARGET:.0%})")
    print(f"sampler, every 0.1 s (10x the default rate): {share_100ms:.4%} of a core")
    print(f"a CPU-bound task alone {alone:.3f} s, beside the sampler {beside:.3f} s: ratio {beside / alone:.3f}")
    met = share_1s < TARGET
    print("monitoring target met" if met else "monitoring target MISSED")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
