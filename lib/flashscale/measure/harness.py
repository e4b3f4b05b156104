"""The harness's own ceiling: what a test bed with a known truth carries with its caps lifted, measured first.

A test bed with a known truth (the emulated array, the VM lab's capped devices, the emulated cluster's hosts and
their links) says its devices deliver devices x cap. That holds only where the machine doing the emulating (fio, the
loop devices, qemu-nbd, the namespaces, the CPUs they share) can carry it: on 2 cores, two emulated hosts' fio
servers delivered 178-180 MB/s where their truth was 200. So before anything is held to a truth, the same path is
measured with its caps lifted for a second per direction (``jobs``: the sweep's smallest block size, its largest job
count and queue depth, every direction it moves), and each cap is held only where the devices together ask at most
half of what was carried (``truth.fit``); elsewhere the caps are lowered to fit (``CAP_FIT`` 'lower', the default)
or the campaign is refused (``CAP_FIT`` 'refuse': what the test suite does, so a test held to a cap this machine
cannot carry is skipped with the measured reason instead of failing or passing on a false truth). Where the
emulated cluster's capped links bind (nbd), carrying twice the truth uncapped is not enough: a link moves its cap
only while its sender keeps it busy, so each link is measured again at the cap held (``links_held``) and refused
below 97% of it.

    jobs(sweep, targets)                       the probe's fio job per direction
    measure_local(jobs, folder, runner)        each run here, outside every throttled cgroup: bytes/s per direction
    measure_served(targets, sweep, folder, runner)   each run by fio servers, every host at once (the cluster)
    hold_local(...), hold_cluster(...)         measured, fitted and held: the array's or VM's devices, the cluster's
    links_held(cluster, sweep, bound, ...)     the cluster's capped links measured at their cap, refused if short
    fitted(ceilings, asked, units, policy)     truth.fit of each direction's cap
    write(folder, fits) / read(folder)         harness.json beside the campaign's rows: what was measured and held
    sentences(fits)                            the report's words

The probe's raw files go to ``raw/harness/<direction>/`` like every other run's, so the decision can be checked.
"""
from __future__ import annotations

from dataclasses import asdict, replace
from pathlib import Path
from typing import Callable, Mapping, Sequence

from . import campaign_folder, fio_client as fio_cluster, fio, fio_output, truth
from .fio_client import Endpoint
from .sweep import Sweep
from ..arrays.emulated_cluster import EmulatedCluster
from ..errors import HarnessCeilingError, UnsupportedError
from ..system import netns
from ..system.commands import Runner
from .units import rate

PROBE_RUNTIME_S = 1  # fio's runtime is whole seconds; uncapped, a second tells a ceiling within a few percent
HARNESS_FILE = campaign_folder.HARNESS_JSON
HELD_PROBE_S = 2  # a held link's check: its token bucket's burst (10 ms) is 0.5% of it
LINK_SHORTFALL = 0.03  # a held link that moves under 97% of its cap in the check is not a truth to hold runs to
SERVER_WAIT_S = 10.0  # how long a fio server just started may take to listen
RAW = campaign_folder.raw_dir("harness")
NAME = "flashscale-harness"  # the files a probe writes on a file system are ours by name (a directory's undo)


def directions(sweep: Sweep) -> dict[str, str]:
    """The directions ``sweep``'s data runs move, each with the rw that probes it: random where any of the sweep's
    runs in that direction is (the harness's heaviest), else sequential. None for a metadata sweep."""
    moved: dict[str, bool] = {}
    for rw in sweep.rw:
        for direction in fio_output.DIRECTIONS.get(rw, ()):
            moved[direction] = moved.get(direction, False) or rw.startswith("rand")
    # reads first: fio lays their files out in full before it times them, so the writes that follow overwrite written
    # data, as a campaign's (preconditioned) runs do; a write into fresh files pays the file system's allocation,
    # which no measured run does (xfs: 514 MB/s carried where overwrites carry GB/s, under load)
    order = [d for d in ("read", "write") if d in moved]
    return {d: ("rand" if moved[d] else "") + d for d in order}


def jobs(sweep: Sweep, targets: Sequence[str], runtime_s: int = PROBE_RUNTIME_S) -> dict[str, fio.FioJob]:
    """One fio job per direction ``sweep`` moves, on ``targets``: its smallest block size (the most work for the
    harness per byte), its largest job count (at least one a target) and queue depth, ``runtime_s``, no ramp."""
    return {direction: fio.FioJob(rw, min(sweep.bs), tuple(targets),
                                  numjobs=max(max(sweep.numjobs), len(targets)), iodepth=max(sweep.iodepth),
                                  runtime_s=runtime_s, ramp_s=0, size=sweep.size, ioengine=sweep.ioengine,
                                  direct=sweep.direct, name=NAME)
            for direction, rw in directions(sweep).items()}


