"""What each device of a layout receives: its own jobs (jbod), a piece of every request, or requests that land on one
member at random, and how unevenly they land.

    route(layout, devices, rw, bs, numjobs, iodepth, chunk)   a ``Route``: how a point's I/O reaches the members
    spread(rates, members)                                    throughput and occupancy of members that share
                                                              requests landing at random (``Spread``)
    submitted(latency, members, jobs, depth, tags)            the same where a member's tags run out and each
                                                              job's requests wait in its own queue (head-of-line)
    chunk_of(layout, chunk_bytes)                             the stripe unit the routing uses
    chunk_for(layout, chunk_bytes)                            the same, or the tool's default, with what was assumed
    chunks_possible(layout, bs, iodepth)                      the stripe units that route a point differently

A stripe cuts its address space into chunks laid over the members in turn (md RAID-0, an LVM stripe, btrfs raid0
with its fixed 64 KiB stripe, ``BTRFS_STRIPE``). A request of ``bs`` bytes lands on ``ceil(bs / chunk)``
members, at most all N (``per_request``), each receiving a piece of bs / that many bytes:

    bs >= N x chunk          every member gets a piece of every request: each has all k = numjobs x iodepth
                             requests in flight ("every member"), deterministically
    random, bs < N x chunk   each request lands on ``per_request`` members chosen by its offset, at random: with k
                             in flight the members hold them unevenly ("at random")
    sequential               a job's iodepth requests are consecutive, so they lie in a window of iodepth x bs
                             bytes over ceil(window / chunk) members: a job with a window smaller than a chunk keeps
                             one member busy at a time (its whole iodepth on it), and jobs, starting at independent
                             offsets, land on the members at random as whole windows

Random landing: requests (or a job's windows) are customers of a closed network of N identical members, each
completing its work at the rate the single device's curve gives at its occupancy (``analysis.prediction.curve``); every
completion is replaced at once by a new request that lands on a member at random, as fio keeps its iodepth. The
occupancy is then the network's stationary distribution, which has a product form: P(n_1..n_N) is proportional to
the product over members of prod_{j=1..n_i} 1 / (N x rate(j)). ``spread`` computes it exactly, by convolution
(Buzen's algorithm), not by simulation: throughput = G(K-1) / G(K), the expected occupancy of the busiest member
(balls into bins, with the queueing: requests wait longer on a member that holds more, so it holds more) from
P(max <= m) = G_m(K) / G(K), G_m counting only occupancies up to m. Where a member is latency-bound at every
occupancy (rate proportional to it) the distribution is the balls-into-bins multinomial and the throughput is
k x bs / latency whatever the unevenness; where members saturate, the busiest ones hold requests the idle ones
could have served. The product form is exact for members whose service times are exponential; null_blk's fixed
latency queues less, and a seeded simulation of 4 members with 8 tags each (tests/test_routing.py) gave 2-4%
more throughput than it at 24-64 requests in flight. A request spread over several but not all members
completes when its last piece does; the pieces are taken to land independently (the wait for the last piece is
not modelled).

Head-of-line blocking: a member holds at most its queue's tags (sysfs ``nr_requests``); through md a request that
finds none free puts the job that submitted it to sleep (fio's ``io_submit``), and its next requests, bound for idle
members, wait behind it. Where more are in flight than a member's tags, ``submitted`` follows each job's queue in a
seeded event simulation (short: 20,000 completions); two members of one tag serve 1.5 requests a service time, as
many as land on distinct members before the first repeat.

The chunk: the layout flashscale built (``layouts.Options.chunk_bytes``, campaign.json), an imported run's
``chunk_bytes`` column, or the user's; else the layout's tool's default, said (``chunk_for``: md's 512 KiB, lvcreate's
64 KiB); None (unknown) takes every request to reach every member, with a note, except a request no larger than the
layout's smallest possible chunk (``Descriptor.least_chunk_bytes``, a page): it reaches one member whatever the chunk.
``chunks_possible`` lists the stripe units a layout could have that route a point differently, which the
prediction's interval spans where the chunk was not given (``analysis.prediction.predict``). What a
layout is (per device or a stripe, its own stripe unit) is its descriptor's (``flashscale.layouts``).
"""
from __future__ import annotations

import heapq
import math
from collections import deque
from dataclasses import dataclass

import numpy as np

from ...errors import ConfigError
from ...layouts import describe

SEQUENTIAL = ("read", "write", "rw", "readwrite")


def chunk_of(layout: str, chunk_bytes: int | None) -> int | None:
    """The stripe unit a layout's requests are routed by (``Descriptor.stripe_unit``): its own where it has one
    (btrfs's 64 KiB for its raid profiles), else ``chunk_bytes`` (None: unknown)."""
    return describe(layout).stripe_unit(chunk_bytes)


