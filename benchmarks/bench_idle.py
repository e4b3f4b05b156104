"""What holding the CPUs out of deep idle (``system.idle``, CPU_LATENCY_US 0) does to a curve, measured side by side in
one run (``make bench``; needs root for the emulated array).

On two uncapped emulated devices (xfs each), the same read jobs alternate, CPUs held and not:
    1. one device, one job, queue depth 1: held / not held (a run waits on a wake-up at every I/O)
    2. two devices, one job each, against twice one device, held and not: how linear the emulated array is, which
       is what a prediction from one device assumes.
Printed with each side's spread (max / min of its rounds). Target: holding never costs, held / not held >= 0.98
(where the machine has no deep idle state, both are the same run). Each figure is a ratio of things measured here,
now, alternating, on this machine.
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from flashscale.arrays import layouts
from flashscale.arrays.emulated import ArraySpec, EmulatedArray
from flashscale.measure import fio, fio_output
from flashscale.system import idle
from flashscale.system.commands import Runner
from flashscale.system.devices import System
from flashscale.system.teardown import Teardown, manifest_dir

SIZE = 256 * 2**20


def _read(targets, scratch: Path, name: str, latency_us: int | None) -> float:
    job = fio.FioJob("read", 2**20, targets, numjobs=len(targets), runtime_s=3, ramp_s=1, size=SIZE)
    with idle.held(latency_us):
        return fio_output.parse(fio.run(job, scratch / name, Runner()))["bw_bytes"]


def alternate(rounds: int = 4) -> dict[str, list[float]]:
    """Each round: one device held and not, two devices held and not; their bandwidths, bytes/s."""
    runner, system = Runner(), System()
    runs: dict[str, list[float]] = {"one held": [], "one not": [], "two held": [], "two not": []}
    with tempfile.TemporaryDirectory(prefix="flashscale-bench-") as scratch, \
            EmulatedArray(ArraySpec(devices=2, device_size=2**30, read_bps=0, write_bps=0), runner, system) as array:
        teardown = Teardown(manifest_dir() / f"{array.workdir.name}-bench.json", runner, system)
        try:
            jbod = layouts.build("jbod", array.devices, runner, teardown, confirm=[d.id for d in array.devices],
                                 claimed=[d.path for d in array.devices])
            fill = fio.FioJob("write", 2**20, jbod.targets, numjobs=2, size=SIZE, time_based=False, runtime_s=1)
            fio.run(fill, Path(scratch) / "fill", runner)  # every file the reads open, written in full
            for k in range(rounds):
                for held, latency in (("held", 0), ("not", None)):
                    runs[f"one {held}"].append(_read(jbod.targets[:1], Path(scratch), f"one-{held}{k}", latency))
                    runs[f"two {held}"].append(_read(jbod.targets, Path(scratch), f"two-{held}{k}", latency))
        finally:
            teardown.close()
    return runs


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def main() -> int:
    if idle.why_not() is not None:
        print(f"skip CPU latency: {idle.why_not()}")
        return 0
    runs = alternate()
    ratio = _mean(runs["one held"]) / _mean(runs["one not"])
    met = ratio >= 0.98
    print(f"{'ok  ' if met else 'MISS'} one uncapped device, one job: CPUs held / not held = {ratio:.2f} "
          f"(target >= 0.98); held {_mean(runs['one held']) / 1e9:.2f} GB/s, spread "
          f"{max(runs['one held']) / min(runs['one held']):.2f}; not held {_mean(runs['one not']) / 1e9:.2f} GB/s, "
          f"spread {max(runs['one not']) / min(runs['one not']):.2f}")
    for held in ("held", "not"):
        linear = _mean(runs[f"two {held}"]) / (2 * _mean(runs[f"one {held}"]))
        print(f"info two devices, a job each, against twice one (CPUs {held}): {linear:.2f}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
