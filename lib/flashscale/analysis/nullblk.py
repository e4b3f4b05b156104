"""The SSD you can reason about: the throughput null_blk devices deliver, known before anything runs.

A null_blk device made by ``flashscale.system.nullblk`` (timer completions, ``irqmode=2``) completes every request
``latency_ns`` after the driver took it, holds at most ``queue_depth`` requests at a time (the tags of its one
submission queue), and with ``mbps`` moves at most that much a second. No hidden device lies behind it, so fio's
throughput follows Little's law, capped:

    jobs_d         numjobs spread over the devices as fio spreads jobs over targets (the first take the remainder)
    outstanding_d  min(jobs_d x iodepth, queue_depth)            requests in flight on device d
    bw_d           min(cap, outstanding_d x bs / latency)        bytes/s; no cap without mbps
    bw             the sum of bw_d over the devices

Against iodepth (or numjobs) the curve rises in proportion, then is flat from the knee on (``knee_iodepth``: the
smallest iodepth at which every device with jobs is at its ceiling, its queue full or its cap reached).

The cap is null_blk's budget, not mbps x 10**6: 50 times a second (``TICKS_PER_S``) the device's budget is set to
(2**20 // 50) x mbps bytes (``tick_bytes``, the kernel's ``mb_per_tick``), and a request that would overdraw it waits
for the next tick. Requests of ``bs`` bytes therefore pass floor(tick_bytes / bs) at a tick:

    cap = TICKS_PER_S x floor(tick_bytes / bs) x bs      mbps=2, bs=4096: 50 x 10 x 4096 = 2_048_000 bytes/s

A request larger than a whole tick's budget would wait for ever (the budget is reset, never accumulated), so the
curve refuses such a bs, and ``flashscale.system.nullblk`` caps a capped device's requests (``max_sectors``) below it.

What a real machine adds to every request (submitting, completing and reaping it) only lengthens the latency, so a
measurement lies at or below this curve; how far below under the VM lab's TCG is in the README ("The SSD you can
reason about"). Pure functions, no I/O; sizes in bytes, times in nanoseconds, bandwidth in bytes/s.
"""
from __future__ import annotations

import math
from fractions import Fraction

from ..errors import ConfigError

TICKS_PER_S = 50  # null_blk resets a capped device's budget 50 times a second (system.nullblk.TICKS_PER_S too)
NS_PER_S = 10**9


def _whole(name: str, value: object) -> int:
    """``value`` if it is a positive whole number, else ConfigError naming it."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"{name}={value!r} must be a positive whole number")
    return value


def tick_bytes(mbps: int) -> int:
    """The budget a device capped at ``mbps`` gets at every tick: (2**20 // TICKS_PER_S) x mbps bytes."""
    return 2**20 // TICKS_PER_S * _whole("mbps", mbps)


def cap_bytes(mbps: int | None, bs: int) -> float:
    """The most bytes/s a device capped at ``mbps`` moves in requests of ``bs`` bytes: TICKS_PER_S x the requests a
    tick's budget holds x bs; infinite without ``mbps`` (None). ConfigError when one request overdraws a whole tick."""
    bs = _whole("bs", bs)
    if mbps is None:
        return math.inf
    if bs > tick_bytes(mbps):
        raise ConfigError(f"bs={bs} is more than the {tick_bytes(mbps)} bytes a tick of mbps={mbps} allows: such a "
                          "request never completes on null_blk")
    return float(TICKS_PER_S * (tick_bytes(mbps) // bs) * bs)


def jobs_per_device(numjobs: int, devices: int) -> list[int]:
    """fio's jobs over the devices, one target each: evenly, the first devices taking the remainder."""
    numjobs, devices = _whole("numjobs", numjobs), _whole("devices", devices)
    return [numjobs // devices + (1 if d < numjobs % devices else 0) for d in range(devices)]


def expected_bw(bs: int, numjobs: int, iodepth: int, latency_ns: int, queue_depth: int, mbps: int | None = None,
                devices: int = 1) -> float:
    """The bytes/s fio moves on ``devices`` null_blk devices alike: per device,
    min(cap, min(jobs on it x iodepth, queue_depth) x bs / latency), summed (``cap_bytes``; the module's docstring)."""
    bs, iodepth = _whole("bs", bs), _whole("iodepth", iodepth)
    latency_ns, queue_depth = _whole("latency_ns", latency_ns), _whole("queue_depth", queue_depth)
    cap = cap_bytes(mbps, bs)
    total = 0.0
    for jobs in jobs_per_device(numjobs, devices):
        outstanding = min(jobs * iodepth, queue_depth)
        total += min(cap, outstanding * bs * NS_PER_S / latency_ns)
    return total


def knee_iodepth(bs: int, numjobs: int, latency_ns: int, queue_depth: int, mbps: int | None = None,
                 devices: int = 1) -> int:
    """The smallest iodepth from which ``expected_bw`` no longer grows: every device with jobs has either its queue
    full or its cap reached. A device with j jobs needs j x iodepth >= min(queue_depth, cap x latency / bs)."""
    bs, latency_ns, queue_depth = _whole("bs", bs), _whole("latency_ns", latency_ns), _whole("queue_depth", queue_depth)
    needed = Fraction(queue_depth)
    if mbps is not None:  # requests in flight at which the cap binds: exact, so a knee on the boundary is not missed
        cap_bytes(mbps, bs)  # refuses a bs the cap never lets through
        per_second = TICKS_PER_S * (tick_bytes(mbps) // bs)
        needed = min(needed, Fraction(per_second * latency_ns, NS_PER_S))
    return max([math.ceil(needed / jobs) for jobs in jobs_per_device(numjobs, devices) if jobs] + [1])