def chunk_for(layout: str, chunk_bytes: int | None) -> tuple[int | None, str]:
    """The stripe unit to route by and what was assumed, in words (``Descriptor.assumed_chunk``): the layout's own
    or ``chunk_bytes`` (""), else its tool's default ("md's default chunk (mdadm 3.1 and later) 512 KiB taken: no
    chunk given"), else None (unknown)."""
    return describe(layout).assumed_chunk(chunk_bytes)


def chunks_possible(layout: str, bs: int, iodepth: int) -> list[int]:
    """The stripe units ``layout`` could have, as far as routing a point of ``bs`` at ``iodepth`` can tell them
    apart: powers of two from its smallest (``least_chunk_bytes``) to the first at least iodepth x bs (any larger
    routes alike: every request, every job's window, on one member)."""
    least = describe(layout).least_chunk_bytes
    top = max(least, bs * iodepth)
    return [least * 2**k for k in range(int(math.ceil(math.log2(top / least))) + 1)]


def jobs_per_device(numjobs: int, devices: int) -> list[int]:
    """The jobs each device of a jbod runs: fio's spread over targets (``fio.Job.jobs_per_target``), earlier
    devices take the remainder."""
    return [numjobs // devices + (1 if i < numjobs % devices else 0) for i in range(devices)]


@dataclass(frozen=True)
class Route:
    """How one point's I/O reaches the members. ``kind``: "own jobs" (each device runs ``jobs`` of its own),
    "every member" (each member has ``per_member`` pieces in flight), or "at random" (``customers`` units, each
    ``weight`` pieces in flight on one member, land at random). ``piece_bytes``: what a member receives of one
    request; ``per_request``: how many members a request reaches."""

    kind: str
    members: int
    piece_bytes: float
    per_request: int
    jobs: tuple[int, ...] = ()
    per_member: float = 0.0
    customers: int = 0
    weight: float = 1.0
    note: str = ""

    @property
    def mean_outstanding(self) -> float:
        """Pieces in flight on a member, on average."""
        if self.kind == "own jobs":
            return float(np.mean(self.jobs))  # jobs; the caller multiplies by iodepth
        if self.kind == "every member":
            return self.per_member
        return self.customers * self.weight / self.members


def route(layout: str, devices: int, rw: str, bs: int, numjobs: int, iodepth: int, chunk: int | None) -> Route:
    """The ``Route`` of one point of ``layout`` on ``devices`` devices (module docstring)."""
    if describe(layout).per_device:
        return Route("own jobs", devices, bs, 1, jobs=tuple(jobs_per_device(numjobs, devices)))
    outstanding = numjobs * iodepth
    least = describe(layout).least_chunk_bytes
    note = ""
    if chunk is None and bs <= least:  # whatever the chunk, no request spans two members
        chunk, note = least, (f"a request of {bs} bytes, no larger than the least chunk possible ({least} bytes), "
                              "reaches one member whatever the chunk")
    elif chunk is None:
        return Route("every member", devices, bs / devices, devices, per_member=outstanding,
                     note="stripe unit not known: each request taken to reach every member")
    per_request = min(devices, math.ceil(bs / chunk))
    piece = bs / per_request
    if per_request == devices:
        return Route("every member", devices, piece, per_request, per_member=outstanding)
    if rw in SEQUENTIAL:
        window = min(devices, math.ceil(iodepth * bs / chunk))
        if window == devices:
            return Route("every member", devices, piece, per_request, per_member=outstanding * per_request / devices)
        return Route("at random", devices, piece, per_request, customers=numjobs * window,
                     weight=iodepth * per_request / window, note=note)
    return Route("at random", devices, piece, per_request, customers=outstanding * per_request, note=note)


@dataclass(frozen=True)
class Spread:
    """Members sharing customers that land at random: the throughput (in the rate's units), the mean and the
    expected busiest member's occupancy (customers; NaN above ``BUSIEST_UP_TO``), and the expected count of members
    holding any."""

    throughput: float
    mean: float
    busiest: float
    busy_members: float


EXACT_UP_TO = 2048  # customers spread exactly; more are taken evenly over the members (``spread``)
BUSIEST_UP_TO = 256  # customers whose busiest member is computed (one convolution per occupancy: slow beyond)


def _power(f: np.ndarray, members: int) -> tuple[np.ndarray, float]:
    """The ``members``-fold convolution of ``f`` (truncated to its length) as (vector, log of its scale): the true
    terms are vector x exp(scale). Repeated squaring, each step rescaled to its largest term so nothing overflows."""
    size = len(f)
    result, result_log = np.zeros(size), 0.0
    result[0] = 1.0
    power, power_log, n = f.copy(), 0.0, members
    while n:
        if n & 1:
            result = np.convolve(result, power)[:size]
            top = result.max()
            result, result_log = result / top, result_log + power_log + np.log(top)
        n >>= 1
        if n:
            power = np.convolve(power, power)[:size]
            top = power.max()
            power, power_log = power / top, 2 * power_log + np.log(top)
    return result, result_log


def _log_term(vector: tuple[np.ndarray, float], index: int) -> float:
    value = vector[0][index]
    return np.log(value) + vector[1] if value > 0 else -np.inf


def spread(rates, members: int, busiest: bool = True) -> Spread:
    """K = len(``rates``) customers landing at random on ``members`` identical members whose completion rate with n
    of them is ``rates[n - 1]`` (the closed network's product form, module docstring): throughput = the sum over
    members of the expected rate = G(K - 1) / G(K) in the units of the rates, the mean occupancy K / N, the expected
    busiest member's occupancy (sum over m of P(max > m), P(max <= m) = G_m(K) / G(K); NaN when not ``busiest``)
    and the expected number of members holding any (N x (1 - f(0) G_{N-1}(K) / G_N(K))). Above ``EXACT_UP_TO``
    customers each member is taken at the mean occupancy (there every member holds many: even)."""
    rates = np.asarray(rates, dtype=float)
    customers = len(rates)
    if customers == 0:
        return Spread(0.0, 0.0, 0.0, 0.0)
    mean = customers / members
    if members == 1 or customers > EXACT_UP_TO:
        even = members * rates[max(1, round(mean)) - 1]
        return Spread(float(even), mean, mean if members == 1 else np.nan, float(min(members, customers)))
    if not np.isfinite(rates).all() or (rates < 0).any():
        raise ConfigError("a member's rate must be finite and not below 0 to spread requests over it")
    if (rates == 0).any():  # a member that stops at some occupancy gathers every request in the end
        return Spread(0.0, mean, np.nan, np.nan)
    scale = rates.max()  # each member's visit ratio 1 / N left out of f: a factor N^-K common to every state of K
    logs = np.concatenate([[0.0], -np.cumsum(np.log(rates / scale))])  # so nothing underflows at many customers
    f = np.exp(logs - logs.max())
    total = _power(f, members)
    throughput = np.exp(_log_term(total, customers - 1) - _log_term(total, customers)) * scale * members
    rest = _power(f, members - 1)
    empty = np.exp(np.log(f[0]) + _log_term(rest, customers) - _log_term(total, customers))
    most = _busiest(f, members, customers, total) if busiest else np.nan
    return Spread(float(throughput), mean, most, float(members * (1 - min(1.0, empty))))


def _busiest(f: np.ndarray, members: int, customers: int, total: tuple[np.ndarray, float]) -> float:
    """The expected occupancy of the busiest member: sum over m >= 0 of P(max > m); NaN above ``BUSIEST_UP_TO``."""
    if customers > BUSIEST_UP_TO:
        return np.nan
    least = math.ceil(customers / members)  # no member can hold fewer at the busiest
    expected = float(least)
    for m in range(least, customers):
        capped = _power(np.where(np.arange(customers + 1) <= m, f, 0.0), members)
        below = np.exp(_log_term(capped, customers) - _log_term(total, customers))
        expected += 1.0 - min(1.0, below)
        if below > 1 - 1e-9:
            break
    return expected


def submitted(latency_s, members: int, submitters: int, depth: int, tags: int, seed: int = 0,
              completions: int = 20000) -> float:
    """Requests a second when ``submitters`` jobs each keep ``depth`` requests in flight, each request landing on
    one of ``members`` at random, a member serving at most ``tags`` at once, each for ``latency_s[n - 1]`` seconds
    when it serves n: a seeded event simulation of ``completions`` completions. A job's requests wait in its own
    queue, in order: when the first lands on a member with no free tag the job's submission sleeps until that
    member frees one (fio's io_submit through md to a member whose tags are taken: head-of-line blocking), and a
    member frees its tags to the jobs waiting for it in the order they came."""
    rng = np.random.default_rng(seed)
    latency = np.asarray(latency_s, dtype=float)
    busy, waiting = [0] * members, [deque() for _ in range(members)]
    queue = [deque(int(m) for m in rng.integers(members, size=depth)) for _ in range(submitters)]
    blocked: list[int | None] = [None] * submitters
    events: list[tuple[float, int, int]] = []

    def advance(job: int, now: float) -> None:
        while queue[job]:
            member = queue[job][0]
            if busy[member] >= tags:
                blocked[job] = member
                waiting[member].append(job)
                return
            queue[job].popleft()
            busy[member] += 1
            heapq.heappush(events, (now + latency[busy[member] - 1], member, job))

    for job in range(submitters):
        advance(job, 0.0)
    now, done, warm, started = 0.0, 0, completions // 10, 0.0
    while done < completions + warm:
        now, member, job = heapq.heappop(events)
        busy[member] -= 1
        done += 1
        if done == warm:
            started = now
        queue[job].append(int(rng.integers(members)))
        if blocked[job] is None:
            advance(job, now)
        if waiting[member] and busy[member] < tags:
            woken = waiting[member].popleft()
            blocked[woken] = None
            advance(woken, now)
    return completions / (now - started)