def measure_local(probes: Mapping[str, fio.FioJob], folder: Path, runner: Runner) -> dict[str, float]:
    """Each probe run on this machine outside every throttled cgroup (the caps do not hold it): the bytes/s it
    carried in its direction. Raw files under ``folder/raw/harness/<direction>/``."""
    return measured(probes, folder, lambda job, out: fio.run(job, out, runner))


def measured(probes: Mapping[str, fio.FioJob], folder: Path,
             run: Callable[[fio.FioJob, Path], dict]) -> dict[str, float]:
    """Each probe run by ``run(job, raw folder)`` (fio's output back): the bytes/s of its own direction."""
    carried = {}
    for direction, job in probes.items():
        out = Path(folder) / fresh(folder, direction)
        row = fio_output.parse(run(job, out))
        carried[direction] = float(row[f"{direction}_bw_bytes"])
    return carried


def measure_served(targets: Mapping[Endpoint, Sequence[str]], sweep: Sweep, folder: Path,
                   runner: Runner, runtime_s: int = PROBE_RUNTIME_S) -> dict[str, dict[str, float]]:
    """The probes run through fio servers (``measure.fio_client``), every host at once, each on its own ``targets``:
    per direction, the bytes/s each host carried. UnsupportedError, naming the host, when one gave no result."""
    carried: dict[str, dict[str, float]] = {}
    per_host = {endpoint: jobs(sweep, names, runtime_s) for endpoint, names in targets.items()}
    (Path(folder) / RAW).mkdir(parents=True, exist_ok=True)
    for endpoint in per_host:  # a server just started may not listen yet
        fio_cluster.probe(endpoint, runner, Path(folder) / RAW, wait_s=SERVER_WAIT_S)
    for direction in next(iter(per_host.values()), {}):
        out = Path(folder) / fresh(folder, direction)
        outcome = fio_cluster.run({e: probes[direction] for e, probes in per_host.items()}, out, runner)
        failed = {name: why for name, why in outcome.items() if isinstance(why, str)}
        if failed:
            raise UnsupportedError("measuring what the hosts carry with their caps lifted: " + "; ".join(
                f"{name}: {why}" for name, why in failed.items()))
        carried[direction] = {name: float(fio_output.parse(data)[f"{direction}_bw_bytes"])
                              for name, data in outcome.items()}
    return carried


def fresh(folder: Path, direction: str) -> Path:
    """``raw/harness/<direction>`` under ``folder``, or ``<direction>-2``, ... where a probe ran before (a resumed
    campaign probes again)."""
    name, n = RAW / direction, 1
    while (Path(folder) / name).exists():
        n += 1
        name = RAW / f"{direction}-{n}"
    return name


def fitted(ceilings: Mapping[str, float], asked: Mapping[str, float], units: int, policy: str,
           what: str = "device") -> dict[str, truth.Fit]:
    """``truth.fit`` of each direction's asked cap (bytes/s a unit) against the ceiling measured in it."""
    return {d: truth.fit(d, float(asked[d]), units, ceilings[d], policy, what) for d in ceilings if d in asked}


def write(folder: Path, fits: Mapping[str, truth.Fit], name: str = HARNESS_FILE, **context) -> None:
    """harness.json (or ``name``): each direction's fit (asked, ceiling, held), and ``context`` (what was probed)."""
    campaign_folder.write_harness(folder, {"fits": {d: asdict(f) for d, f in fits.items()},
                                           "headroom": truth.HEADROOM, **context}, name)


def read(folder: Path) -> dict[str, truth.Fit]:
    """The fits a campaign's harness.json holds (none when it has none: uncapped, or measured before it existed)."""
    data = campaign_folder.read_harness(folder)
    return {d: truth.Fit(**f) for d, f in data["fits"].items()} if data else {}


def hold_local(sweep: Sweep, targets: Sequence[str], asked: Mapping[str, float], policy: str, folder: Path,
               runner: Runner) -> tuple[dict[str, float], dict[str, float], list[str]]:
    """Measure ``targets`` (each a device at ``asked`` bytes/s per direction) with their caps lifted, and decide the
    caps a truth can hold (``fitted``); a campaign resumed in ``folder`` keeps the caps its rows were measured at
    (harness.json) while this machine still carries them, and is refused otherwise. Returns (cap per direction,
    what was carried per direction, the notes' sentences); nothing measured when no direction is capped."""
    probes = {d: job for d, job in jobs(sweep, targets).items() if asked.get(d, 0) > 0}
    if not probes:
        return {d: float(v) for d, v in asked.items()}, {}, []
    before = read(folder)
    carried = measure_local(probes, folder, runner)
    fits = fitted(carried, asked, len(targets), policy)
    for direction, earlier in before.items():
        if direction in fits and earlier.cap != fits[direction].cap:
            if earlier.cap * len(targets) > truth.HEADROOM * carried[direction]:
                raise HarnessCeilingError(
                    f"this campaign's {direction}s were measured at {earlier.cap:,.0f} bytes/s a device, and this "
                    f"machine now carries {carried[direction]:,.0f} bytes/s of them for {len(targets)} devices with "
                    "the caps lifted, under twice that: its new rows could not be held to the same truth; run it "
                    "afresh")
            fits[direction] = truth.Fit(direction, "device", earlier.asked, len(targets), carried[direction],
                                        earlier.cap)
    write(folder, fits, targets=list(targets), probes={d: job.point for d, job in probes.items()})
    caps = {d: (fits[d].cap if d in fits else float(v)) for d, v in asked.items()}
    return caps, carried, sentences(fits)


def hold_cluster(cluster: EmulatedCluster, sweep: Sweep, policy: str,
                 folder: Path, runner: Runner) -> tuple[dict[str, float], dict[str, dict[str, float]], list[str]]:
    """The emulated cluster's hosts measured with every cap lifted (their devices, their links), all at once, through
    their fio servers, then held again: each direction's truth per host (devices x cap, or the link where its data
    crosses a link capped below that) kept where the hosts together ask at most half of what they carried, else
    lowered to fit, the devices' caps or the links' (``truth.fit``). Returns (the caps per rw of every host's
    devices, what each host carried per direction, the notes' sentences)."""
    asked = {"read": cluster.spec.read_bps, "write": cluster.spec.write_bps}
    link = cluster.network_bw_bytes  # the data a host's link carries, where its data crosses it
    cluster.lift()
    carried = measure_served({Endpoint(h.name, h.host.address, h.port): h.targets for h in cluster.hosts}, sweep,
                             folder, runner)
    hosts, devices = len(cluster.hosts), cluster.spec.devices
    fits = {}
    for direction, by_host in carried.items():
        if asked.get(direction, 0) <= 0:
            continue
        total = sum(by_host.values())
        fits[direction] = (truth.fit(direction, link, hosts, total, policy, "link") if link and link < devices * asked[direction]
                           else truth.fit(direction, asked[direction], hosts * devices, total, policy))
    caps = {d: (f.cap if f.what == "device" else asked[d]) for d, f in fits.items()}
    held = replace(cluster.spec, read_bps=round(caps.get("read", asked["read"])),
                   write_bps=round(caps.get("write", asked["write"])))
    links = [f.cap for f in fits.values() if f.what == "link"]
    cluster.hold(held, min(links) / netns.payload_bps(1.0) if links else cluster.link_bps)
    bound = {d for d, f in fits.items() if f.what == "link"}
    delivered = links_held(cluster, sweep, bound, folder, runner) if bound else {}
    write(folder, fits, f"harness-{cluster.storage}.json", hosts=[h.name for h in cluster.hosts],
          links_held=delivered)
    return held.rw_caps(), carried, sentences(fits)


def links_held(cluster: EmulatedCluster, sweep: Sweep, bound: set[str], folder: Path,
               runner: Runner) -> dict[str, dict[str, float]]:
    """Each host's link measured at the cap now held, in every direction it binds, for ``HELD_PROBE_S``: the bytes
    of data each host moved per second. A link carries its cap only while a sender keeps its token bucket busy, and
    a machine short of CPU time stalls senders longer than the bucket's burst (at half this machine's CPUs the hosts'
    links moved 0.88-0.93 of their cap while uncapped they carried over twice it): a host under ``1 -
    LINK_SHORTFALL`` of its link is refused, whatever ``CAP_FIT`` (a lower cap is no remedy for a stalled sender),
    with HarnessCeilingError naming the host and both rates."""
    link = cluster.network_bw_bytes
    served = {Endpoint(h.name, h.host.address, h.port): h.targets for h in cluster.hosts}
    moved = measure_served(served, sweep, folder, runner, HELD_PROBE_S)
    short = [f"{host}'s {direction}s {rate(bps)} ({bps / link:.3f} of it)"
             for direction, by_host in moved.items() if direction in bound
             for host, bps in by_host.items() if bps < (1 - LINK_SHORTFALL) * link]
    if short:
        raise HarnessCeilingError(
            f"the links' cap of {rate(link)} of data a host cannot be held as a known truth here: measured at that "
            f"cap for {HELD_PROBE_S} s, {'; '.join(short)}, under {1 - LINK_SHORTFALL:g} of the cap: this machine "
            "cannot keep its hosts' senders busy enough to fill their links (lowering the cap is no remedy)")
    return {d: by_host for d, by_host in moved.items() if d in bound}


def sentences(fits: Mapping[str, truth.Fit]) -> list[str]:
    """For the campaign's notes, a sentence per direction whose cap was lowered to what the harness carried; none
    where every cap was held as asked (harness.json says what was carried either way)."""
    return [f"Before measuring, the {f.what}s' {f.direction}s were measured with their caps lifted: {f.why()}."
            for f in fits.values() if f.adjusted]
